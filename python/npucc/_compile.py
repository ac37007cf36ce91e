"""npucc.compile(): `npucc compile` as a function."""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import warnings
from collections.abc import Mapping
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _npucc
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
    """

    graphs: Dict[str, pathlib.Path]
    precisions: Dict[str, str]
    cache: str
    key: Optional[str]
    reason: str
    manifest: Dict[str, Any]
    manifest_path: pathlib.Path


def _text(name: str, value: Any) -> str:
    """An option value as the command line spells it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if name == "input_shape" and isinstance(value, Mapping):
        shapes = (f"{input}:{','.join(str(int(d)) for d in dims)}" for input, dims in value.items())
        return ";".join(shapes)
    if name == "passes" and isinstance(value, Sequence):
        return ",".join(str(p) for p in value)
    if name == "accelerate_train_mode":
        return str(value)  # an AccelerateTrainMode
    raise TypeError(f"compile(): {name} cannot be a {type(value).__name__}")


def option_values(given: Dict[str, Any]) -> List[Tuple[str, str]]:
    """The (name, text) pairs the library takes, from keywords (None: not given)."""
    return [
        (name.replace("_", "-"), _text(name, value))
        for name, value in given.items()
        if value is not None
    ]


def warn(line: str) -> None:
    warnings.warn(line, NpuccWarning, stacklevel=3)


def compile(  # noqa: A001 - the CLI's word; shadows the builtin only inside npucc
    model: PathLike,
    output: PathLike,
    *,
    input_shape: Union[str, Mapping[str, Sequence[int]], None] = None,
    external_data: Optional[bool] = None,
    passes: Union[str, Sequence[str], None] = None,
    target_opset: Optional[int] = None,
    accelerate_train_mode: Any = None,
    precision_mode: Optional[str] = None,
    precision_mode_v2: Optional[str] = None,
    modify_mixlist: Optional[PathLike] = None,
    keep_dtype: Optional[PathLike] = None,
    keep_io_types: Optional[bool] = None,
    low_precision_weights: Optional[bool] = None,
    emit_emulation: Optional[bool] = None,
    options: Optional[PathLike] = None,
    cache_dir: Optional[PathLike] = None,
    max_size: Union[str, int, None] = None,
    read_only: Optional[bool] = None,
    cache_shared: Optional[str] = None,
    cache_key_file: Optional[PathLike] = None,
    link_mode: Optional[str] = None,
    digest_cache: Optional[str] = None,
    remote_cache: Optional[str] = None,
    remote_read_only: Optional[bool] = None,
    remote_connect_timeout: Union[float, str, None] = None,
    remote_timeout: Union[float, str, None] = None,
    remote_token_file: Optional[PathLike] = None,
    remote_credentials_file: Optional[PathLike] = None,
    remote_ca_file: Optional[PathLike] = None,
    remote_client_cert: Optional[PathLike] = None,
    remote_client_key: Optional[PathLike] = None,
    no_cache: Optional[bool] = None,
    force: Optional[bool] = None,
    max_memory: Union[str, int, None] = None,
) -> CompileResult:
    """Compiles an ONNX model into output, through the compile cache: `npucc compile`.

    Every keyword is the `npucc compile` option of the same name (--accelerate-train-mode
    is accelerate_train_mode=...; npucc-compile(1) says what each does); None means not
    given, so the NPUCC_* variables, config.toml and an options file apply as they do for
    the CLI. Flags take True/False (False also overrides a variable that sets one); paths
    take str or os.PathLike; input_shape also takes {"x": [1, 3, 224, 224]}, passes a list,
    accelerate_train_mode an AccelerateTrainMode.

    With accelerate_train_mode the output holds high.onnx and low.onnx (result.graphs).
    A bad option value raises npucc.UsageError (a ValueError), a failed compile
    npucc.Error, each with the line the CLI prints; warnings go to warnings.warn() as
    NpuccWarning. The GIL is released while compiling: compiles in other threads run.
    """
    given = {name: value for name, value in locals().items() if name not in ("model", "output")}
    done = _npucc.compile(os.fspath(model), os.fspath(output), option_values(given), warn)
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
