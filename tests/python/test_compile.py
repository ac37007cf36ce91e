"""npucc.compile(): a miss then a hit, the outputs and manifest of `npucc compile`, and
every `npucc compile` option as a keyword."""

import inspect
import json
import re
import subprocess

import pytest

import npucc
from conftest import MODEL, NPUCC, OTHER_MODEL, cli
from npucc import _npucc


def test_a_miss_then_a_hit(tmp_path, cache_dir):
    out = tmp_path / "out"
    first = npucc.compile(MODEL, out, accelerate_train_mode="fast|step|0.9", cache_dir=cache_dir)
    assert first.cache == "miss"
    assert first.reason == "new key"
    assert re.fullmatch("[0-9a-f]{64}", first.key)
    assert set(first.graphs) == {"high", "low"}
    assert first.graphs["high"] == out / "high.onnx" and first.graphs["low"].is_file()
    assert first.precisions == {"high": "float32", "low": "mixed_float16"}
    second = npucc.compile(MODEL, out, accelerate_train_mode="fast|step|0.9", cache_dir=cache_dir)
    assert second.cache == "hit"
    assert second.key == first.key
    assert second.graphs == first.graphs
    assert second.manifest["cache_key"] == first.key
    stats = npucc.Cache(cache_dir).stats()
    assert (stats.counter("misses"), stats.counter("hits"), stats.entries) == (1, 1, 1)


def test_the_result_is_what_the_cli_writes(tmp_path, cache_dir):
    out = tmp_path / "out"
    result = npucc.compile(MODEL, out, accelerate_train_mode="fast1|loss", cache_dir=cache_dir)
    with open(out / "manifest.json", encoding="utf-8") as file:
        assert result.manifest == json.load(file)
    assert result.manifest_path == out / "manifest.json"
    schedule = result.manifest["schedule"]
    assert (schedule["trigger"], schedule["ratio"]) == ("loss", 1.05)
    cli("-q", "compile", MODEL, "-o", tmp_path / "cli", "--no-cache", "--accelerate-train-mode", "fast1|loss")
    for role, path in result.graphs.items():
        assert path.read_bytes() == (tmp_path / "cli" / path.name).read_bytes(), role


def build_id(path):
    notes = subprocess.run(["readelf", "-n", str(path)], capture_output=True, text=True, check=True).stdout
    return re.search(r"Build ID: ([0-9a-f]+)", notes).group(1)


def test_the_key_is_the_cli_key_but_for_the_build_of_the_module():
    ours = {name: (digest, value) for name, digest, value in
            _npucc.key_components(str(MODEL), [("accelerate-train-mode", "fast|step")])}
    # explain exits 3 on a miss (0 on a hit): a CI step can assert a hit
    explained = cli("cache", "explain", MODEL, "--accelerate-train-mode", "fast|step", "--json", check=False)
    assert explained.returncode in (0, 3), explained.stderr
    shown = json.loads(explained.stdout)
    theirs = {component["name"]: (component["digest"], component["value"])
              for component in shown["components"] if component["in_key"]}
    # the schedule is the request's, not the key's: explain lists it as left out
    assert [c["name"] for c in shown["components"] if not c["in_key"]] == ["schedule"]
    # explain --json gives the options as an object, the module their canonical text
    ours["options"] = (ours["options"][0], json.loads(ours["options"][1]))
    assert set(ours) == set(theirs)
    for name in set(ours) - {"build"}:
        assert ours[name] == theirs[name], name
    # The code that compiles is the module's, not python3's: a rebuilt module never hits
    # what an earlier build of the same version stored (nor does it share the CLI's entries).
    assert ours["build"][1].startswith(f"npucc={build_id(_npucc.__file__)} ")
    assert theirs["build"][1].startswith(f"npucc={build_id(NPUCC)} ")


def test_keywords_take_python_values(tmp_path, cache_dir):
    as_text = npucc.compile(OTHER_MODEL, tmp_path / "a", input_shape="x:1,3,48,192",
                            passes="fold_constants,eliminate_dead_code", cache_dir=cache_dir)
    as_python = npucc.compile(OTHER_MODEL, tmp_path / "b", input_shape={"x": (1, 3, 48, 192)},
                              passes=["fold_constants", "eliminate_dead_code"], cache_dir=cache_dir,
                              accelerate_train_mode=None)
    assert as_python.cache == "hit" and as_python.key == as_text.key
    mode = npucc.parse_accelerate_train_mode("fast|step")
    by_mode = npucc.compile(MODEL, tmp_path / "c", accelerate_train_mode=mode, cache_dir=cache_dir)
    assert by_mode.manifest["schedule"]["mode"] == "fast|step|0.9"


def test_no_cache_and_read_only(tmp_path, cache_dir):
    off = npucc.compile(MODEL, tmp_path / "a", no_cache=True, cache_dir=cache_dir)
    assert off.cache == "disabled" and off.key is None and off.graphs["high"].is_file()
    read_only = npucc.compile(MODEL, tmp_path / "b", read_only=True, cache_dir=cache_dir)
    assert read_only.cache == "miss"
    assert npucc.Cache(cache_dir).entries() == []


def test_the_default_cache_follows_the_environment(tmp_path, cache_dir, monkeypatch):
    monkeypatch.setenv("NPUCC_CACHE_DIR", str(cache_dir))
    assert npucc.compile(MODEL, tmp_path / "out").cache == "miss"
    assert len(npucc.Cache().entries()) == 1
    monkeypatch.setenv("NPUCC_CACHE_DISABLE", "1")
    assert npucc.compile(MODEL, tmp_path / "out").cache == "disabled"
    assert npucc.compile(MODEL, tmp_path / "out", no_cache=False).cache == "hit"


def cli_compile_options():
    """The long options of `npucc compile --help`, but output ones and aliases.

    --accuracy-plot is the command line's presentation of drift.json (as --json is of the
    result): a program reads drift.json, which --accuracy-report nodes writes, itself."""
    shown = cli("compile", "--help").stdout
    names = []
    for line in shown.splitlines():
        match = re.match(r"\s+(-\w,)?--([\w-]+)", line)
        if match:
            names.append(match.group(2))
    return [name for name in names if name not in ("help", "output", "json", "accuracy-plot")]


def test_every_cli_compile_option_is_a_keyword():
    keywords = [
        name
        for name, parameter in inspect.signature(npucc.compile).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    names = [keyword.replace("_", "-") for keyword in keywords]
    assert names == list(_npucc.compile_option_names())
    assert names == cli_compile_options()


def test_warnings_are_the_cli_warnings(tmp_path):
    options = tmp_path / "opts.json"
    options.write_text('{"accelerate_train_mode": "fast|step", "enable_small_channel": "1"}')
    shown = cli("compile", MODEL, "-o", tmp_path / "cli", "--options", options, "--no-cache").stderr
    expected = [line[len("npucc: warning: "):] for line in shown.splitlines() if line.startswith("npucc: warning: ")]
    assert expected
    with pytest.warns(npucc.NpuccWarning) as caught:
        result = npucc.compile(MODEL, tmp_path / "out", options=options, no_cache=True)
    assert [str(warning.message) for warning in caught] == expected
    assert caught[0].filename == __file__  # pointing at the caller
    assert set(result.graphs) == {"high", "low"}  # the options file's mode applied


def test_an_uncacheable_model_is_a_bypass(tmp_path, cache_dir):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu"),
             helper.make_node("Magic", ["a"], ["y"], name="magic_node", domain="com.acme")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.acme", 1)])
    model.ir_version = 8
    path = tmp_path / "custom.onnx"
    onnx.save(model, str(path))
    shown = cli("compile", path, "-o", tmp_path / "cli", "--cache-dir", cache_dir).stdout
    result = npucc.compile(path, tmp_path / "out", cache_dir=cache_dir)
    assert result.cache == "bypass", result
    assert f"cache: bypass: {result.reason}" in shown and "com.acme::Magic" in result.reason
    assert npucc.Cache(cache_dir).entries() == []
    assert npucc.Cache(cache_dir).stats().counter("bypass.custom-op") == 2  # the CLI's and this one
