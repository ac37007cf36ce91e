# Type stubs of the npucc package (python/npucc/__init__.py); tests/python/test_package.py
# checks that every public name is here.
import enum
import os
import pathlib
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

__version__: str

_Path = Union[str, os.PathLike[str]]
_Value = Union[int, float, Callable[[], Any], None]

class Error(RuntimeError):
    message: str
    hint: str
    exit_status: int

class UsageError(Error, ValueError): ...
class NpuccWarning(UserWarning): ...

class GraphRole(str, enum.Enum):
    LOW = "low"
    HIGH = "high"

class AccelerateTrainMode:
    type: str
    trigger: str
    ratio: float
    def __init__(self, type: str, trigger: str, ratio: float) -> None: ...
    @property
    def low_precision(self) -> str: ...

def parse_accelerate_train_mode(text: str) -> AccelerateTrainMode: ...

class Schedule:
    def __init__(self, mode: Union[str, AccelerateTrainMode]) -> None: ...
    @property
    def mode(self) -> AccelerateTrainMode: ...
    @property
    def role(self) -> GraphRole: ...
    @property
    def switched(self) -> bool: ...
    def report_step(self, step: int, total_step: int, iterations_per_loop: int = 1) -> GraphRole: ...
    def report_loss(self, loss: float, final_loss: float) -> GraphRole: ...
    def state_dict(self) -> Dict[str, Any]: ...
    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None: ...

class TellMeStepOrLossHook(Schedule):
    def __init__(
        self,
        accelerate_train_mode: Union[str, AccelerateTrainMode],
        *,
        step: _Value = None,
        total_step: _Value = None,
        loss: _Value = None,
        final_loss: _Value = None,
        iterations_per_loop: _Value = 1,
    ) -> None: ...
    def report(
        self,
        *,
        step: _Value = None,
        total_step: _Value = None,
        loss: _Value = None,
        final_loss: _Value = None,
        iterations_per_loop: _Value = None,
    ) -> GraphRole: ...

class CompileResult:
    graphs: Dict[str, pathlib.Path]
    precisions: Dict[str, str]
    cache: str
    key: Optional[str]
    reason: str
    manifest: Dict[str, Any]
    manifest_path: pathlib.Path

def compile(
    model: _Path,
    output: _Path,
    *,
    input_shape: Union[str, Mapping[str, Sequence[int]], None] = None,
    external_data: Optional[bool] = None,
    passes: Union[str, Sequence[str], None] = None,
    target_opset: Optional[int] = None,
    accelerate_train_mode: Union[str, AccelerateTrainMode, None] = None,
    precision_mode: Optional[str] = None,
    precision_mode_v2: Optional[str] = None,
    modify_mixlist: Optional[_Path] = None,
    keep_dtype: Optional[_Path] = None,
    keep_io_types: Optional[bool] = None,
    low_precision_weights: Optional[bool] = None,
    emit_emulation: Optional[bool] = None,
    options: Optional[_Path] = None,
    cache_dir: Optional[_Path] = None,
    max_size: Union[str, int, None] = None,
    read_only: Optional[bool] = None,
    cache_shared: Optional[str] = None,
    cache_key_file: Optional[_Path] = None,
    link_mode: Optional[str] = None,
    digest_cache: Optional[str] = None,
    remote_cache: Optional[str] = None,
    remote_read_only: Optional[bool] = None,
    remote_connect_timeout: Union[float, str, None] = None,
    remote_timeout: Union[float, str, None] = None,
    remote_token_file: Optional[_Path] = None,
    remote_credentials_file: Optional[_Path] = None,
    remote_ca_file: Optional[_Path] = None,
    remote_client_cert: Optional[_Path] = None,
    remote_client_key: Optional[_Path] = None,
    no_cache: Optional[bool] = None,
    force: Optional[bool] = None,
    max_memory: Union[str, int, None] = None,
) -> CompileResult: ...

class CacheEntry:
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

class CacheStats:
    path: pathlib.Path
    entries: int
    bytes: int
    states: Dict[str, int]
    counters: Dict[str, int]
    def counter(self, name: str) -> int: ...

class CacheProblem:
    kind: str
    path: pathlib.Path
    detail: str
    fixed: bool
    left_alone: bool

class VerifyResult:
    entries: int
    bytes: int
    problems: List[CacheProblem]
    failures: List[str]
    @property
    def ok(self) -> bool: ...

class RemovedEntry:
    key: str
    model: str
    compiler_version: str
    bytes: int
    why: str

class Removal:
    removed: List[RemovedEntry]
    freed: int
    temporaries: int
    temporary_bytes: int
    failures: List[str]

class Cache:
    def __init__(
        self,
        path: Optional[_Path] = None,
        *,
        read_only: Optional[bool] = None,
        cache_shared: Optional[str] = None,
        cache_key_file: Optional[_Path] = None,
        options: Optional[_Path] = None,
    ) -> None: ...
    @classmethod
    def init(cls, path: _Path, *, shared: str = "auto") -> Cache: ...
    @property
    def path(self) -> pathlib.Path: ...
    def entries(self) -> List[CacheEntry]: ...
    def stats(self) -> CacheStats: ...
    def zero_stats(self) -> None: ...
    def verify(self, fix: bool = False) -> VerifyResult: ...
    def purge(
        self,
        *,
        all: bool = False,
        older_than: Union[str, int, float, None] = None,
        max_size: Union[str, int, None] = None,
        dry_run: bool = False,
    ) -> Removal: ...
    def invalidate(
        self,
        *,
        compiler_version: Optional[str] = None,
        model: Optional[str] = None,
        key: Optional[str] = None,
        dry_run: bool = False,
    ) -> Removal: ...
