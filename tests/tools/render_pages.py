#!/usr/bin/env python3
"""Pages of printed text as a text detector reads them, for accuracy checks (issue 29).

Renders PAGES pages of lines of printed text (DejaVu fonts of several sizes and styles, dark
ink on light paper, a few lines at slight angles) with Pillow, then prepares each as PaddleOCR
prepares a detector's input: BGR, /255, ImageNet mean and standard deviation, NCHW float32.
Writes OUT/test_data_set_K/input_0.pb (a TensorProto named INPUT) for K from FIRST, the
layout npucc --sample-inputs and tests/oracle/accuracy_check.js read.

Usage: render_pages.py OUT [--pages N] [--first K] [--size H,W] [--seed S] [--input NAME]
                       [--text-lines [--upright]]
Different seeds (or --first) give other pages: samples a repaired graph never saw.
--text-lines writes text-line crops as PaddleOCR's direction classifier reads them instead
(--size 48,192: one line of a page, every other one upside down, resized to height H with
its aspect kept, (x/255 - 0.5)/0.5, padded with zeros to width W); with --upright none is
upside down, as a recogniser reads its lines (PP-OCRv4's: --size 48,320).
"""

import argparse
import os
import random

import numpy as np
from onnx import numpy_helper
from PIL import Image, ImageDraw, ImageFont

FONTS = "/usr/share/fonts/truetype/dejavu"
FACES = ["DejaVuSans.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf", "DejaVuSans-Bold.ttf",
         "DejaVuSerif-Italic.ttf", "DejaVuSansCondensed.ttf"]
WORDS = ("invoice total amount date number customer address order item quantity price tax "
         "payment account reference shipping delivery receipt balance due page report summary "
         "2024 2025 17.50 1,299.00 No. 0042 #A-113 Street Road City Tel: +1 555 0100 "
         "model compile cache graph float precision training schedule step loss").split()
MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)


def sentence(rng, width_chars):
    words = []
    while sum(len(w) + 1 for w in words) < width_chars:
        words.append(rng.choice(WORDS))
    return " ".join(words)


def render(rng, height, width):
    paper = tuple(rng.randint(225, 255) for _ in range(3))
    page = Image.new("RGB", (width, height), paper)
    y = rng.randint(8, 30)
    while y < height - 20:
        size = rng.choice([14, 16, 18, 20, 24, 28, 36])
        font = ImageFont.truetype(os.path.join(FONTS, rng.choice(FACES)), size)
        ink = tuple(rng.randint(0, 70) for _ in range(3))
        x = rng.randint(8, max(9, width // 6))
        text = sentence(rng, max(4, (width - x) // (size // 2 + 1) - rng.randint(0, 12)))
        line = Image.new("RGBA", (width, size * 2), (0, 0, 0, 0))
        ImageDraw.Draw(line).text((x, size // 3), text, font=font, fill=ink + (255,))
        if rng.random() < 0.2:
            line = line.rotate(rng.uniform(-3, 3), resample=Image.BICUBIC)
        page.paste(line, (0, y), line)
        y += int(size * rng.uniform(1.4, 2.6))
    return page


def prepare(page):
    """PaddleOCR's detector preprocessing: BGR, /255, ImageNet mean/std, NCHW."""
    rgb = np.asarray(page, np.float32) / 255.0
    bgr = rgb[:, :, ::-1]
    # PaddleOCR normalises the BGR image with the mean/std listed in RGB order as given.
    normalised = (bgr - MEAN) / STD
    return np.ascontiguousarray(normalised.transpose(2, 0, 1)[None]).astype(np.float32)


def text_line(rng, height, width, flip):
    """One rendered line, cropped to its ink, as PaddleOCR's classifier prepares it."""
    size = rng.choice([20, 24, 28, 36])
    font = ImageFont.truetype(os.path.join(FONTS, rng.choice(FACES)), size)
    paper = tuple(rng.randint(225, 255) for _ in range(3))
    text = sentence(rng, rng.randint(6, 30))
    line = Image.new("RGB", (size * len(text), size * 2), paper)
    ImageDraw.Draw(line).text((4, size // 3), text, font=font, fill=tuple(rng.randint(0, 70) for _ in range(3)))
    ink = np.argwhere(np.asarray(line.convert("L")) < 150)
    (top, left), (bottom, right) = ink.min(0), ink.max(0)
    line = line.crop((max(0, left - 4), max(0, top - 4), right + 5, bottom + 5))
    if flip:
        line = line.rotate(180)
    resized_width = min(width, max(1, int(round(height * line.width / line.height))))
    pixels = np.asarray(line.resize((resized_width, height), Image.BILINEAR), np.float32)
    chw = ((pixels[:, :, ::-1] / 255.0 - 0.5) / 0.5).transpose(2, 0, 1)
    padded = np.zeros((3, height, width), np.float32)
    padded[:, :, :resized_width] = chw
    return padded[None]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--pages", type=int, default=2)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--size", default="640,640")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--input", default="x")
    parser.add_argument("--text-lines", action="store_true")
    parser.add_argument("--upright", action="store_true")
    args = parser.parse_args()
    height, width = (int(v) for v in args.size.split(","))
    rng = random.Random(args.seed)
    for k in range(args.first, args.first + args.pages):
        folder = os.path.join(args.out, "test_data_set_%d" % k)
        os.makedirs(folder, exist_ok=True)
        image = text_line(rng, height, width, k % 2 == 1 and not args.upright) if args.text_lines else prepare(render(rng, height, width))
        tensor = numpy_helper.from_array(image, args.input)
        with open(os.path.join(folder, "input_0.pb"), "wb") as f:
            f.write(tensor.SerializeToString())


if __name__ == "__main__":
    main()
