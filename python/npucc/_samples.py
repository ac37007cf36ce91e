"""sample_inputs given as arrays ({input name: array}, or a sequence of such sets): each set
is written to a .npz file in a temporary folder for the compile to read, as
`--sample-inputs SET.npz` would, and removed after it."""

from __future__ import annotations

import contextlib
import os
import tempfile
import zipfile
from collections.abc import Mapping
from typing import Any, Dict, Iterator, List

from . import _npucc
from ._errors import usage_error

# Every member's timestamp: the same arrays make the same bytes, so the same samples
# digest, and a second compile with them is a cache hit.
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def _is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))


def _write_set(path: str, index: int, arrays: Mapping) -> None:
    import numpy  # only a caller who passes arrays needs NumPy

    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        for name in sorted(arrays):
            if not isinstance(name, str):
                raise usage_error(f"sample_inputs[{index}]: the key {name!r} is not an input name",
                                  "key each array by the name of the model input it feeds")
            array = numpy.ascontiguousarray(numpy.asarray(arrays[name]))
            if array.dtype.hasobject:
                raise usage_error(f"sample_inputs[{index}]['{name}'] is an array of Python objects",
                                  "give an array of numbers of the input's element type")
            member = zipfile.ZipInfo(f"{name}.npy", date_time=_FIXED_TIME)
            with archive.open(member, "w", force_zip64=True) as file:
                numpy.lib.format.write_array(file, array, allow_pickle=False)


def _renamed(error: Exception, names: Dict[str, str]) -> Exception:
    """`error` with each written file's path replaced by what the caller gave."""
    for path, label in names.items():
        for attribute in ("message", "hint"):
            if isinstance(getattr(error, attribute, None), str):
                setattr(error, attribute, getattr(error, attribute).replace(path, label))
        error.args = tuple(a.replace(path, label) if isinstance(a, str) else a for a in error.args)
    return error


@contextlib.contextmanager
def written(given: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
    """`given` with its sample_inputs' array sets replaced by .npz files, which exist for
    the duration of the with block; npucc errors name the set (sample_inputs[K]), not
    the file."""
    value = given.get("sample_inputs")
    items: List[Any] = [] if value is None or _is_path(value) else (
        [value] if isinstance(value, Mapping) else list(value))
    if not any(isinstance(item, Mapping) for item in items):
        yield given
        return
    with tempfile.TemporaryDirectory(prefix="npucc-samples-") as folder:
        names: Dict[str, str] = {}
        paths = []
        for index, item in enumerate(items):
            if isinstance(item, Mapping):
                path = os.path.join(folder, f"set{index}.npz")
                _write_set(path, index, item)
                names[path] = f"sample_inputs[{index}] (arrays)"
                item = path
            paths.append(item)
        try:
            yield dict(given, sample_inputs=paths)
        except _npucc.Error as error:
            raise _renamed(error, names)
