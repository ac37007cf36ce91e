"""The installed package: where `cmake --install` put it, its type stubs, docstrings and
pydoc page."""

import ast
import inspect
import os
import pathlib
import subprocess
import sys

import npucc
from conftest import SITE

PACKAGE = SITE / "npucc"


def test_it_is_installed_in_the_prefix_site_folder():
    assert pathlib.Path(npucc.__file__).parent == PACKAGE
    names = {path.name for path in PACKAGE.iterdir()}
    assert {"__init__.py", "__init__.pyi", "py.typed"} <= names
    assert any(name.startswith("_npucc.cpython-") and name.endswith(".so") for name in names)


def test_the_version_is_the_cli_version():
    from conftest import cli

    assert cli("--version").stdout.startswith(f"npucc {npucc.__version__} (commit ")


def test_build_info_is_the_cli_version_json_and_names_the_installed_runtime():
    import json

    from conftest import cli

    info = npucc.build_info()
    assert info == json.loads(cli("--version", "--json").stdout)
    assert info["npucc"]["version"] == npucc.__version__
    runtime = info["onnxruntime"]
    if runtime["built_with"]:
        # The extension's own run path finds the copy the install carries, in its prefix.
        from conftest import NPUCC

        prefix = pathlib.Path(NPUCC).parent.parent
        library = pathlib.Path(runtime["library"])
        assert runtime["problem"] is None and runtime["version"]
        assert library.name == "libonnxruntime.so.1"
        assert prefix in library.parents, (library, prefix)


def stub_tree():
    return ast.parse((PACKAGE / "__init__.pyi").read_text(encoding="utf-8"))


def stub_names():
    names = set()
    for node in stub_tree().body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_the_stubs_declare_every_public_name():
    assert set(npucc.__all__) <= stub_names()
    assert set(npucc.__all__) == {name for name in dir(npucc) if not name.startswith("_")} | {"__version__"}


def stub_class(name):
    return next(node for node in stub_tree().body if isinstance(node, ast.ClassDef) and node.name == name)


def stub_parameters(function):
    arguments = function.args
    return [a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]


def runtime_parameters(function):
    return list(inspect.signature(function).parameters)


def test_the_stub_signatures_are_the_runtime_signatures():
    functions = {node.name: node for node in stub_tree().body if isinstance(node, ast.FunctionDef)}
    for name, node in functions.items():
        assert stub_parameters(node) == runtime_parameters(getattr(npucc, name)), name
    for class_name in ("Schedule", "TellMeStepOrLossHook", "Cache"):
        cls = getattr(npucc, class_name)
        for node in stub_class(class_name).body:
            if isinstance(node, ast.FunctionDef) and not any(
                isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list
            ):
                runtime = runtime_parameters(getattr(cls, node.name))
                if node.name == "init":  # a classmethod: cls is bound
                    runtime = ["cls"] + runtime
                assert stub_parameters(node) == runtime, f"{class_name}.{node.name}"


def test_every_public_object_has_a_docstring():
    for name in npucc.__all__:
        if name == "__version__":
            continue
        value = getattr(npucc, name)
        assert inspect.getdoc(value), name
        if inspect.isclass(value):
            for member, attribute in vars(value).items():
                if not member.startswith("_") and callable(attribute):
                    assert inspect.getdoc(attribute), f"{name}.{member}"
    assert "TellMeStepOrLossHook" in npucc.__doc__


def test_pydoc_renders_the_package():
    page = subprocess.run([sys.executable, "-m", "pydoc", "npucc"], capture_output=True, text=True,
                          check=True, env=dict(os.environ, PAGER="cat")).stdout
    for expected in ("class Schedule", "class TellMeStepOrLossHook", "class Cache", "compile(model: ",
                     "report_step(self, step: ", "state_dict(self)"):
        assert expected in page, expected
