"""npucc for Python: the precision schedule, the compiler and the compile cache.

npucc compiles ONNX models offline, with accelerate_train_mode into a pair of graphs
(high: original precision, low: mixed float16/bfloat16), and keeps the results in a
content-addressed compile cache. This package is its C++ library for training scripts
and tools; docs/python.md has the guide and examples/torch_train.py a PyTorch example.

The schedule, the runtime side of Ascend's TellMeStepOrLossHook::

    import npucc
    schedule = npucc.Schedule("fast1|step|0.9")
    for step in range(total_steps):
        if schedule.report_step(step, total_steps) == "low":
            ...  # mixed precision (e.g. torch.autocast)
        else:
            ...  # original precision, for the rest of the run
    checkpoint["schedule"] = schedule.state_dict()  # the one-way switch survives a resume

Compiling and the cache::

    result = npucc.compile("model.onnx", "out", accelerate_train_mode="fast|step|0.9")
    result.graphs["low"], result.cache            # Path("out/low.onnx"), "miss" / "hit"
    for entry in npucc.Cache().entries(): ...

Errors raise npucc.Error (a RuntimeError) whose str() is the line `npucc` prints after
"npucc: error: "; a bad option value raises npucc.UsageError, both an Error and a
ValueError.
"""

import json as _json

from . import _npucc
from ._cache import Cache, CacheEntry, CacheProblem, CacheStats, Removal, RemovedEntry, VerifyResult
from ._compile import CompileResult, compile
from ._errors import Error, NpuccWarning, UsageError
from ._target import Target
from ._schedule import (
    AccelerateTrainMode,
    GraphRole,
    Schedule,
    TellMeStepOrLossHook,
    parse_accelerate_train_mode,
)

__version__: str = _npucc.version
"""The npucc version (the compiler version in every cache key and manifest)."""


def build_info() -> dict:
    """Everything that decides npucc's output, as ``npucc --version --json`` gives it.

    A dict with ``format`` ("npucc-version"), ``format_version`` and:

    - ``npucc``: ``version`` (``__version__``), ``commit`` (12 hex digits, or "unknown"),
      ``commit_modified``, ``build_type`` and ``compiler``;
    - ``onnx`` and ``protobuf``: the ``version`` of each library npucc was built against;
    - ``onnxruntime``: what compile()'s accuracy check (``check_accuracy=True``) loads:
      ``built_with`` (False: this npucc has no accuracy check), ``c_api`` (the C API
      version it asks for), ``library`` (the file: the package's own copy, or the
      ``NPUCC_ONNXRUNTIME_LIBRARY`` environment variable's), ``version`` (what the library
      says, None if it did not load) and ``problem`` (why it did not load, else None).

    ONNX Runtime is loaded in a child process to ask its version, as the accuracy check
    loads it; this takes a few milliseconds. Paste it into bug reports.
    """
    return _json.loads(_npucc.build_info_json())

__all__ = [
    "AccelerateTrainMode",
    "Cache",
    "CacheEntry",
    "CacheProblem",
    "CacheStats",
    "CompileResult",
    "Error",
    "GraphRole",
    "NpuccWarning",
    "Removal",
    "RemovedEntry",
    "Schedule",
    "Target",
    "TellMeStepOrLossHook",
    "UsageError",
    "VerifyResult",
    "__version__",
    "build_info",
    "compile",
    "parse_accelerate_train_mode",
]
