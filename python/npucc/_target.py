"""npucc.Target: an accuracy target computed by the caller's own function, for
compile(accuracy_target=...), beside or instead of the built-in figures."""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping, Sequence
from typing import Any, Callable, List, Optional, Tuple

from ._errors import usage_error

Outputs = Mapping[str, Any]  # output name -> numpy.ndarray

# What a clause's label may hold (the target grammar's brackets, commas, bounds and spaces
# are its syntax).
_LABEL = re.compile(r"[^\[\],=<>\s]+")


class Target:
    """An accuracy target your own function computes, checked on every sample set.

    The accuracy repair (compile(accuracy_target=...)) calls the function once per sample
    set and per graph it measures, with two dicts of output name -> numpy.ndarray: the high
    graph's outputs and the low side's (the low graph's emulation), in float32 where the
    graph's output is float32 (a bfloat16 output arrives as float32 values). The target
    holds when it holds on every set (the search's sets and the validation sets alike).

    Two forms:
        Target(check=fn)                    fn(high, low) -> bool: True when the set is good
        Target(score=fn, at_least=0.98)     fn(high, low) -> float: the score on every set
        Target(score=fn, at_most=0.05)      must be >= at_least (or <= at_most)

    A score's value on the high outputs compared with themselves (fn(high, high)) is the
    best a low graph can reach; the search keeps a margin from the bound toward it, as it
    does for cosine, and refuses a bound that value already misses. A check keeps no margin.
    A NaN score is undefined on that set and never meets the bound.

    key names what the function computes, with a version ("char-accuracy-v2"): a function
    cannot be hashed, so the cache key holds this name instead, and a compile with it is
    cached like any other. Change the key whenever the function changes what it returns, or
    a hit gives you the result judged by the old one. Without a key the compile is not
    cached (result.cache == "bypass", and one NpuccWarning says why).

    An exception in the function stops the compile with one npucc.Error naming the function
    and the sample set (the exception chained as its __cause__); nothing is written.
    """

    def __init__(self, check: Optional[Callable[[Outputs, Outputs], bool]] = None, *,
                 score: Optional[Callable[[Outputs, Outputs], float]] = None,
                 at_least: Optional[float] = None, at_most: Optional[float] = None,
                 key: Optional[str] = None) -> None:
        if (check is None) == (score is None):
            raise usage_error("npucc.Target: give check=FUNCTION or score=FUNCTION (one of them)")
        function = check if check is not None else score
        if not callable(function):
            raise usage_error(f"npucc.Target: {function!r} is not callable",
                              "give a function (high_outputs, low_outputs) -> value")
        if check is not None and (at_least is not None or at_most is not None):
            raise usage_error("npucc.Target: at_least and at_most bound a score, not a check")
        if score is not None and (at_least is None) == (at_most is None):
            raise usage_error("npucc.Target: a score takes at_least=X or at_most=X (one of them)")
        bound = at_least if at_least is not None else at_most
        if bound is not None and not (isinstance(bound, numbers.Real) and math.isfinite(bound)):
            raise usage_error(f"npucc.Target: the bound {bound!r} is not a finite number")
        if key is not None and not (isinstance(key, str) and _LABEL.fullmatch(key)):
            raise usage_error(f"npucc.Target: key {key!r} is not a name",
                              "give letters, digits and -_.:/@+ (no spaces, commas, brackets, "
                              "'=', '<' or '>'), e.g. 'char-accuracy-v2'")
        self.function = function
        self.check = check is not None
        self.at_least = at_least
        self.at_most = at_most
        self.key = key

    @property
    def name(self) -> str:
        """How messages name the function: module.qualname."""
        module = getattr(self.function, "__module__", None) or ""
        qualname = getattr(self.function, "__qualname__", None) or repr(self.function)
        return f"{module}.{qualname}" if module else qualname

    def __repr__(self) -> str:
        bound = ("" if self.check else f", at_least={self.at_least!r}" if self.at_least is not None
                 else f", at_most={self.at_most!r}")
        key = f", key={self.key!r}" if self.key else ""
        return f"npucc.Target({'check' if self.check else 'score'}={self.name}{bound}{key})"

    def _clause(self, label: str) -> str:
        """The target grammar's clause for this function under `label`."""
        if self.check:
            return f"check[{label}]>=1"
        bound = self.at_least if self.at_least is not None else self.at_most
        return f"score[{label}]{'>=' if self.at_least is not None else '<='}{float(bound)!r}"

    def _caller(self, failures: List[BaseException]) -> Callable[[Outputs, Outputs], float]:
        """The function as the library calls it: its value as a float (a check: 1.0 or 0.0);
        an exception (a wrong return type too) is kept in `failures` and raised again."""
        def call(high: Outputs, low: Outputs) -> float:
            try:
                return self._number(self.function(high, low))
            except BaseException as error:
                failures.append(error)
                raise
        return call

    def _number(self, value: Any) -> float:
        import numpy  # the outputs are NumPy arrays: NumPy is there

        if isinstance(value, numpy.ndarray) and value.shape == ():
            value = value[()]
        if self.check:
            if not isinstance(value, (bool, numpy.bool_)):
                raise TypeError(f"returned {type(value).__name__}, not a bool (a check "
                                "says whether the set's low outputs are good enough)")
            return 1.0 if value else 0.0
        if isinstance(value, (bool, numpy.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"returned {type(value).__name__}, not a number (a score)")
        return float(value)


def _label_of(target: Target, index: int, taken: set) -> str:
    """The key, else the function's name made a label (unique within the compile)."""
    if target.key:
        if target.key in taken:
            raise usage_error(f"accuracy_target: two targets have the key {target.key!r}",
                              "give each function its own key")
        return target.key
    label = re.sub(r"[\[\],=<>\s]", "_", target.name) or f"function{index}"
    while label in taken:
        label = f"{label}#{index}"
    return label


def split(value: Any) -> Tuple[Optional[str], List[Tuple[str, Target]]]:
    """accuracy_target as given (text, a Target, a function, or a sequence of them) -> the
    text the library takes, every Target's clause included, and (label, Target) of each."""
    if value is None or isinstance(value, str):
        return value, []
    items = list(value) if isinstance(value, Sequence) else [value]
    texts: List[str] = []
    targets: List[Tuple[str, Target]] = []
    taken: set = set()
    for index, item in enumerate(items):
        if isinstance(item, str):
            texts.append(item)
            continue
        target = item if isinstance(item, Target) else Target(check=item) if callable(item) else None
        if target is None:
            raise TypeError(f"compile(): accuracy_target cannot hold a {type(item).__name__}: "
                            "give text, an npucc.Target or a function (high, low) -> bool")
        label = _label_of(target, index, taken)
        taken.add(label)
        targets.append((label, target))
        texts.append(target._clause(label))
    return ",".join(texts), targets
