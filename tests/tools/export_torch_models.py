#!/usr/bin/python3
"""Exports the small PyTorch models of testdata/models/torch/ (random weights, fixed seed).

usage: /usr/bin/python3 tests/tools/export_torch_models.py [OUTDIR]
  OUTDIR defaults to testdata/models/torch next to this script's tree.

Needs Debian's python3-torch (1.13); CI does not: the exported files are committed. Each
model's input shapes are listed in testdata/models/torch/README.md. Opset 17 (torch 1.13's
highest), which ONNX 1.12 writes as IR version 8.
"""

import os
import sys

import torch
from torch import nn

k_opset = 17


class BasicBlock(nn.Module):
    """ResNet basic block: two 3x3 convs with batch norm and an identity or 1x1 shortcut."""

    def __init__(self, channels_in, channels_out, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(channels_in, channels_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels_out)
        self.conv2 = nn.Conv2d(channels_out, channels_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels_out)
        self.shortcut = nn.Identity()
        if stride != 1 or channels_in != channels_out:
            self.shortcut = nn.Sequential(
                nn.Conv2d(channels_in, channels_out, 1, stride, bias=False),
                nn.BatchNorm2d(channels_out))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + self.shortcut(x))


class SmallResNet(nn.Module):
    """ResNet-18's layout (stem, 4 stages of 2 basic blocks, pooling, classifier) at 1/8 width,
    so the file stays small. BatchNorm1d after the pooling survives export unfused."""

    def __init__(self, width=8, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width),
                                  nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        blocks = []
        channels = width
        for stage in range(4):
            out = width * 2**stage
            blocks.append(BasicBlock(channels, out, 1 if stage == 0 else 2))
            blocks.append(BasicBlock(out, out, 1))
            channels = out
        self.blocks = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.norm = nn.BatchNorm1d(channels)
        self.fc = nn.Linear(channels, classes)

    def forward(self, x):
        y = self.pool(self.blocks(self.stem(x))).flatten(1)
        return torch.softmax(self.fc(self.norm(y)), dim=-1)


class TinyTransformer(nn.Module):
    """Token embedding + learned positions, a 2-layer nn.TransformerEncoder (batch_first,
    multi-head attention, GELU, layer norm), mean pooling and a classifier."""

    def __init__(self, vocab=100, d_model=32, heads=4, layers=2, max_len=64, classes=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.position = nn.Parameter(torch.randn(1, max_len, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=64, dropout=0.0,
                                           activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, classes)

    def forward(self, tokens):
        x = self.embed(tokens) + self.position[:, :tokens.shape[1]]
        x = self.encoder(x)
        return self.head(x.mean(dim=1))


class LstmTagger(nn.Module):
    """A 2-layer LSTM over a feature sequence with a per-step linear head; returns the
    final hidden and cell states too, as streaming models do."""

    def __init__(self, features=20, hidden=24, layers=2, classes=6):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, layers, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x, h0, c0):
        y, (h, c) = self.lstm(x, (h0, c0))
        return self.head(y), h, c


def randomise_batch_norm(model):
    """Fresh BatchNorm statistics are 0/1, which would make normalisation an identity; give
    them random values so the exported graph computes something non-trivial."""
    for module in model.modules():
        if isinstance(module, (nn.BatchNorm1d, nn.BatchNorm2d)):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 1.5)
            module.weight.data.uniform_(0.5, 1.5)
            module.bias.data.uniform_(-0.2, 0.2)


def export(model, args, path, input_names, output_names, dynamic_axes):
    model.eval()
    # Not under torch.no_grad(): without autograd, nn.TransformerEncoderLayer takes its fused
    # fast path (aten::_transformer_encoder_layer_fwd), which has no ONNX export.
    torch.onnx.export(model, args, path, opset_version=k_opset, input_names=input_names,
                      output_names=output_names, dynamic_axes=dynamic_axes,
                      do_constant_folding=True)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = argv[0] if argv else os.path.join(root, "testdata", "models", "torch")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)

    resnet = SmallResNet()
    randomise_batch_norm(resnet)
    export(resnet, (torch.randn(1, 3, 64, 64),), os.path.join(out, "resnet_small.onnx"),
           ["image"], ["probabilities"], {"image": {0: "batch"}, "probabilities": {0: "batch"}})

    transformer = TinyTransformer()
    export(transformer, (torch.randint(0, 100, (1, 16)),),
           os.path.join(out, "transformer_encoder.onnx"), ["tokens"], ["logits"],
           {"tokens": {0: "batch", 1: "sequence"}, "logits": {0: "batch"}})

    lstm = LstmTagger()
    export(lstm, (torch.randn(1, 10, 20), torch.zeros(2, 1, 24), torch.zeros(2, 1, 24)),
           os.path.join(out, "lstm_tagger.onnx"), ["features", "h0", "c0"],
           ["tags", "hn", "cn"], {"features": {0: "batch", 1: "steps"}, "h0": {1: "batch"},
                                  "c0": {1: "batch"}, "tags": {0: "batch", 1: "steps"}})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
