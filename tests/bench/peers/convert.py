"""One peer's conversion of one model, as its users call it (run in the bench venv, one
process per conversion, so that its time and peak RSS are its own).

    convert.py TOOL MODEL OUT SAMPLES

TOOL: occ_float16 (onnxconverter-common's convert_float_to_float16), occ_auto
(onnxconverter-common's auto_convert_mixed_precision, fed the first set of SAMPLES, a folder
of test_data_set_*/input_*.pb), ort_float16 (onnxruntime.transformers.float16). Each keeps
the graph's input and output types, as npucc and AutoCast --keep_io_types do. AutoCast and
npucc are command-line tools and run as such (bench.py).
"""

import glob
import os
import sys

import onnx
from onnx import TensorProto, numpy_helper

# auto_convert_mixed_precision's acceptance test of each attempt: np.allclose(float32, mixed,
# rtol, atol) on the feed (its README's example uses rtol=0.01, atol=0.001).
RTOL, ATOL = 0.01, 0.001


def first_feed(samples):
    folder = sorted(glob.glob(os.path.join(samples, "test_data_set_*")))[0]
    feed = {}
    for path in sorted(glob.glob(os.path.join(folder, "input_*.pb"))):
        tensor = TensorProto()
        with open(path, "rb") as f:
            tensor.ParseFromString(f.read())
        feed[tensor.name] = numpy_helper.to_array(tensor)
    return feed


def convert(tool, model, samples):
    if tool == "occ_float16":
        from onnxconverter_common import float16
        return float16.convert_float_to_float16(model, keep_io_types=True)
    if tool == "occ_auto":
        from onnxconverter_common import auto_mixed_precision
        return auto_mixed_precision.auto_convert_mixed_precision(
            model, first_feed(samples), rtol=RTOL, atol=ATOL, keep_io_types=True)
    if tool == "ort_float16":
        from onnxruntime.transformers.float16 import convert_float_to_float16
        return convert_float_to_float16(model, keep_io_types=True)
    raise SystemExit(f"convert.py: unknown tool {tool}")


def main():
    tool, model_path, out, samples = sys.argv[1:5]
    converted = convert(tool, onnx.load(model_path), samples)
    onnx.save(converted, out)


if __name__ == "__main__":
    main()
