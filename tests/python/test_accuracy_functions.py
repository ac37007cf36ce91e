"""accuracy_target as the caller's own function (issue 41, item 4): npucc.Target(check=...),
npucc.Target(score=..., at_least=...) or a bare function (high, low) -> bool, called by the
repair per sample set, combined with text targets, cached only under a key the caller gives.

The model is the accuracy suite's MLP (tests/tools/make_accuracy_models.py) whose float16
activations overflow on inputs near 1000. What npucc emits is judged again here by NumPy on
sets npucc never saw: the MLP computed in float32 (the high side) and with float16 rounding
at every node the low graph holds low (the emulation's rule: a low node reads and writes
float16 values), fed to the same function.
"""

import subprocess
import sys

import numpy as np
import pytest

import npucc
from conftest import SOURCE_DIR, cli_error

FAST = "fast|step|0.9"


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    subprocess.run([sys.executable, str(SOURCE_DIR / "tests/tools/make_accuracy_models.py"),
                    str(folder)], check=True, stdout=subprocess.DEVNULL)
    import onnx
    from onnx import numpy_helper
    model = onnx.load(str(folder / "overflow.onnx"))
    weights = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    return folder / "overflow.onnx", weights


def inputs(count, seed):
    rng = np.random.default_rng(seed)
    return [{"x": rng.uniform(900.0, 1100.0, (1, 16)).astype(np.float32)} for _ in range(count)]


def emulate(weights, x, low):
    """The MLP's y with the nodes in `low` computing on float16-rounded values (NumPy);
    float32 throughout with low empty."""
    def r(value, node):
        with np.errstate(over="ignore", invalid="ignore"):
            return value.astype(np.float16).astype(np.float32) if node in low else value
    with np.errstate(invalid="ignore"):  # inf * 0 in an overflowed float16 matmul: NaN
        return {"y": _layers(weights, x, r)}


def _layers(weights, x, r):
    h = np.maximum(r(r(x, "fc1") @ r(weights["w1"], "fc1"), "fc1"), 0)
    g = np.maximum(r(r(h, "fc2") @ r(weights["w2"], "fc2"), "fc2"), 0)
    z = r(r(g, "fc3") @ r(weights["w3"], "fc3"), "fc3")
    return z * np.float32(weights["scale"])


def finite_and_close(high, low):
    """A task's own rule: no overflow, every value within 5% (or 1e-3) of float32's."""
    return bool(np.all(np.isfinite(low["y"])) and
                np.allclose(low["y"], high["y"], rtol=0.05, atol=1e-3))


def close_share(high, low):
    """A score: the share of elements within 1% of float32's (0 when any is non-finite)."""
    if not np.all(np.isfinite(low["y"])):
        return 0.0
    return float(np.mean(np.abs(low["y"] - high["y"]) <= 0.01 * np.abs(high["y"]) + 1e-4))


class Calls:
    """Wraps a function, counting its calls and keeping what it returned."""

    def __init__(self, function):
        self.function = function
        self.values = []
        self.__name__ = function.__name__
        self.__qualname__ = function.__qualname__
        self.__module__ = function.__module__

    def __call__(self, high, low):
        assert set(high) == set(low) == {"y"}
        assert high["y"].dtype == np.float32 and high["y"].shape == (1, 10)
        value = self.function(high, low)
        self.values.append(value)
        return value


def low_nodes(result):
    """The MLP's nodes the emitted low graph holds low: every one but those kept float32
    (its rescale Mul is float32 in every compile: the graph output's producer), by the repair
    or by the activation-range rule before it."""
    ruled = result.accuracy.get("activation_ranges", {}).get("kept", {})
    return {"fc1", "relu1", "fc2", "relu2", "fc3"} - set(result.accuracy["kept_float32"]) - set(ruled)


def test_a_check_that_fails_as_compiled_forces_the_repair(tmp_path, cache_dir, mlp):
    model, weights = mlp
    check = Calls(finite_and_close)
    samples = inputs(12, seed=1)  # 12 sets: npucc holds every 4th out (3) for validation
    result = npucc.compile(model, tmp_path / "out", accelerate_train_mode=FAST,
                           sample_inputs=samples, cache_dir=cache_dir,
                           accuracy_target=npucc.Target(check=check, key="finite-close-v1"))
    report = result.accuracy
    # As compiled, float16 overflows: the check fails there, so the graph was changed: by the
    # activation-range rule (the samples' values overflow), then the repair if still needed.
    unrepaired = {node for node in ("fc1", "relu1", "fc2", "relu2", "fc3")}
    assert not any(finite_and_close(emulate(weights, s["x"], set()), emulate(weights, s["x"], unrepaired))
                   for s in samples)
    assert report["target"] == "check[finite-close-v1]>=1"
    assert report["kept_float32"] or report["activation_ranges"]["kept"]
    assert len(check.values) > 12 and False in check.values and True in check.values
    (function,) = report["functions"]
    assert function["name"] == "check[finite-close-v1]" and function["sets_held"] == 9
    assert [s["value"] for s in function["per_sample"]] == [1] * 9
    validation = report["validation"]
    assert validation["inputs"] == "held-out" and validation["samples"] == 3
    assert validation["functions"][0]["sets_held"] == 3
    # Sets npucc never saw, judged by NumPy: the emitted graph meets the check on each.
    low = low_nodes(result)
    for s in inputs(6, seed=99):
        assert finite_and_close(emulate(weights, s["x"], set()), emulate(weights, s["x"], low))
    # A hit under the same key calls nothing and gives the same report.
    calls = len(check.values)
    again = npucc.compile(model, tmp_path / "out", accelerate_train_mode=FAST,
                          sample_inputs=samples, cache_dir=cache_dir,
                          accuracy_target=npucc.Target(check=check, key="finite-close-v1"))
    assert again.cache == "hit" and again.accuracy == report and len(check.values) == calls


def test_a_score_with_a_bound_and_text_targets_all_hold(tmp_path, cache_dir, mlp):
    model, weights = mlp
    score = Calls(close_share)
    samples = inputs(4, seed=2)
    target = npucc.Target(score=score, at_least=0.9, key="close-share-v1")
    result = npucc.compile(model, tmp_path / "out", accelerate_train_mode=FAST,
                           sample_inputs=samples, cache_dir=cache_dir,
                           accuracy_target=["nonfinite<=0", target])
    report = result.accuracy
    assert report["target"] == "nonfinite<=0,score[close-share-v1]>=0.9"
    (function,) = report["functions"]
    values = [s["value"] for s in function["per_sample"]]
    # The last 4 calls measured the emitted graph (once more, on every set): the report's.
    assert values == pytest.approx(score.values[-4:], abs=0)
    assert function["worst"] == pytest.approx(np.min(values))
    assert function["mean"] == pytest.approx(np.mean(values))
    assert function["median"] == pytest.approx(np.median(values))
    assert function["worst_set"] == int(np.argmin(values))
    assert min(values) >= 0.9 and report["outputs"][0]["nonfinite"] == 0
    # The score's best (float32 against itself) is 1: a search aims inside the bound (when the
    # activation-range rule left one to do).
    if "repair" in report:
        assert report["repair"]["search_target"].startswith("nonfinite<=0,score[close-share-v1]>=0.9")
        assert float(report["repair"]["search_target"].split(">=")[-1]) > 0.9
    else:
        assert report["activation_ranges"]["kept"]
    # An independent look: NumPy's emulation of the emitted graph scores the same sets alike.
    low = low_nodes(result)
    for s, value in zip(samples, values):
        assert close_share(emulate(weights, s["x"], set()), emulate(weights, s["x"], low)) >= 0.9
    # Another bound is another key: a miss, never the old report.
    other = npucc.compile(model, tmp_path / "out2", accelerate_train_mode=FAST,
                          sample_inputs=samples, cache_dir=cache_dir,
                          accuracy_target=["nonfinite<=0", npucc.Target(
                              score=score, at_least=0.95, key="close-share-v1")])
    assert other.cache == "miss" and other.accuracy["target"].endswith(">=0.95")


def test_an_exception_in_the_function_is_one_error_and_nothing_is_written(tmp_path, cache_dir, mlp):
    model, _ = mlp

    def broken(high, low):
        raise ValueError("no ground truth for this set")

    with pytest.raises(npucc.Error) as raised:
        npucc.compile(model, tmp_path / "out", accelerate_train_mode=FAST,
                      sample_inputs=inputs(2, seed=3), cache_dir=cache_dir,
                      accuracy_target=npucc.Target(check=broken, key="broken-v1"))
    error = raised.value
    assert "test_accuracy_functions.test_an_exception_in_the_function_is_one_error" in str(error)
    assert "broken failed on sample set 1: ValueError: no ground truth for this set" in str(error)
    assert "\n" not in str(error)
    assert isinstance(error.__cause__, ValueError)
    assert not (tmp_path / "out").exists()
    assert list(npucc.Cache(cache_dir).entries()) == []
    # A wrong return type is the same kind of error, naming what came back.
    with pytest.raises(npucc.Error, match="returned float, not a bool"):
        npucc.compile(model, tmp_path / "out", accelerate_train_mode=FAST,
                      sample_inputs=inputs(2, seed=3), cache_dir=cache_dir,
                      accuracy_target=lambda high, low: 0.5)
    assert not (tmp_path / "out").exists()


def test_without_a_key_the_compile_is_not_cached_and_says_so_once(tmp_path, cache_dir, mlp):
    model, _ = mlp
    with pytest.warns(npucc.NpuccWarning) as warned:
        result = npucc.compile(model, tmp_path / "out", accelerate_train_mode=FAST,
                               sample_inputs=inputs(2, seed=4), cache_dir=cache_dir,
                               accuracy_target=[finite_and_close, "cosine>=0.99"])
    assert result.cache == "bypass"
    lines = [str(w.message) for w in warned if "has no key" in str(w.message)]
    assert len(lines) == 1 and "finite_and_close" in lines[0] and "key=" in lines[0]
    assert result.accuracy["functions"][0]["sets_held"] == 2
    assert list(npucc.Cache(cache_dir).entries()) == []


def test_bad_targets_are_refused(tmp_path, mlp):
    model, _ = mlp
    with pytest.raises(ValueError, match="at_least=X or at_most=X"):
        npucc.Target(score=close_share)
    with pytest.raises(ValueError, match="is not a name"):
        npucc.Target(check=finite_and_close, key="two words")
    with pytest.raises(ValueError, match="two targets have the key"):
        npucc.compile(model, tmp_path / "out", accelerate_train_mode=FAST,
                      accuracy_target=[npucc.Target(check=finite_and_close, key="k"),
                                       npucc.Target(check=finite_and_close, key="k")])
    # On a command line there is no function to call: one usage error.
    status, line = cli_error("compile", model, "-o", tmp_path / "cli",
                             "--accelerate-train-mode", FAST, "--accuracy-target", "check[k]>=1")
    assert status == 2 and "no function of that label was given" in line


def test_functions_in_compiles_on_two_threads(tmp_path, mlp):
    """Each call takes the GIL the compile released: two compiles, each calling its own
    function from its compiling thread while this thread waits, both finish and agree."""
    import threading
    model, _ = mlp
    results, errors = {}, []

    def run(name):
        try:
            results[name] = npucc.compile(
                model, tmp_path / name, accelerate_train_mode=FAST, no_cache=True,
                sample_inputs=inputs(3, seed=5),
                accuracy_target=npucc.Target(score=Calls(close_share), at_least=0.9, key="s"))
        except BaseException as error:  # honest: re-raised below, on the test's thread
            errors.append(error)

    threads = [threading.Thread(target=run, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors and not any(thread.is_alive() for thread in threads)
    assert results["a"].accuracy["functions"] == results["b"].accuracy["functions"]
    assert results["a"].accuracy["kept_float32"] == results["b"].accuracy["kept_float32"]
