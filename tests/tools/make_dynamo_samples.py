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
              each band normalised to zero mean and unit variance over the utterance.
"""

import argparse
import os
import subprocess
import sys

import numpy as np
from onnx import numpy_helper

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


if __name__ == "__main__":
    main()
