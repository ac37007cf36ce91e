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
    assert report["kept_float32"] == ["fc2", "fc3", "relu2"]
    assert report["repair"]["before"][0]["nonfinite"] == 30
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
