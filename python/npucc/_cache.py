"""npucc.Cache: `npucc cache ls | stats | verify | purge | invalidate` as methods."""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import warnings
from typing import Any, Dict, List, Optional, Union

from . import _npucc
from ._compile import PathLike, option_values
from ._errors import NpuccWarning, usage_error


@dataclasses.dataclass(frozen=True)
class CacheEntry:
    """One cache entry: a row of `npucc cache ls`.

    Attributes:
        key: the cache key, 64 hex digits.
        model: the compiled .onnx file's stem.
        variants: role -> precision of its graphs ({"high": "float32", "low": ...}).
        compiler_version: the npucc version that wrote it.
        options: the output-changing options of its compile (canonical_options()).
        state: "ok", "other-version", "corrupt", "incomplete" or "foreign".
        problem: what is wrong when the state is not ok or other-version, else "".
        bytes: size on disk; created, last_used: seconds since the epoch.
    """

    key: str
    model: str
    variants: Dict[str, str]
    compiler_version: str
    options: Dict[str, Any]
    state: str
    problem: str
    bytes: int
    created: int
    last_used: int


@dataclasses.dataclass(frozen=True)
class CacheStats:
    """`npucc cache stats`: entries, size, states and the statistics file's counters.

    counters holds "hits", "misses", "misses.new", "bypass.REASON", "stores",
    "evictions", ... (npucc-cache(1), STATISTICS); counter(name) is 0 for one never
    counted.
    """

    path: pathlib.Path
    entries: int
    bytes: int
    states: Dict[str, int]
    counters: Dict[str, int]

    def counter(self, name: str) -> int:
        """The counter's value, 0 when it was never counted."""
        return self.counters.get(name, 0)


@dataclasses.dataclass(frozen=True)
class CacheProblem:
    """One problem `verify` found.

    kind: "corrupt", "truncated", "incomplete", "foreign-version", "stray", "unsigned"
    or "tampered"; fixed: removed by verify(fix=True); left_alone: not npucc's to remove.
    """

    kind: str
    path: pathlib.Path
    detail: str
    fixed: bool
    left_alone: bool


@dataclasses.dataclass(frozen=True)
class VerifyResult:
    """`npucc cache verify`: every entry re-hashed; failures are refused removals."""

    entries: int
    bytes: int
    problems: List[CacheProblem]
    failures: List[str]

    @property
    def ok(self) -> bool:
        """True when verify found no problem."""
        return not self.problems


@dataclasses.dataclass(frozen=True)
class RemovedEntry:
    """An entry purge() or invalidate() removed (with dry_run: would remove), and why."""

    key: str
    model: str
    compiler_version: str
    bytes: int
    why: str


@dataclasses.dataclass(frozen=True)
class Removal:
    """What purge() or invalidate() removed.

    freed: bytes of the removed entries; temporaries, temporary_bytes: stale staging files
    purge() removed; unused_blobs, unused_blob_bytes: shared weight files (weights.data)
    that purge() removed because no entry used them any more; failures: removals the
    system refused, one line each (the CLI prints them as errors and exits with status 1).
    """

    removed: List[RemovedEntry]
    freed: int
    temporaries: int
    temporary_bytes: int
    unused_blobs: int
    unused_blob_bytes: int
    failures: List[str]


def _entry(text: str) -> CacheEntry:
    """An entry from the library's presentation of it (the objects of `npucc cache ls
    --json`): variants as role -> precision, options as a dict ({} for a damaged header)."""
    item = json.loads(text)
    variants = {variant["role"]: variant["precision"] for variant in item["variants"]}
    return CacheEntry(**dict(item, variants=variants, options=item["options"] or {}))


def _removal(item: Dict[str, Any]) -> Removal:
    removed = [RemovedEntry(**entry) for entry in item["removed"]]
    return Removal(
        removed,
        item["freed"],
        item["temporaries"],
        item["temporary_bytes"],
        item["unused_blobs"],
        item["unused_blob_bytes"],
        item["failures"],
    )


def _seconds(value: Union[str, int, float, None]) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, str):
        seconds: int = _npucc.parse_age(value)
        return seconds
    if value < 0:
        raise usage_error(f"--older-than {value}: must not be negative")
    return int(value)


def _bytes(value: Union[str, int, None]) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, str):
        size: int = _npucc.parse_size(value, "--max-size")
        return size
    if value < 0:
        raise usage_error(f"--max-size {value}: must not be negative")
    return int(value)


class Cache:
    """An npucc compile cache folder, as the `npucc cache` commands see it.

    path: the folder (--cache-dir); None takes the configured one ($NPUCC_CACHE_DIR,
    config.toml, else ~/.cache/npucc). The keywords are the cache options of `npucc
    cache` commands (read_only, cache_shared, cache_key_file, options: an Ascend options
    file). Each method opens the folder afresh: a folder that is not an npucc cache
    raises npucc.Error with the CLI's message. Listing writes nothing; read_only refuses
    changes. The GIL is released while a method reads or changes the folder.
    """

    def __init__(
        self,
        path: Optional[PathLike] = None,
        *,
        read_only: Optional[bool] = None,
        cache_shared: Optional[str] = None,
        cache_key_file: Optional[PathLike] = None,
        options: Optional[PathLike] = None,
    ) -> None:
        given = {
            "cache_dir": path,
            "read_only": read_only,
            "cache_shared": cache_shared,
            "cache_key_file": cache_key_file,
            "options": options,
        }
        self._cache = _npucc.Cache(option_values(given))
        for line in self._cache.warnings:
            warnings.warn(line, NpuccWarning, stacklevel=2)

    @classmethod
    def init(cls, path: PathLike, *, shared: str = "auto") -> "Cache":
        """Creates a cache folder (`npucc cache init PATH --shared SHARED`) and opens it.

        shared: "auto", "no" (private), "group" (setgid, group-writable) or "world".
        The folder may exist if it is empty or already a cache.
        """
        _npucc.init_cache(os.fspath(path), shared)
        return cls(path)

    @property
    def path(self) -> pathlib.Path:
        """The cache folder."""
        return pathlib.Path(self._cache.dir)

    def entries(self) -> List[CacheEntry]:
        """Every entry, in the folder's order (`npucc cache ls`)."""
        return [_entry(item) for item in self._cache.entries()]

    def stats(self) -> CacheStats:
        """Entries, size and counters (`npucc cache stats`)."""
        item = self._cache.stats()
        path = pathlib.Path(item["dir"])
        return CacheStats(path, item["entries"], item["bytes"], item["states"], item["counters"])

    def zero_stats(self) -> None:
        """Resets every counter but last_cleanup (`npucc cache stats --zero`)."""
        self._cache.zero_stats()

    def verify(self, fix: bool = False) -> VerifyResult:
        """Re-hashes every entry (`npucc cache verify`); fix=True removes what is broken."""
        item = self._cache.verify(bool(fix))
        problems = [
            CacheProblem(**dict(problem, path=pathlib.Path(problem["path"])))
            for problem in item["problems"]
        ]
        return VerifyResult(item["entries"], item["bytes"], problems, item["failures"])

    def purge(
        self,
        *,
        all: bool = False,  # noqa: A002 - the CLI's --all
        older_than: Union[str, int, float, None] = None,
        max_size: Union[str, int, None] = None,
        dry_run: bool = False,
    ) -> Removal:
        """Removes entries (`npucc cache purge`): all, unused for older_than, or down to max_size.

        older_than: "7d", "12h", "30m" or seconds; max_size: "10G", "500M" or bytes (least
        recently used go first). With no condition only stale temporary files go.
        """
        purged = self._cache.purge(bool(all), _seconds(older_than), _bytes(max_size), bool(dry_run))
        return _removal(purged)

    def invalidate(
        self,
        *,
        compiler_version: Optional[str] = None,
        model: Optional[str] = None,
        key: Optional[str] = None,
        dry_run: bool = False,
    ) -> Removal:
        """Removes the entries every given condition matches (`npucc cache invalidate`).

        compiler_version: of that npucc version; model: of that model (the .onnx stem);
        key: whose key starts with these (at least 4) hex digits. With none of the three:
        the entries of every compiler version but this one.
        """
        removed = self._cache.invalidate(compiler_version, model or "", key or "", bool(dry_run))
        return _removal(removed)

    def __repr__(self) -> str:
        return f"npucc.Cache({str(self.path)!r})"
