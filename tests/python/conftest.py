"""Shared fixtures of the Python suite (tests/python, run by ctest: label python).

ctest installs the project into a prefix first (the python_install fixture of
tests/CMakeLists.txt) and runs each file with PYTHONPATH at that prefix's site folder, so
these tests import the installed package, not the build tree's. NPUCC is the installed
CLI: messages and listings are compared with it.
"""

import os
import pathlib
import subprocess

import pytest

import npucc

SITE = pathlib.Path(os.environ["NPUCC_PYTHON_SITE"])
NPUCC = os.environ["NPUCC"]
TESTDATA = pathlib.Path(os.environ["TESTDATA"])
SOURCE_DIR = pathlib.Path(os.environ["SOURCE_DIR"])
MODEL = TESTDATA / "models" / "oww_hello_deepa.onnx"
OTHER_MODEL = TESTDATA / "models" / "ppocr_cls.onnx"


def pytest_sessionstart(session):
    where = pathlib.Path(npucc.__file__).resolve()
    if SITE.resolve() not in where.parents:
        raise pytest.UsageError(f"npucc was imported from {where}, not from the installed {SITE}")


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """No NPUCC_* variable or config file of the machine; the default cache in tmp_path."""
    for name in list(os.environ):
        if name.startswith("NPUCC_") and name != "NPUCC_PYTHON_SITE":
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.chdir(tmp_path)


def cli(*args, check=True):
    """Runs the installed npucc CLI with the test's environment."""
    done = subprocess.run([NPUCC, *map(str, args)], capture_output=True, text=True, timeout=300)
    if check and done.returncode != 0:
        raise AssertionError(f"npucc {' '.join(map(str, args))} failed: {done.stderr}")
    return done


def cli_error(*args):
    """(exit status, the line after "npucc: error: ") of a CLI call that must fail."""
    done = cli(*args, check=False)
    assert done.returncode != 0, f"npucc {' '.join(map(str, args))} succeeded"
    lines = done.stderr.strip().splitlines()
    prefix = "npucc: error: "
    assert lines and lines[-1].startswith(prefix), done.stderr
    return done.returncode, lines[-1][len(prefix):]


def raised(call):
    """The npucc.Error a call raises."""
    with pytest.raises(npucc.Error) as caught:
        call()
    return caught.value


def assert_same_error(call, *cli_args):
    """call() raises what the CLI reports for cli_args: the same line and exit status,
    UsageError (a ValueError) exactly when the CLI exits with 2."""
    status, line = cli_error(*cli_args)
    error = raised(call)
    assert str(error) == line
    assert error.exit_status == status
    assert isinstance(error, ValueError) == (status == 2)
    return error


@pytest.fixture
def cache_dir(tmp_path):
    """An initialised, empty cache folder."""
    path = tmp_path / "cache"
    npucc.Cache.init(path)
    return path
