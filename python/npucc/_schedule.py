"""accelerate_train_mode and its schedule (Ascend's TellMeStepOrLossHook)."""

from __future__ import annotations

import dataclasses
import enum
import json
import operator
from collections.abc import Mapping
from typing import Any, Callable, Dict, Optional, Union

from . import _npucc
from ._errors import usage_error


class GraphRole(str, enum.Enum):
    """Which compiled graph runs now: LOW (the mixed-precision graph) or HIGH.

    A GraphRole is a str: GraphRole.LOW == "low", str(GraphRole.HIGH) == "high", and it
    looks up the graph of its role in CompileResult.graphs. Training starts LOW and
    switches to HIGH once (Schedule).
    """

    LOW = "low"
    HIGH = "high"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


@dataclasses.dataclass(frozen=True)
class AccelerateTrainMode:
    """A parsed accelerate_train_mode value, "TYPE|TRIGGER[|RATIO]" (npucc-schedule(1)).

    Attributes:
        type: "fast" (the low phase runs in float16) or "fast1" (bfloat16).
        trigger: "step" or "loss": what ends the low-precision phase.
        ratio: step: 0.2 to 0.9 (default 0.9), the share of the steps that run low;
            loss: 1.01 to 1.5 (default 1.05), switch once loss <= final_loss * ratio.

    Frozen and validated: constructing one with values out of range raises
    npucc.UsageError (a ValueError) with the CLI's message. str(mode) is the canonical
    text, "fast|step|0.9".
    """

    type: str
    trigger: str
    ratio: float

    def __post_init__(self) -> None:
        parsed = _npucc.parse_accelerate_train_mode(f"{self.type}|{self.trigger}|{self.ratio!r}")
        object.__setattr__(self, "ratio", parsed[2])
        object.__setattr__(self, "_text", parsed[4])  # the library's canonical spelling

    @property
    def low_precision(self) -> str:
        """The type of the low-precision phase: "float16" (fast) or "bfloat16" (fast1)."""
        return "float16" if self.type == "fast" else "bfloat16"

    def __str__(self) -> str:
        text: str = self.__dict__["_text"]
        return text


def parse_accelerate_train_mode(text: str) -> AccelerateTrainMode:
    """Parses and validates an accelerate_train_mode value such as "fast|step|0.9".

    A missing or empty RATIO takes the trigger's default. Raises npucc.UsageError (a
    ValueError) with the message `npucc schedule --accelerate-train-mode TEXT` gives.
    """
    fields = _npucc.parse_accelerate_train_mode(text)
    return AccelerateTrainMode(fields[0], fields[1], fields[2])


ModeLike = Union[str, AccelerateTrainMode]


def _whole(value: Any, name: str) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be a whole number, not {type(value).__name__}") from None


def _real(value: Any, name: str) -> float:
    try:
        if isinstance(value, (str, bytes)):
            raise TypeError  # float("0.5") would parse it: a mistake, not a loss
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}") from None


class Schedule:
    """Which graph training runs now, from the reported step or loss (npucc-schedule(1)).

    It starts LOW and switches to HIGH exactly once: after the switch every report returns
    HIGH, whatever it says. The rule, given the mode's ratio:

    - step trigger: HIGH once step >= floor(total_step * ratio), or
      step + iterations_per_loop >= total_step (the next report would come too late);
    - loss trigger: HIGH once loss != 0 and loss <= final_loss * ratio (0 means "no loss
      yet" and never switches).

    Every report is validated (a negative step, a loss report for a step mode, ...:
    npucc.UsageError with the library's message). state_dict()/load_state_dict() follow
    PyTorch's convention, so the switch survives a run resumed from a checkpoint::

        schedule = npucc.Schedule("fast1|step|0.9")
        for step in range(total_steps):
            low = schedule.report_step(step, total_steps) == "low"
            ...
        torch.save({"model": model.state_dict(), "schedule": schedule.state_dict()}, path)
    """

    def __init__(self, mode: ModeLike) -> None:
        self._schedule = _npucc.PrecisionSchedule(str(mode))

    @property
    def mode(self) -> AccelerateTrainMode:
        """The accelerate_train_mode this schedule follows."""
        fields = self._schedule.mode
        return AccelerateTrainMode(fields[0], fields[1], fields[2])

    @property
    def role(self) -> GraphRole:
        """The graph the last report chose (LOW before any report)."""
        return GraphRole(self._schedule.role)

    @property
    def switched(self) -> bool:
        """True once the schedule has switched to HIGH (it never switches back)."""
        return self.role is GraphRole.HIGH

    def report_step(self, step: int, total_step: int, iterations_per_loop: int = 1) -> GraphRole:
        """Reports the current step (0-based) of total_step; returns the graph to run.

        iterations_per_loop: steps between two reports (Ascend's iterations_per_loop), so
        the switch is not missed when reports come once per loop. Integers of any kind
        (int, numpy, a 0-d integer tensor) are accepted.
        """
        role = self._schedule.report_step(
            _whole(step, "step"),
            _whole(total_step, "total_step"),
            _whole(iterations_per_loop, "iterations_per_loop"),
        )
        return GraphRole(role)

    def report_loss(self, loss: float, final_loss: float) -> GraphRole:
        """Reports the current loss and the target (final) loss; returns the graph to run.

        A loss of 0 means "not reported yet" and never switches. Any number converts (a
        float, a one-element tensor).
        """
        role = self._schedule.report_loss(_real(loss, "loss"), _real(final_loss, "final_loss"))
        return GraphRole(role)

    def state_dict(self) -> Dict[str, Any]:
        """The schedule's state as a plain dict, for a checkpoint (torch.save, JSON, pickle).

        {"format": "npucc-schedule-state", "format_version": 1, "mode": "fast|step|0.9",
        "role": "low" | "high", "switched": bool}: the document `npucc schedule
        --state-file` keeps.
        """
        state: Dict[str, Any] = json.loads(self._schedule.state_json())
        return state

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Continues from a saved state_dict(): the role becomes the saved one.

        A state saved before the switch runs LOW again; one saved after it stays HIGH.
        A state of another mode, or anything that is not such a state, raises
        npucc.UsageError (a ValueError) naming what is wrong.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"state_dict must be a mapping, not {type(state_dict).__name__}")
        self._schedule.restore_json(json.dumps(dict(state_dict)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.mode)!r}, role={self.role.value!r})"


Value = Union[int, float, Callable[[], Any], None]


class TellMeStepOrLossHook(Schedule):
    """Ascend's TellMeStepOrLossHook: a Schedule under the keyword names Ascend's hook takes.

    Ascend's training script tells the NPU software the current step and the total
    steps, or the current loss and the target loss::

        TellMeStepOrLossHook(step='global_step:0', total_step=max_steps)
        TellMeStepOrLossHook(loss='loss:0', final_loss=7.1)

    Here the mode comes first (Ascend reads it from ExperimentalConfig), the keywords
    keep their names, and report() gives the graph to run::

        hook = npucc.TellMeStepOrLossHook("fast|step|0.9", total_step=max_steps)
        role = hook.report(step=global_step)

    Values given to the constructor are the defaults of report(). Ascend's step and loss
    are tensor names read at each run; a callable plays that part here: it is called at
    every report (step=lambda: trainer.global_step).
    """

    def __init__(
        self,
        accelerate_train_mode: ModeLike,
        *,
        step: Value = None,
        total_step: Value = None,
        loss: Value = None,
        final_loss: Value = None,
        iterations_per_loop: Value = 1,
    ) -> None:
        super().__init__(accelerate_train_mode)
        self._defaults = {
            "step": step,
            "total_step": total_step,
            "loss": loss,
            "final_loss": final_loss,
            "iterations_per_loop": iterations_per_loop,
        }

    def report(
        self,
        *,
        step: Value = None,
        total_step: Value = None,
        loss: Value = None,
        final_loss: Value = None,
        iterations_per_loop: Value = None,
    ) -> GraphRole:
        """Reports step and total_step, or loss and final_loss; returns the graph to run.

        What is not given here comes from the constructor; a callable is called now.
        """
        given = {
            "step": step,
            "total_step": total_step,
            "loss": loss,
            "final_loss": final_loss,
            "iterations_per_loop": iterations_per_loop,
        }
        values = {
            name: _current(self._defaults[name] if value is None else value)
            for name, value in given.items()
        }
        steps = values["step"] is not None or values["total_step"] is not None
        losses = values["loss"] is not None or values["final_loss"] is not None
        if steps and losses:
            raise usage_error(
                "step values and loss values cannot be mixed",
                "the mode's trigger decides: step needs step and total_step, loss needs "
                "loss and final_loss",
            )
        if losses:
            return self.report_loss(_needed(values, "loss"), _needed(values, "final_loss"))
        per_loop = values["iterations_per_loop"]
        step, total_step = _needed(values, "step"), _needed(values, "total_step")
        return self.report_step(step, total_step, 1 if per_loop is None else per_loop)


def _current(value: Value) -> Any:
    return value() if callable(value) else value


def _needed(values: Dict[str, Any], name: str) -> Any:
    if values[name] is None:
        raise usage_error(f"{name} is not given", f"pass {name}= to report() or to the constructor")
    return values[name]
