"""npucc.compile() with the accuracy options: the repair's report as a dict on the result,
the same as the CLI's manifest, and a hit that gives it again (issue 29)."""

import subprocess
import sys

import pytest

import npucc
from conftest import SOURCE_DIR


@pytest.fixture
def overflow(tmp_path):
    """The accuracy suite's MLP that overflows float16 in its activations on its samples."""
    folder = tmp_path / "models"
    subprocess.run([sys.executable, str(SOURCE_DIR / "tests/tools/make_accuracy_models.py"),
                    str(folder)], check=True, stdout=subprocess.DEVNULL)
    return folder


def test_a_target_repairs_and_the_report_is_a_dict(tmp_path, cache_dir, overflow):
    options = dict(accelerate_train_mode="fast|step|0.9", sample_inputs=[overflow / "samples"],
                   accuracy_target="cosine>=0.999,nonfinite<=0", cache_dir=cache_dir)
    first = npucc.compile(overflow / "overflow.onnx", tmp_path / "out", **options)
    assert first.cache == "miss"
    report = first.accuracy
    assert report == first.manifest["accuracy"]
    assert report["target"] == "cosine>=0.999,nonfinite<=0"
    # The activation-range rule keeps what overflows on the samples before any search.
    assert sorted(report["activation_ranges"]["kept"]) == ["fc2", "fc3", "relu2"]
    assert report["kept_float32"] == [] and "repair" not in report
    assert report["outputs"][0]["nonfinite"] == 0 and report["outputs"][0]["cosine"] >= 0.999
    again = npucc.compile(overflow / "overflow.onnx", tmp_path / "out", **options)
    assert again.cache == "hit" and again.accuracy == report


def test_no_check_no_report_and_bad_samples_are_an_error(tmp_path, cache_dir, overflow):
    plain = npucc.compile(overflow / "overflow.onnx", tmp_path / "out",
                          accelerate_train_mode="fast|step|0.9", cache_dir=cache_dir)
    assert plain.accuracy is None
    with pytest.raises(npucc.Error, match="x.npy"):
        npucc.compile(overflow / "overflow.onnx", tmp_path / "bad",
                      accelerate_train_mode="fast|step|0.9", check_accuracy=True,
                      sample_inputs=overflow / "bad_shape", cache_dir=cache_dir)
    assert not (tmp_path / "bad").exists()


def _arrays(folder):
    """The overflow model's sample sets (ONNX test data sets) as {input name: array} dicts."""
    import onnx
    from onnx import numpy_helper
    sets = []
    for path in sorted((folder / "samples").glob("test_data_set_*/input_0.pb")):
        tensor = onnx.TensorProto()
        tensor.ParseFromString(path.read_bytes())
        sets.append({"x": numpy_helper.to_array(tensor)})
    return sets


def test_numpy_arrays_are_samples(tmp_path, cache_dir, overflow):
    sets = _arrays(overflow)
    assert len(sets) == 3
    options = dict(accelerate_train_mode="fast|step|0.9", check_accuracy=True,
                   cache_dir=cache_dir)
    from_files = npucc.compile(overflow / "overflow.onnx", tmp_path / "files",
                               sample_inputs=overflow / "samples", no_cache=True, **options)
    first = npucc.compile(overflow / "overflow.onnx", tmp_path / "arrays", sample_inputs=sets,
                          **options)
    assert first.cache == "miss"
    assert first.accuracy["inputs"] == "samples"
    assert first.accuracy["samples"] == len(sets)
    assert first.accuracy["outputs"] == from_files.accuracy["outputs"]
    # The same arrays again: the same samples digest, so a hit.
    again = npucc.compile(overflow / "overflow.onnx", tmp_path / "arrays", sample_inputs=sets,
                          **options)
    assert again.cache == "hit" and again.accuracy == first.accuracy
    one = npucc.compile(overflow / "overflow.onnx", tmp_path / "one", sample_inputs=sets[0],
                        **options)
    assert one.accuracy["samples"] == 1


def test_a_wrong_array_names_the_set_not_a_temporary_file(tmp_path, cache_dir, overflow):
    sets = _arrays(overflow)
    wrong = dict(sets[0], x=sets[0]["x"].astype("float64"))
    with pytest.raises(npucc.Error) as raised:
        npucc.compile(overflow / "overflow.onnx", tmp_path / "out", sample_inputs=[sets[0], wrong],
                      accelerate_train_mode="fast|step|0.9", cache_dir=cache_dir)
    assert "sample_inputs[1] (arrays)" in str(raised.value)
    assert "npucc-samples-" not in str(raised.value)
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="Python objects"):
        npucc.compile(overflow / "overflow.onnx", tmp_path / "out",
                      sample_inputs={"x": [object()]}, accelerate_train_mode="fast|step|0.9",
                      cache_dir=cache_dir)
