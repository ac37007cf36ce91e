"""Every failure raises npucc.Error whose str() is the line the CLI prints after "npucc:
error: " for the same input, with the CLI's exit status; a bad option value (exit status
2) raises npucc.UsageError, which is also a ValueError."""

import pytest

import npucc
from conftest import MODEL, assert_same_error


def test_error_classes():
    assert issubclass(npucc.Error, RuntimeError)
    assert issubclass(npucc.UsageError, npucc.Error)
    assert issubclass(npucc.UsageError, ValueError)
    assert not issubclass(npucc.Error, ValueError)
    assert npucc.Error.__module__ == "npucc"
    assert npucc.Error.__doc__ and npucc.UsageError.__doc__


# (keywords of npucc.compile, the same as CLI options)
COMPILE_ERRORS = [
    ({"accelerate_train_mode": "slow|step"}, ["--accelerate-train-mode", "slow|step"]),
    ({"accelerate_train_mode": "fast|step|2"}, ["--accelerate-train-mode", "fast|step|2"]),
    ({"precision_mode": "bogus"}, ["--precision-mode", "bogus"]),
    ({"precision_mode_v2": "bf17"}, ["--precision-mode-v2", "bf17"]),
    (
        {"precision_mode": "force_fp16", "accelerate_train_mode": "fast|step"},
        ["--precision-mode", "force_fp16", "--accelerate-train-mode", "fast|step"],
    ),
    (
        {"precision_mode": "force_fp32", "precision_mode_v2": "origin"},
        ["--precision-mode", "force_fp32", "--precision-mode-v2", "origin"],
    ),
    ({"input_shape": "x:a"}, ["--input-shape", "x:a"]),
    ({"max_size": "3Q"}, ["--max-size", "3Q"]),
    ({"max_memory": "lots"}, ["--max-memory", "lots"]),
    ({"target_opset": -3}, ["--target-opset", "-3"]),
    ({"passes": ["bogus"]}, ["--passes", "bogus"]),
    ({"cache_shared": "foo"}, ["--cache-shared", "foo"]),
    ({"keep_dtype": "/nonexistent/keep.txt"}, ["--keep-dtype", "/nonexistent/keep.txt"]),
    ({"modify_mixlist": "/nonexistent/mix.json"}, ["--modify-mixlist", "/nonexistent/mix.json"]),
    ({"options": "/nonexistent/options.json"}, ["--options", "/nonexistent/options.json"]),
    ({"cache_dir": "/nonexistent/cache"}, ["--cache-dir", "/nonexistent/cache"]),
    ({"remote_cache": "ftp://host/x"}, ["--remote-cache", "ftp://host/x"]),
]


@pytest.mark.parametrize("keywords,options", COMPILE_ERRORS)
def test_compile_errors_are_the_cli_errors(tmp_path, keywords, options):
    out = tmp_path / "out"
    assert_same_error(lambda: npucc.compile(MODEL, out, **keywords), "compile", MODEL, "-o", out, *options)
    assert not out.exists()


def test_a_missing_model_is_an_error_not_a_value_error(tmp_path):
    missing = tmp_path / "missing.onnx"
    error = assert_same_error(lambda: npucc.compile(missing, tmp_path / "out"), "compile", missing, "-o",
                              tmp_path / "out")
    assert not isinstance(error, ValueError)
    assert error.exit_status == 1
    assert error.hint == "check the model path"
    assert str(error) == f"{error.message} ({error.hint})"


def test_a_damaged_model_is_the_cli_error(tmp_path):
    damaged = tmp_path / "damaged.onnx"
    damaged.write_bytes(MODEL.read_bytes()[:1000])
    assert_same_error(lambda: npucc.compile(damaged, tmp_path / "out"), "compile", damaged, "-o", tmp_path / "out")


def test_cache_errors_are_the_cli_errors(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "file").write_text("not a cache")
    assert_same_error(lambda: npucc.Cache(plain).entries(), "cache", "ls", "--cache-dir", plain)
    assert_same_error(lambda: npucc.Cache(plain).verify(), "cache", "verify", "--cache-dir", plain)
    assert_same_error(lambda: npucc.Cache(tmp_path / "none").stats(), "cache", "stats", "--cache-dir",
                      tmp_path / "none")
    assert_same_error(lambda: npucc.Cache.init(plain), "cache", "init", plain)
    assert_same_error(lambda: npucc.Cache(plain, cache_shared="some"), "cache", "ls", "--cache-dir", plain,
                      "--cache-shared", "some")


def test_cache_option_values_are_the_cli_errors(cache_dir):
    cache = npucc.Cache(cache_dir)
    assert_same_error(lambda: cache.purge(older_than="soon"), "cache", "purge", "--cache-dir", cache_dir,
                      "--older-than", "soon")
    assert_same_error(lambda: cache.purge(max_size="big"), "cache", "purge", "--cache-dir", cache_dir,
                      "--max-size", "big")
    read_only = npucc.Cache(cache_dir, read_only=True)
    assert_same_error(lambda: read_only.purge(all=True), "cache", "purge", "--all", "--read-only",
                      "--cache-dir", cache_dir)


def test_wrong_types_are_type_errors(tmp_path):
    with pytest.raises(TypeError):
        npucc.compile(MODEL, tmp_path / "out", input_shape=[1, 2])
    with pytest.raises(TypeError):
        npucc.compile(MODEL, tmp_path / "out", not_an_option=True)
