#!/usr/bin/env python3
"""Models for the drift report suite (tests/e2e/test_accuracy_drift.sh), written to OUT:

mobilenet_v3.onnx: torchvision's mobilenet_v3_small, random weights from a fixed seed (no
download), eval mode, exported at opset 13 with a 1x3x160x160 input: squeeze-excitation
blocks, HardSwish/HardSigmoid, a GlobalAveragePool before the classifier, as the real model
the drift report was asked for (issue 43). Its samples: OUT/mobilenet_samples/
test_data_set_{0,1}/input_0.pb, normalised-image-like values.

Usage: make_drift_models.py OUT   (Debian's /usr/bin/python3: torch, torchvision, onnx)
"""

import os
import sys

import numpy as np
import torch
import torchvision
from onnx import numpy_helper


SHRINK_FROM, SHRINK_SCALE = 9, (0.02, 0.05)


def export_mobilenet(path):
    torch.manual_seed(0)
    model = torchvision.models.mobilenet_v3_small(weights=None).eval()
    # BatchNorm statistics as a trained model's (not 0 and 1); from block SHRINK_FROM on,
    # scales far below 1 that shrink the activations block by block, as the trained model's
    # do towards its head: float16 loses them there, not at the first layer.
    with torch.no_grad():
        for index, block in enumerate(model.features):
            for module in block.modules():
                if isinstance(module, torch.nn.BatchNorm2d):
                    module.running_var.uniform_(0.5, 2.0)
                    if index >= SHRINK_FROM:
                        module.weight.uniform_(*SHRINK_SCALE)
                    else:
                        module.running_mean.uniform_(-0.1, 0.1)
    torch.onnx.export(model, torch.zeros(1, 3, 160, 160), path, opset_version=13,
                      input_names=["image"], output_names=["logits"])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    export_mobilenet(os.path.join(out, "mobilenet_v3.onnx"))
    rng = np.random.default_rng(3)
    for i in range(2):
        folder = os.path.join(out, "mobilenet_samples", "test_data_set_%d" % i)
        os.makedirs(folder, exist_ok=True)
        image = rng.normal(0.0, 1.0, (1, 3, 160, 160)).astype(np.float32)
        with open(os.path.join(folder, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(image, "image").SerializeToString())


if __name__ == "__main__":
    main()
