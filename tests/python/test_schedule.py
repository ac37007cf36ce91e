"""SPEC §1's accelerate_train_mode table and switch rule, through npucc.Schedule, checked
against the rule itself and against `npucc schedule` (the CLI) for the same values."""

import dataclasses
import json
import math
import pickle

import pytest

import npucc
from conftest import cli, cli_error, raised

VALID = [
    # text, type, trigger, ratio (a missing or empty third field takes the default)
    ("fast|step", "fast", "step", 0.9),
    ("fast|step|", "fast", "step", 0.9),
    ("fast1|step|0.2", "fast1", "step", 0.2),
    ("fast|step|0.9", "fast", "step", 0.9),
    ("fast1|step|0.55", "fast1", "step", 0.55),
    ("fast|loss", "fast", "loss", 1.05),
    ("fast1|loss|", "fast1", "loss", 1.05),
    ("fast|loss|1.01", "fast", "loss", 1.01),
    ("fast1|loss|1.5", "fast1", "loss", 1.5),
]

INVALID = [
    "",
    "fast",
    "slow|step",
    "fast|epoch",
    "fast|step|0.1",
    "fast|step|0.95",
    "fast|loss|1.6",
    "fast|loss|1.0",
    "fast|step|abc",
    "fast|step|0.9|x",
    "FAST|step",
]


@pytest.mark.parametrize("text,type_,trigger,ratio", VALID)
def test_valid_modes_parse_as_the_cli_parses_them(text, type_, trigger, ratio):
    mode = npucc.parse_accelerate_train_mode(text)
    assert (mode.type, mode.trigger, mode.ratio) == (type_, trigger, ratio)
    assert mode.low_precision == ("float16" if type_ == "fast" else "bfloat16")
    args = ["--step", 1, "--total-step", 10] if trigger == "step" else ["--loss", 5, "--final-loss", 1]
    shown = json.loads(cli("schedule", "--accelerate-train-mode", text, *args, "--json").stdout)
    assert str(mode) == shown["mode"]
    assert (mode.type, mode.trigger, mode.ratio, mode.low_precision) == (
        shown["type"],
        shown["trigger"],
        shown["ratio"],
        shown["low_precision"],
    )


@pytest.mark.parametrize("text", INVALID)
def test_invalid_modes_raise_value_error_with_the_cli_message(text):
    status, line = cli_error("schedule", "--accelerate-train-mode", text, "--step", 1, "--total-step", 2)
    assert status == 2
    with pytest.raises(ValueError) as caught:
        npucc.parse_accelerate_train_mode(text)
    assert str(caught.value) == line
    assert isinstance(caught.value, npucc.UsageError)
    with pytest.raises(ValueError) as caught:
        npucc.Schedule(text)
    assert str(caught.value) == line


def test_the_mode_object_is_frozen_validated_and_comparable():
    mode = npucc.parse_accelerate_train_mode("fast1|loss")
    with pytest.raises(dataclasses.FrozenInstanceError):
        mode.ratio = 1.2
    assert mode == npucc.AccelerateTrainMode("fast1", "loss", 1.05)
    assert hash(mode) == hash(npucc.AccelerateTrainMode("fast1", "loss", 1.05))
    assert pickle.loads(pickle.dumps(mode)) == mode
    assert str(pickle.loads(pickle.dumps(mode))) == "fast1|loss|1.05"
    with pytest.raises(ValueError, match="out of range"):
        npucc.AccelerateTrainMode("fast", "step", 0.95)
    assert npucc.Schedule(mode).mode == mode


def step_rule(step, total, ratio, per_loop):
    """SPEC §1, written out: floor(total * ratio) taken exactly in decimal."""
    threshold = (total * round(ratio * 100)) // 100
    return "high" if step >= threshold or step + per_loop >= total else "low"


STEP_CASES = [
    # (mode, step, total_step, iterations_per_loop)
    ("fast|step|0.9", 8999, 10000, 1),  # floor(10000 * 0.9) is 9000, not 8999
    ("fast|step|0.9", 9000, 10000, 1),
    ("fast|step|0.9", 0, 10000, 1),
    ("fast1|step|0.2", 1, 10, 1),
    ("fast1|step|0.2", 2, 10, 1),
    ("fast|step|0.5", 49, 100, 1),
    ("fast|step|0.5", 50, 100, 1),
    ("fast|step|0.9", 5, 10, 4),  # 5 + 4 < 10: low
    ("fast|step|0.9", 6, 10, 4),  # the iterations-per-loop guard: 6 + 4 >= 10, before 9
    ("fast|step|0.9", 95, 100, 5),
    ("fast|step|0.9", 7, 7, 1),
    ("fast|step|0.3", 0, 1, 1),  # one step in all: the guard switches at once
    ("fast|step|0.7", 69, 100, 1),
    ("fast|step|0.7", 70, 100, 1),
]


@pytest.mark.parametrize("mode,step,total,per_loop", STEP_CASES)
def test_step_rule_matches_spec_and_cli(mode, step, total, per_loop):
    role = npucc.Schedule(mode).report_step(step, total, per_loop)
    ratio = npucc.parse_accelerate_train_mode(mode).ratio
    assert role == step_rule(step, total, ratio, per_loop)
    shown = cli(
        "schedule", "--accelerate-train-mode", mode, "--step", step, "--total-step", total,
        "--iterations-per-loop", per_loop,
    ).stdout.strip()
    assert str(role) == shown


LOSS_CASES = [
    # (mode, loss, final_loss, expected)
    ("fast|loss|1.05", 0.0, 0.5, "low"),  # 0: no loss reported yet, never switches
    ("fast|loss|1.05", 0.53, 0.5, "low"),
    ("fast|loss|1.05", 0.525, 0.5, "high"),  # final_loss * ratio exactly
    ("fast|loss|1.05", 0.52, 0.5, "high"),
    ("fast1|loss|1.1", 1.21, 1.1, "high"),  # equal in decimal: switches (tolerance)
    ("fast1|loss|1.1", 1.22, 1.1, "low"),
    ("fast|loss|1.5", 10.0, 7.1, "high"),
    ("fast|loss|1.01", 7.2, 7.1, "low"),
]


@pytest.mark.parametrize("mode,loss,final_loss,expected", LOSS_CASES)
def test_loss_rule_matches_spec_and_cli(mode, loss, final_loss, expected):
    role = npucc.Schedule(mode).report_loss(loss, final_loss)
    assert role == expected
    shown = cli(
        "schedule", "--accelerate-train-mode", mode, "--loss", loss, "--final-loss", final_loss
    ).stdout.strip()
    assert str(role) == shown


def test_the_switch_is_one_way_for_steps():
    schedule = npucc.Schedule("fast|step|0.9")
    assert schedule.role == "low" and not schedule.switched
    assert schedule.report_step(8999, 10000) == "low"
    assert schedule.report_step(9000, 10000) == "high"
    assert schedule.report_step(10, 10000) == "high"  # an earlier step after the switch
    assert schedule.role is npucc.GraphRole.HIGH and schedule.switched


def test_the_loss_latch_holds_when_the_loss_rises_again():
    schedule = npucc.Schedule("fast1|loss|1.05")
    assert schedule.report_loss(0, 0.5) == "low"
    assert schedule.report_loss(0.9, 0.5) == "low"
    assert schedule.report_loss(0.51, 0.5) == "high"
    assert schedule.report_loss(3.0, 0.5) == "high"
    assert schedule.report_loss(0, 0.5) == "high"


def cli_message(status_and_line):
    """The CLI's line without the hint naming its flags: ' (from --step "-1", ...)'."""
    status, line = status_and_line
    assert status == 2
    return line[: line.rindex(" (from ")]


@pytest.mark.parametrize(
    "step,total,per_loop", [(-1, 10, 1), (1, 0, 1), (1, 5, 0), (1, -3, 1)]
)
def test_bad_step_reports_raise_value_error_with_the_cli_message(step, total, per_loop):
    expected = cli_message(
        cli_error(
            "schedule", "--accelerate-train-mode", "fast|step", "--step", step, "--total-step", total,
            "--iterations-per-loop", per_loop,
        )
    )
    error = raised(lambda: npucc.Schedule("fast|step").report_step(step, total, per_loop))
    assert isinstance(error, ValueError)
    assert str(error) == expected


@pytest.mark.parametrize("loss,final_loss", [(-1, 1), (math.nan, 1), (1, 0), (1, math.inf)])
def test_bad_loss_reports_raise_value_error_with_the_cli_message(loss, final_loss):
    expected = cli_message(
        cli_error("schedule", "--accelerate-train-mode", "fast|loss", "--loss", loss, "--final-loss", final_loss)
    )
    error = raised(lambda: npucc.Schedule("fast|loss").report_loss(loss, final_loss))
    assert isinstance(error, ValueError)
    assert str(error) == expected


def test_a_report_of_the_other_trigger_is_refused():
    with pytest.raises(ValueError, match="switches on step"):
        npucc.Schedule("fast|step").report_loss(1.0, 1.0)
    with pytest.raises(ValueError, match="switches on loss"):
        npucc.Schedule("fast|loss").report_step(1, 10)


def test_reports_take_any_integer_or_number_and_refuse_other_types():
    torch = pytest.importorskip("torch")
    schedule = npucc.Schedule("fast|step|0.9")
    assert schedule.report_step(torch.tensor(3), torch.tensor(10)) == "low"
    with pytest.raises(TypeError, match="step must be a whole number"):
        schedule.report_step(1.5, 10)
    loss_schedule = npucc.Schedule("fast|loss")
    assert loss_schedule.report_loss(torch.tensor(0.52), 0.5) == "high"
    with pytest.raises(TypeError, match="loss must be a number"):
        loss_schedule.report_loss("0.5", 1)


def test_graph_role_is_the_string_of_its_role():
    assert npucc.GraphRole.LOW == "low" and str(npucc.GraphRole.HIGH) == "high"
    assert f"{npucc.GraphRole.LOW}" == "low"
    assert {"low": 1, "high": 2}[npucc.GraphRole.HIGH] == 2
    assert npucc.GraphRole("high") is npucc.GraphRole.HIGH


def test_tell_me_step_or_loss_hook_takes_the_seed_keywords():
    hook = npucc.TellMeStepOrLossHook("fast|step|0.9", total_step=10000)
    assert isinstance(hook, npucc.Schedule)
    assert hook.report(step=8999) == "low"
    assert hook.report(step=9000) == "high"
    current = {"step": 0}
    hook = npucc.TellMeStepOrLossHook("fast|step|0.9", step=lambda: current["step"], total_step=10)
    assert hook.report() == "low"
    current["step"] = 9
    assert hook.report() == "high"
    loss_hook = npucc.TellMeStepOrLossHook("fast|loss|1.05", final_loss=7.1)
    assert loss_hook.report(loss=8.0) == "low"
    assert loss_hook.report(loss=7.4) == "high"
    with pytest.raises(ValueError, match="cannot be mixed"):
        npucc.TellMeStepOrLossHook("fast|step").report(step=1, total_step=2, loss=1.0)
    with pytest.raises(ValueError, match="total_step is not given"):
        npucc.TellMeStepOrLossHook("fast|step").report(step=1)
    with pytest.raises(ValueError, match="switches on step"):
        npucc.TellMeStepOrLossHook("fast|step").report(loss=1.0, final_loss=2.0)
