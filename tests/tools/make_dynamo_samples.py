#!/usr/bin/python3
"""Realistic sample sets for testdata/models/dynamo (tests/e2e/test_dynamo_exports.sh).

    make_dynamo_samples.py OUT [--sets N] [--seed S]

Writes OUT/MODEL/test_data_set_K/input_*.pb for each model:
  shufflenet: rendered pages of text at 64x64, prepared as ImageNet classifiers read images
              (tests/tools/render_pages.py: /255, mean/std, NCHW);
  encoder:    token ids drawn by Zipf's law (word frequencies), 0..499, a BOS id first;
  decoder:    the same for the source; the target is the source shifted right behind BOS
              (teacher forcing, as a decoder is run in training);
  lstm:       20 log band energies of 25 ms frames every 10 ms of speech-like audio (voiced
              harmonics through two formants, syllable-rate envelope, breath noise, 16 kHz),
              each band normalised to zero mean and unit variance over the utterance;
  convnext:   rendered outdoor scenes at 160x160 (sky, hills, houses, trees, a road, the sun,
              clouds; Pillow, blurred a little, sensor grain), prepared as timm's test_convnext
              reads images: RGB, /255, mean 0.5 and std 0.5, NCHW.
"""

import argparse
import os
import subprocess
import sys

import numpy as np
from onnx import numpy_helper
from PIL import Image, ImageDraw, ImageFilter

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB, SEQ, BOS = 500, 16, 1


def write_set(folder, arrays):
    os.makedirs(folder, exist_ok=True)
    for i, (name, value) in enumerate(arrays.items()):
        with open(os.path.join(folder, "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())


def zipf_tokens(rng):
    ids = np.minimum(rng.zipf(1.3, (1, SEQ)) + 1, VOCAB - 1).astype(np.int64)
    ids[0, 0] = BOS
    return ids


def speech_features(rng, frames=50):
    rate, hop, window = 16000, 160, 400
    t = np.arange(hop * frames + window) / rate
    f0 = rng.uniform(110, 220)
    voiced = sum(np.sin(2 * np.pi * f0 * h * t + rng.uniform(0, 6)) *
                 (np.exp(-((f0 * h - 700) / 300) ** 2) + 0.6 * np.exp(-((f0 * h - 1200) / 400) ** 2))
                 for h in range(1, 20))
    audio = 0.3 * voiced * (0.5 + 0.5 * np.sin(2 * np.pi * 4 * t)) + 0.01 * rng.normal(size=t.size)
    spectra = np.stack([np.abs(np.fft.rfft(audio[k * hop:k * hop + window] * np.hanning(window))) ** 2
                        for k in range(frames)])
    bands = np.stack([b.sum(1) for b in np.array_split(spectra, 20, axis=1)], 1)
    logs = np.log(bands + 1e-6)
    return ((logs - logs.mean(0)) / (logs.std(0) + 1e-6)).astype(np.float32)[None]


def colour(rng, low, high):
    return tuple(int(v) for v in rng.integers(low, high))


def draw_landscape(draw, rng, size):
    """Sky, the sun, clouds, hills and a road: the background of a scene."""
    horizon = int(size * rng.uniform(0.4, 0.65))
    top = np.array(colour(rng, (40, 90, 160), (120, 170, 255)))
    bottom = np.array(colour(rng, (150, 180, 200), (230, 240, 255)))
    for y in range(horizon):
        draw.line([(0, y), (size, y)], fill=tuple(int(v) for v in top + (bottom - top) * y / horizon))
    sun = rng.uniform(0.1, 0.9, 2) * (size, horizon * 0.6)
    r = size * rng.uniform(0.04, 0.09)
    draw.ellipse([sun[0] - r, sun[1] - r, sun[0] + r, sun[1] + r], fill=colour(rng, (230, 200, 80), (256, 250, 200)))
    for _ in range(rng.integers(1, 4)):
        x, y, w = rng.uniform(0, size), rng.uniform(0, horizon * 0.5), size * rng.uniform(0.1, 0.3)
        draw.ellipse([x, y, x + w, y + w * 0.35], fill=colour(rng, (225, 225, 225), (256, 256, 256)))
    for k in range(3):  # hills, far to near, darker as they come closer
        points = [(0, size)] + [(x, horizon - size * rng.uniform(0.0, 0.12) + k * size * 0.08)
                                for x in np.linspace(0, size, 7)] + [(size, size)]
        draw.polygon(points, fill=colour(rng, (40 + 20 * k, 90, 30), (90 + 20 * k, 160, 80)))
    x = rng.uniform(0.3, 0.7) * size
    draw.polygon([(x - 2, horizon + 6), (x + 2, horizon + 6), (x + size * 0.25, size), (x - size * 0.25, size)],
                 fill=colour(rng, (90, 90, 90), (140, 135, 130)))
    return horizon


def scene(rng, size):
    """An outdoor scene: the landscape, then houses and trees along the horizon."""
    image = Image.new("RGB", (size, size))
    draw = ImageDraw.Draw(image)
    horizon = draw_landscape(draw, rng, size)
    for _ in range(rng.integers(3, 8)):
        x, base = rng.uniform(-0.05, 0.95) * size, horizon + rng.uniform(0.05, 0.35) * size
        scale = size * rng.uniform(0.08, 0.2) * base / size
        if rng.random() < 0.5:  # a house: walls, a roof, a door, a window
            draw.rectangle([x, base - scale, x + scale * 1.3, base], fill=colour(rng, (150, 90, 60), (250, 230, 200)))
            draw.polygon([(x - scale * 0.1, base - scale), (x + scale * 0.65, base - scale * 1.7),
                          (x + scale * 1.4, base - scale)], fill=colour(rng, (90, 20, 20), (180, 80, 60)))
            draw.rectangle([x + scale * 0.2, base - scale * 0.55, x + scale * 0.45, base], fill=(70, 45, 30))
            draw.rectangle([x + scale * 0.7, base - scale * 0.75, x + scale * 1.05, base - scale * 0.45],
                           fill=colour(rng, (150, 190, 220), (200, 230, 255)))
        else:  # a tree: a trunk and a crown
            draw.rectangle([x + scale * 0.4, base - scale, x + scale * 0.6, base], fill=(90, 60, 35))
            draw.ellipse([x, base - scale * 2.0, x + scale, base - scale * 0.8],
                         fill=colour(rng, (20, 80, 20), (70, 150, 60)))
    image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.0)))
    pixels = np.asarray(image, np.float32) + rng.normal(0, 3, (size, size, 3))
    x = (np.clip(pixels, 0, 255) / 255.0 - 0.5) / 0.5
    return x.transpose(2, 0, 1)[None].astype(np.float32)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--sets", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    subprocess.run([sys.executable, os.path.join(HERE, "render_pages.py"), os.path.join(args.out, "shufflenet"),
                    "--pages", str(args.sets), "--size", "64,64", "--seed", str(args.seed), "--input", "image"],
                   check=True)
    for k in range(args.sets):
        src = zipf_tokens(rng)
        tgt = np.concatenate([[[BOS]], src[:, :-1]], 1).astype(np.int64)
        write_set(os.path.join(args.out, "encoder", "test_data_set_%d" % k), {"tokens": zipf_tokens(rng)})
        write_set(os.path.join(args.out, "decoder", "test_data_set_%d" % k), {"src": src, "tgt": tgt})
        write_set(os.path.join(args.out, "lstm", "test_data_set_%d" % k), {"features": speech_features(rng)})
    for k in range(args.sets):  # after the others: their sets stay what they were
        write_set(os.path.join(args.out, "convnext", "test_data_set_%d" % k), {"image": scene(rng, 160)})


if __name__ == "__main__":
    main()
