"""npucc.compile(): `npucc compile` as a function."""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import pathlib
import warnings
from collections.abc import Mapping
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _npucc, _samples, _target
from ._errors import NpuccWarning

PathLike = Union[str, "os.PathLike[str]"]


@dataclasses.dataclass(frozen=True)
class CompileResult:
    """What one compile produced (in the output folder) and how the cache served it.

    Attributes:
        graphs: role ("high", "low", "emulation") -> path of the graph's .onnx file;
            a GraphRole looks up its graph (result.graphs[schedule.role]).
        precisions: role -> the graph's precision ("float32", "mixed_bfloat16", ...).
        cache: "hit" (materialised from the cache), "miss" (compiled and stored),
            "bypass" (compiled, not cacheable: reason says why) or "disabled" (no_cache).
        key: the cache key (64 hex digits), None when the cache was not used.
        reason: why the cache answered as it did ("new key", "materialised by hard link").
        manifest: manifest.json as a dict (schema in npucc-compile(1)).
        manifest_path: where manifest.json is.
        accuracy: the accuracy report as a dict (the manifest's "accuracy": per output the
            worst cosine, errors and non-finite count, a "summary" per figure (worst, mean,
            median, worst_set), the figures of each sample set ("per_sample": cosine, top1,
            psnr, snr_db, ...; None where undefined, the reason under "undefined") and
            "warnings" for a collapsing low graph; with accuracy_target the target and the
            nodes a repair kept float32), None when no check ran.
    """

    graphs: Dict[str, pathlib.Path]
    precisions: Dict[str, str]
    cache: str
    key: Optional[str]
    reason: str
    manifest: Dict[str, Any]
    manifest_path: pathlib.Path

    @property
    def accuracy(self) -> Optional[Dict[str, Any]]:
        return self.manifest.get("accuracy")


# The type of each option (the library's option table: _npucc.compile_option_types()).
_TYPES: Dict[str, str] = {
    name.replace("-", "_"): kind for name, kind in _npucc.compile_option_types()
}

# What each type takes beyond str (and None: not given); the annotation it shows.
_ANNOTATIONS = {
    "flag": "Optional[bool]",
    "integer": "Optional[int]",
    "path": "Optional[PathLike]",
    "size": "Union[str, int, None]",
    "seconds": "Union[float, str, None]",
    "train_mode": "Union[str, AccelerateTrainMode, None]",
    "names": "Union[str, Sequence[str], None]",
    "shapes": "Union[str, Mapping[str, Sequence[int]], None]",
    "paths": "Union[PathLike, Sequence[PathLike], None]",
    "samples": "Union[PathLike, Mapping[str, Any], Sequence[Union[PathLike, Mapping[str, Any]]], None]",
    "text": "Optional[str]",
}


# accuracy_target also takes npucc.Target objects and functions (_target.py).
_TARGET_ANNOTATION = ("Union[str, Target, Callable[[Mapping[str, Any], Mapping[str, Any]], bool], "
                      "Sequence[Union[str, Target, Callable[[Mapping[str, Any], Mapping[str, Any]], "
                      "bool]]], None]")


def _text(name: str, value: Any) -> str:
    """An option value as the command line spells it."""
    kind = _TYPES.get(name, "text")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if kind == "shapes" and isinstance(value, Mapping):
        shapes = (f"{input}:{','.join(str(int(d)) for d in dims)}" for input, dims in value.items())
        return ";".join(shapes)
    if kind == "names" and isinstance(value, Sequence):
        return ",".join(str(p) for p in value)
    if kind == "train_mode":
        return str(value)  # an AccelerateTrainMode
    raise TypeError(f"compile(): {name} cannot be a {type(value).__name__}")


def option_values(given: Dict[str, Any]) -> List[Tuple[str, str]]:
    """The (name, text) pairs the library takes, from keywords (None: not given); a
    repeatable option ("paths") gives a pair per item of a sequence."""
    pairs = []
    for name, value in given.items():
        if value is None:
            continue
        many = _TYPES.get(name) in ("paths", "samples") and not isinstance(value, (str, os.PathLike))
        for item in value if many and isinstance(value, Sequence) else [value]:
            pairs.append((name.replace("_", "-"), _text(name, item)))
    return pairs


def _signature() -> inspect.Signature:
    """compile()'s: model, output, then a keyword per option of the table, in its order."""
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    parameters = [
        inspect.Parameter("model", positional, annotation="PathLike"),
        inspect.Parameter("output", positional, annotation="PathLike"),
    ]
    for name, kind in _TYPES.items():
        annotation = _TARGET_ANNOTATION if name == "accuracy_target" else _ANNOTATIONS[kind]
        parameters.append(
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None,
                              annotation=annotation)
        )
    return inspect.Signature(parameters, return_annotation="CompileResult")


_SIGNATURE = _signature()


def warn(line: str) -> None:
    warnings.warn(line, NpuccWarning, stacklevel=3)


def compile(  # noqa: A001 - the CLI's word; shadows the builtin only inside npucc
    model: PathLike, output: PathLike, **options: Any
) -> CompileResult:
    """Compiles an ONNX model into output, through the compile cache: `npucc compile`.

    Every keyword is the `npucc compile` option of the same name (--accelerate-train-mode
    is accelerate_train_mode=...; npucc-compile(1) says what each does); None means not
    given, so the NPUCC_* variables, config.toml and an options file apply as they do for
    the CLI. Flags take True/False (False also overrides a variable that sets one); paths
    take str or os.PathLike; input_shape also takes {"x": [1, 3, 224, 224]}, passes a list,
    accelerate_train_mode an AccelerateTrainMode, sample_inputs a set of arrays
    ({"x": array}) or a list of sets and paths.

    With accelerate_train_mode the output holds high.onnx and low.onnx (result.graphs).
    check_accuracy=True runs the high graph and the low graph's emulation in ONNX Runtime
    on the same inputs (sample_inputs, else one random set) and puts the comparison in
    result.accuracy; accuracy_target="cosine>=0.9995" also keeps float32 what the low
    graph needs to meet it (npucc-compile(1), ACCURACY). accuracy_target also takes your
    own task metric, an npucc.Target (a check or a score with a bound, called per sample
    set with the high and the low outputs as dicts of NumPy arrays) or a bare function
    (high, low) -> bool, alone or in a list with text: every one must hold. ONNX Runtime is the library this
    install carries (the NPUCC_ONNXRUNTIME_LIBRARY variable overrides it);
    npucc.build_info() names it and its version.
    A bad option value raises npucc.UsageError (a ValueError), a failed compile
    npucc.Error, each with the line the CLI prints; warnings go to warnings.warn() as
    NpuccWarning. The GIL is released while compiling: compiles in other threads run.
    """
    # Binding raises TypeError for a keyword that is no option, as a def would.
    given = _SIGNATURE.bind(model, output, **options).arguments
    given = {name: value for name, value in given.items() if name not in ("model", "output")}
    given["accuracy_target"], targets = _target.split(given.get("accuracy_target"))
    failures: List[BaseException] = []
    functions = [(label, target.name, target.key is not None, target.check,
                  target._caller(failures)) for label, target in targets]
    with _samples.written(given) as given:
        try:
            done = _npucc.compile(os.fspath(model), os.fspath(output), option_values(given), warn,
                                  functions)
        except _npucc.Error as error:
            if failures:  # the function's own exception, kept as the cause
                raise error from failures[0]
            raise
    if done["cache"] == "bypass" and any(target.key is None for _, target in targets):
        warn(done["reason"])
    manifest_path = pathlib.Path(done["manifest_path"])
    with open(manifest_path, encoding="utf-8") as file:
        manifest = json.load(file)
    return CompileResult(
        graphs={graph["role"]: pathlib.Path(graph["path"]) for graph in done["graphs"]},
        precisions={graph["role"]: graph["precision"] for graph in done["graphs"]},
        cache=done["cache"],
        key=done["key"] or None,
        reason=done["reason"],
        manifest=manifest,
        manifest_path=manifest_path,
    )


compile.__signature__ = _SIGNATURE  # type: ignore[attr-defined]
