"""Exports the models of testdata/models/dynamo/ with PyTorch 2.x's dynamo exporter
(`torch.onnx.export(..., dynamo=True)`), as users' exports are written today (issue 45 item 4).

usage: ~/.cache/npucc-deps/venv-peers/bin/python tests/tools/export_dynamo_models.py [OUTDIR]
  OUTDIR defaults to testdata/models/dynamo next to this script's tree.

Runs in the peers bench venv (tests/bench/peers/requirements.txt pins torch 2.15.0,
torchvision 0.29.2, timm 1.0.31, onnxscript 0.7.2, onnx 1.21.0; tests/bench/peers/run creates it): torch
from the index weighs 6 GB with its CUDA libraries, too much to install in CI for four files
under 2 MB, so the exports are committed, as testdata/models/torch's are. Random weights,
seed 0: the same versions write the same files (checked by exporting twice, README.md).

  shufflenet: torchvision's shufflenet_v2_x0_5 (10 classes), image[1,3,64,64] -> logits[1,10]
  encoder:    embedding + 2 nn.TransformerEncoderLayer (d 64, 4 heads, GELU, pre-norm) + head,
              tokens[1,16] int64 -> logits[1,16,500]
  decoder:    embedding + 2 nn.TransformerDecoderLayer with a causal mask over an encoded
              source, src[1,16], tgt[1,16] int64 -> logits[1,16,500]
  lstm:       2-layer nn.LSTM (20 -> 32) over feature frames + a linear tagger,
              features[1,50,20] -> tags[1,50,8]
  convnext:   timm's test_convnext (ConvNeXt at timm's own reduced width and depth: stages
              of 1, 2, 4, 2 blocks, 24 to 64 channels; 7x7 depthwise Conv, LayerNorm over
              channels, tanh GELU, layer scale), 10 classes, image[1,3,160,160] -> logits[1,10]
              (timm 1.0.31, pinned beside torch; no weights needed: timm would fetch them)
"""

import os
import sys

import onnx
import timm
import torch
import torchvision
from torch import nn

VOCAB, D, HEADS, SEQ = 500, 64, 4, 16


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.position = nn.Parameter(torch.randn(1, SEQ, D) * 0.02)
        layer = nn.TransformerEncoderLayer(D, HEADS, 4 * D, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.layers = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(D, VOCAB)

    def forward(self, tokens):
        return self.head(self.layers(self.embed(tokens) + self.position))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.position = nn.Parameter(torch.randn(1, SEQ, D) * 0.02)
        layer = nn.TransformerDecoderLayer(D, HEADS, 4 * D, dropout=0.0, batch_first=True)
        self.layers = nn.TransformerDecoder(layer, 2)
        self.head = nn.Linear(D, VOCAB)

    def forward(self, src, tgt):
        memory = self.embed(src) + self.position
        causal = torch.triu(torch.full((SEQ, SEQ), float("-inf")), diagonal=1)
        # tgt_is_causal: said, not detected (detection compares the mask's values, a
        # data-dependent branch torch.export refuses).
        return self.head(self.layers(self.embed(tgt) + self.position, memory, tgt_mask=causal,
                                     tgt_is_causal=True))


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(20, 32, num_layers=2, batch_first=True)
        self.tags = nn.Linear(32, 8)

    def forward(self, features):
        out, _ = self.lstm(features)
        return self.tags(out)


def convnext():
    """timm's test_convnext with its layer scales drawn from 0.05..0.5, as trained ConvNeXts
    hold them: timm initialises them to 1e-6 for training, which would leave every block an
    identity (its branch scaled by a float16 subnormal) and the export a stem and a head."""
    model = timm.create_model("test_convnext", num_classes=10)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith(".gamma"):
                param.copy_(torch.empty_like(param).uniform_(0.05, 0.5))
    return model


def models():
    tokens = torch.randint(0, VOCAB, (1, SEQ))
    return [
        ("shufflenet", torchvision.models.shufflenet_v2_x0_5(num_classes=10), (torch.randn(1, 3, 64, 64),),
         ["image"], ["logits"]),
        ("encoder", Encoder(), (tokens,), ["tokens"], ["logits"]),
        ("decoder", Decoder(), (tokens, tokens), ["src", "tgt"], ["logits"]),
        ("lstm", Tagger(), (torch.randn(1, 50, 20),), ["features"], ["tags"]),
        # Made last: the four above keep the weights (and bytes) they had before it came.
        ("convnext", convnext(), (torch.randn(1, 3, 160, 160),), ["image"], ["logits"]),
    ]


def without_stack_traces(graph):
    """Drops the exporter's per-node Python stack traces (pkg.torch.onnx.stack_trace): they
    name this script's path and line numbers and the venv's, so the same seed and versions
    would write other bytes from another checkout or after an edit. The rest of the node
    metadata (module names and scopes) stays, as users' exports have it."""
    for node in graph.node:
        kept = [p for p in node.metadata_props if p.key != "pkg.torch.onnx.stack_trace"]
        del node.metadata_props[:]
        node.metadata_props.extend(kept)
        for attr in node.attribute:
            for sub in [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs):
                without_stack_traces(sub)


def save(program, path):
    model = program.model_proto
    without_stack_traces(model.graph)
    for function in model.functions:
        without_stack_traces(function)
    onnx.save(model, path)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "testdata", "models", "dynamo")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    for name, module, args, inputs, outputs in models():
        module.eval()
        path = os.path.join(out, name + ".onnx")
        with torch.no_grad():
            program = torch.onnx.export(module, args, dynamo=True, input_names=inputs, output_names=outputs,
                                        external_data=False, verbose=False)
        save(program, path)
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
