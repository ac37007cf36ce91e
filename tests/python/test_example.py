"""examples/torch_train.py with a small step count: its JSON line, the share of low steps
and the final loss against the float32 run's (issue 22's acceptance figures)."""

import json
import math
import os
import subprocess
import sys

import pytest

from conftest import SOURCE_DIR

pytest.importorskip("torch")

KEYS = ["steps", "low_steps", "switch_step", "loss_float32", "loss_accelerated", "seconds_float32",
        "seconds_accelerated"]


def run_example(*args):
    done = subprocess.run([sys.executable, str(SOURCE_DIR / "examples" / "torch_train.py"), *map(str, args)],
                          capture_output=True, text=True, timeout=600, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    result = json.loads(last)
    assert list(result) == KEYS
    return result, done.stderr


def assert_close_to_float32(result):
    assert math.isfinite(result["loss_accelerated"])
    assert abs(result["loss_accelerated"] - result["loss_float32"]) <= 0.05 * result["loss_float32"]
    assert result["seconds_float32"] > 0 and result["seconds_accelerated"] > 0


def test_fast1_by_step_runs_ninety_percent_low(tmp_path):
    result, log = run_example("--steps", 300, "--mode", "fast1|step|0.9", "--compile", tmp_path)
    assert result["steps"] == 300
    assert result["low_steps"] == 270 and result["switch_step"] == 270
    assert_close_to_float32(result)
    assert (tmp_path / "compiled" / "low.onnx").is_file() and "(mixed_bfloat16)" in log


def test_fast_by_step_uses_the_loss_scaler():
    result, log = run_example("--steps", 200, "--mode", "fast|step|0.8")
    assert result["low_steps"] == 160 and result["switch_step"] == 160
    assert_close_to_float32(result)
    assert "loss scale at the end 2^" in log


def test_the_loss_trigger_switches_once_the_loss_is_reached():
    result, _ = run_example("--steps", 400, "--loss")
    assert result["switch_step"] is not None
    assert 0 < result["low_steps"] == result["switch_step"] < result["steps"]
    assert_close_to_float32(result)


def test_a_bad_mode_is_refused_with_the_library_message():
    done = subprocess.run([sys.executable, str(SOURCE_DIR / "examples" / "torch_train.py"), "--mode", "fast|x"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.startswith('torch_train.py: error: --mode: accelerate_train_mode "fast|x"')
