#!/usr/bin/python3
"""Writes the classic-topology corpus of issue 33 into OUTDIR (tests/e2e/test_classic_models.sh).

usage: /usr/bin/python3 tests/tools/make_classic_corpus.py OUTDIR [--filter REGEX]

- torchvision's alexnet, vgg11, squeezenet1_0, googlenet, resnet18 and mobilenet_v2 with random
  weights (seed 0), exported by Debian's python3-torch at opsets 7 to 11 the way the model zoo's
  models of that era look: inference graphs whose Dropouts stay in (exported with the Dropout
  modules in training mode, which opsets 7 to 11 write as Dropout: always inference there)
  and whose BatchNormalizations are not folded into the convolutions. To keep the files and the
  test small: AlexNet's and VGG's classifiers are 128 wide instead of 4096 (same layers),
  VGG's convolutions a quarter as wide (torchvision's make_layers), MobileNetV2 at width 0.5;
  BatchNormalization statistics measured on variants of the rendered image (as training
  would set them; torchvision's initial ones let MobileNetV2's activations vanish).
  AlexNet and VGG need a 224x224 input (their adaptive pooling to 6x6 / 7x7 only exports when
  it divides the feature map); the others take 64x64.
- models written with onnx.helper for what torch does not write at those opsets: LRN,
  Upsample (nearest and linear, scales as attribute and input), BatchNormalization with
  `spatial` (1 and 0), Pad/Slice attributes, and Dropout with and without a read mask at
  versions 7, 10 and 12.

Every model passes onnx.checker (full check). Each gets a rendered image (text and shapes
drawn with python3-pil in DejaVu Sans, normalised as torchvision does: a realistic input,
not noise) as OUTDIR/NAME.input.pb. OUTDIR/cases.json lists, per model: file, input name,
input file, and "masks": outputs holding a Dropout mask read by the model (see
npucc-precision(7) on their values in ONNX Runtime below opset 12).
"""

import json
import os
import re
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

k_font = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

# (model, opset): a few models per opset, every model at 9 (the model zoo's opset).
k_torch_models = [
    ("alexnet", 7), ("squeezenet1_0", 7), ("mobilenet_v2", 7),
    ("vgg11", 8), ("googlenet", 8),
    ("alexnet", 9), ("vgg11", 9), ("squeezenet1_0", 9), ("googlenet", 9), ("resnet18", 9),
    ("mobilenet_v2", 9),
    ("squeezenet1_0", 10), ("mobilenet_v2", 10),
    ("alexnet", 11), ("googlenet", 11),
]


def rendered_image(size):
    """A 1x3xSIZExSIZE float32 image: a gradient, shapes and text, ImageNet-normalised."""
    from PIL import Image, ImageDraw, ImageFont
    image = Image.new("RGB", (256, 256))
    draw = ImageDraw.Draw(image)
    for y in range(256):
        draw.line([(0, y), (255, y)], fill=(40 + y // 2, 90, 200 - y // 2))
    draw.ellipse([20, 30, 120, 130], fill=(230, 200, 40), outline=(20, 20, 20), width=4)
    draw.rectangle([140, 40, 230, 200], fill=(30, 160, 90))
    font = ImageFont.truetype(k_font, 34)
    draw.text((12, 150), "npucc", font=font, fill=(255, 255, 255))
    draw.text((30, 200), "AlexNet 9", font=ImageFont.truetype(k_font, 22), fill=(10, 10, 10))
    image = image.resize((size, size), Image.BILINEAR)
    pixels = np.asarray(image, dtype=np.float32) / 255.0
    mean = np.array([0.485, 0.456, 0.406], dtype=np.float32)
    std = np.array([0.229, 0.224, 0.225], dtype=np.float32)
    pixels = (pixels - mean) / std
    return np.ascontiguousarray(pixels.transpose(2, 0, 1)[None])


def torch_model(name):
    import torch
    from torch import nn
    from torchvision import models
    from torchvision.models.vgg import make_layers
    torch.manual_seed(0)
    if name == "alexnet":
        model = models.alexnet(num_classes=10)
        model.classifier[1] = nn.Linear(256 * 6 * 6, 128)
        model.classifier[4] = nn.Linear(128, 128)
        model.classifier[6] = nn.Linear(128, 10)
        return model, 224
    if name == "vgg11":
        cfg = [16, "M", 32, "M", 64, 64, "M", 128, 128, "M", 128, 128, "M"]
        model = models.VGG(make_layers(cfg), num_classes=10)
        model.classifier[0] = nn.Linear(128 * 7 * 7, 128)
        model.classifier[3] = nn.Linear(128, 128)
        model.classifier[6] = nn.Linear(128, 10)
        return model, 224
    if name == "squeezenet1_0":
        return models.squeezenet1_0(num_classes=10), 64
    if name == "googlenet":
        return models.googlenet(num_classes=10, aux_logits=False, init_weights=True), 64
    if name == "resnet18":
        return models.resnet18(num_classes=10), 64
    if name == "mobilenet_v2":
        return models.mobilenet_v2(num_classes=10, width_mult=0.5), 64
    raise ValueError(name)


def calibrate_batch_norms(model, size):
    """Sets every BatchNormalization's statistics from a batch of variants of the rendered
    image, as training would have: with torchvision's initial statistics (mean 0, variance 1)
    MobileNetV2's activations shrink block by block to 1e-8, below float16's normal range,
    which no trained model does."""
    import torch
    from torch import nn
    norms = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    if not norms:
        return
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None  # a cumulative average over the batch
    image = torch.from_numpy(rendered_image(size))
    generator = torch.Generator().manual_seed(0)
    batch = torch.cat([image, image.flip(3), image.roll(size // 4, 2), image.roll(size // 3, 3)] +
                      [image + 0.3 * torch.randn(image.shape, generator=generator)
                       for _ in range(4)])
    model.train()
    with torch.no_grad():
        model(batch)
    model.eval()


def export_torch(name, opset, path):
    import io
    import torch
    from torch import nn
    model, size = torch_model(name)
    calibrate_batch_norms(model, size)
    model.eval()
    for module in model.modules():
        if isinstance(module, nn.Dropout):
            module.train()  # written as Dropout, which opsets 7 to 11 only have for inference
    buffer = io.BytesIO()
    torch.onnx.export(model, torch.from_numpy(rendered_image(size)), buffer, opset_version=opset,
                      input_names=["image"], output_names=["logits"],
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=True)
    proto = onnx.load_from_string(buffer.getvalue())
    if not any(node.op_type == "Conv" for node in proto.graph.node):
        raise SystemExit(f"{name}-{opset}: torch wrote no Conv")
    onnx.save(proto, path)
    return size


# The helper models: image 1x3x32x32 -> a Conv (so that fast and fast1 have one to lower) ->
# the op under test -> output. No Conv writes a graph output: the node that does stays
# float32 (it keeps the output's type).

def weights(name, shape, seed):
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)


def conv(inputs, output, channels_in=3, channels_out=8, seed=1):
    name = output + "_w"
    node = helper.make_node("Conv", [inputs, name], [output], kernel_shape=[3, 3], pads=[1] * 4,
                            name=output)
    return node, [weights(name, [channels_out, channels_in, 3, 3], seed)]


def helper_model(opset, nodes, initializers, outputs):
    ir = 3 if opset <= 8 else (4 if opset == 9 else (5 if opset == 10 else 6 if opset == 11
                                                      else 7))
    inputs = [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])]
    if ir == 3:  # IR 3 lists every initializer among the graph inputs, as models then did
        inputs += [helper.make_tensor_value_info(t.name, t.data_type, t.dims)
                   for t in initializers]
    graph = helper.make_graph(
        nodes, "classic", inputs,
        [helper.make_tensor_value_info(name, elem, shape) for name, elem, shape in outputs],
        initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=ir, producer_name="make_classic_corpus")


def lrn_model(opset):
    c, w = conv("image", "c")
    nodes = [c, helper.make_node("LRN", ["c"], ["n"], size=5, alpha=1e-4, beta=0.75, bias=1.0),
             helper.make_node("Relu", ["n"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    return helper_model(opset, nodes, w, [("y", TensorProto.FLOAT, [1, 8, 16, 16])])


def upsample_model(opset, mode):
    c, w = conv("image", "c")
    c2, w2 = conv("u", "v", 8, 4, seed=2)
    scales = [1.0, 1.0, 2.0, 2.0]
    if opset < 9:
        up = helper.make_node("Upsample", ["c"], ["u"], mode=mode, scales=scales)
    else:
        w.append(numpy_helper.from_array(np.array(scales, dtype=np.float32), "scales"))
        up = helper.make_node("Upsample", ["c", "scales"], ["u"], mode=mode)
    nodes = [c, up, c2, helper.make_node("Relu", ["v"], ["y"])]
    return helper_model(opset, nodes, w + w2, [("y", TensorProto.FLOAT, [1, 4, 64, 64])])


def batchnorm_model(opset, spatial):
    c, w = conv("image", "c")
    shape = [8] if spatial else [8, 32, 32]
    rng = np.random.default_rng(3)
    for name, low, high in (("scale", 0.5, 1.5), ("bias", -0.5, 0.5), ("mean", -0.2, 0.2),
                            ("var", 0.5, 2.0)):
        w.append(numpy_helper.from_array(rng.uniform(low, high, shape).astype(np.float32), name))
    nodes = [c, helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"],
                                 ["b"], spatial=spatial, epsilon=1e-3),
             helper.make_node("Relu", ["b"], ["y"])]
    return helper_model(opset, nodes, w, [("y", TensorProto.FLOAT, [1, 8, 32, 32])])


def pad_slice_model(opset):
    c, w = conv("image", "c")
    c2, w2 = conv("s", "v", 8, 4, seed=2)
    nodes = [c, helper.make_node("Pad", ["c"], ["p"], pads=[0, 0, 2, 1, 0, 0, 1, 2],
                                 mode="reflect"),
             helper.make_node("Slice", ["p"], ["s"], starts=[1, 0], ends=[33, 32], axes=[2, 3]),
             c2, helper.make_node("Relu", ["v"], ["y"])]
    return helper_model(opset, nodes, w + w2, [("y", TensorProto.FLOAT, [1, 4, 32, 32])])


def dropout_model(opset, read_mask):
    c, w = conv("image", "c")
    inputs = ["c"]
    attributes = {"ratio": 0.3} if opset < 12 else {}
    if opset >= 12:
        w.append(numpy_helper.from_array(np.array(0.3, dtype=np.float32), "ratio"))
        inputs.append("ratio")
    nodes = [c, helper.make_node("Dropout", inputs, ["d", "mask"] if read_mask else ["d"],
                                 **attributes),
             helper.make_node("Relu", ["d"], ["y"])]
    outputs = [("y", TensorProto.FLOAT, [1, 8, 32, 32])]
    if read_mask:
        # The mask is read as a graph output: Dropout-7's has the data's type, later ones bool.
        outputs.append(("mask", TensorProto.FLOAT if opset < 10 else TensorProto.BOOL,
                        [1, 8, 32, 32]))
    return helper_model(opset, nodes, w, outputs)


def helper_models():
    out = {"lrn-7": lrn_model(7), "lrn-9": lrn_model(9),
           "upsample-7-nearest": upsample_model(7, "nearest"),
           "upsample-7-linear": upsample_model(7, "linear"),
           "upsample-9-nearest": upsample_model(9, "nearest"),
           "batchnorm-7-spatial": batchnorm_model(7, 1),
           "batchnorm-8-per-activation": batchnorm_model(8, 0),
           "pad-slice-7": pad_slice_model(7), "pad-slice-9": pad_slice_model(9)}
    for opset in (7, 10, 12):
        out[f"dropout-{opset}"] = dropout_model(opset, False)
        out[f"dropout-{opset}-mask-read"] = dropout_model(opset, True)
    return out


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    outdir = sys.argv[1]
    pattern = re.compile(sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--filter" else "")
    os.makedirs(outdir, exist_ok=True)
    cases = []
    images = {}

    def image_file(size):
        if size not in images:
            images[size] = os.path.join(outdir, f"image-{size}.pb")
            tensor = numpy_helper.from_array(rendered_image(size), "image")
            with open(images[size], "wb") as f:
                f.write(tensor.SerializeToString())
        return images[size]

    for name, opset in k_torch_models:
        model = f"{name}-{opset}"
        if not pattern.search(model):
            continue
        path = os.path.join(outdir, model + ".onnx")
        size = export_torch(name, opset, path)
        cases.append({"name": model, "file": path, "opset": opset, "input": "image",
                      "input_file": image_file(size), "masks": []})
    for model, proto in helper_models().items():
        if not pattern.search(model):
            continue
        path = os.path.join(outdir, model + ".onnx")
        onnx.save(proto, path)
        masks = [o.name for o in proto.graph.output if o.name == "mask"]
        cases.append({"name": model, "file": path, "opset": proto.opset_import[0].version,
                      "input": "image", "input_file": image_file(32), "masks": masks})
    for case in cases:
        onnx.checker.check_model(onnx.load(case["file"]), full_check=True)
    with open(os.path.join(outdir, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)
    print(f"{len(cases)} models in {outdir}")


if __name__ == "__main__":
    main()
