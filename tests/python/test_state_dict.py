"""Schedule.state_dict()/load_state_dict(): PyTorch's convention, so the one-way switch
survives a run resumed from a checkpoint, in every checkpoint format a training script
uses, and the same document as `npucc schedule --state-file`."""

import copy
import io
import json
import pickle

import pytest

import npucc
from conftest import cli, cli_error


def switched(mode="fast|step|0.9"):
    schedule = npucc.Schedule(mode)
    schedule.report_step(9000, 10000)
    assert schedule.role == "high"
    return schedule


def resumed(state, mode="fast|step|0.9"):
    schedule = npucc.Schedule(mode)
    schedule.load_state_dict(state)
    return schedule


def test_the_state_is_a_plain_dict():
    state = switched().state_dict()
    assert state == {
        "format": "npucc-schedule-state",
        "format_version": 1,
        "mode": "fast|step|0.9",
        "role": "high",
        "switched": True,
    }
    assert npucc.Schedule("fast1|loss").state_dict()["role"] == "low"


def test_a_switched_schedule_stays_high_after_a_resume():
    schedule = resumed(switched().state_dict())
    assert schedule.role == "high" and schedule.switched
    assert schedule.report_step(1, 10000) == "high"


def test_a_state_saved_before_the_switch_runs_low_again():
    schedule = switched()
    schedule.load_state_dict(npucc.Schedule("fast|step|0.9").state_dict())
    assert schedule.role == "low"
    assert schedule.report_step(1, 10000) == "low"


def test_round_trip_through_torch_save_and_load(tmp_path):
    torch = pytest.importorskip("torch")
    checkpoint = {"step": 9001, "schedule": switched().state_dict()}
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    buffer.seek(0)
    assert resumed(torch.load(buffer)["schedule"]).role == "high"
    path = tmp_path / "checkpoint.pt"
    torch.save(checkpoint, path)
    assert resumed(torch.load(path)["schedule"]).role == "high"


def test_round_trip_through_json_pickle_and_copy():
    state = switched().state_dict()
    assert resumed(json.loads(json.dumps(state))).role == "high"
    assert resumed(pickle.loads(pickle.dumps(state))).role == "high"
    assert resumed(copy.deepcopy(state)).role == "high"


def test_the_state_is_the_cli_state_file(tmp_path):
    state_file = tmp_path / "schedule.json"
    cli("schedule", "--accelerate-train-mode", "fast|step|0.9", "--step", 9000, "--total-step", 10000,
        "--state-file", state_file)
    with open(state_file, encoding="utf-8") as file:
        assert json.load(file) == switched().state_dict()
    # And the other way: a state the Python side saved, continued by the CLI.
    state_file.write_text(json.dumps(switched("fast|step|0.5").state_dict()))
    shown = cli("schedule", "--accelerate-train-mode", "fast|step|0.5", "--step", 1, "--total-step", 10000,
                "--state-file", state_file)
    assert shown.stdout.strip() == "high"


def test_a_state_of_another_mode_is_refused_naming_both():
    with pytest.raises(ValueError) as caught:
        resumed(switched("fast|step|0.9").state_dict(), mode="fast|step|0.5")
    assert "fast|step|0.9" in str(caught.value) and "fast|step|0.5" in str(caught.value)


@pytest.mark.parametrize(
    "state",
    [
        {},
        {"format": "something-else", "format_version": 1, "mode": "fast|step|0.9", "role": "low"},
        {"format": "npucc-schedule-state", "format_version": 99, "mode": "fast|step|0.9", "role": "low"},
        {"format": "npucc-schedule-state", "format_version": 1, "mode": "fast|step|0.9", "role": "mid"},
        {"format": "npucc-schedule-state", "format_version": 1, "mode": "slow|step", "role": "low"},
    ],
)
def test_a_state_that_is_not_one_is_refused(state):
    with pytest.raises(ValueError, match="the checkpoint's schedule state"):
        resumed(state)
    # The way out is the program's, not the CLI's (issue 31): no --state-file in it.
    with pytest.raises(ValueError) as caught:
        resumed(state)
    assert "--state-file" not in str(caught.value)


def test_the_cli_refuses_the_same_documents(tmp_path):
    state_file = tmp_path / "state.json"
    state_file.write_text(json.dumps({"format": "npucc-schedule-state", "format_version": 1,
                                      "mode": "fast|step|0.9", "role": "mid"}))
    status, line = cli_error("schedule", "--accelerate-train-mode", "fast|step|0.9", "--step", 1,
                             "--total-step", 10, "--state-file", state_file)
    with pytest.raises(ValueError) as caught:
        resumed(json.loads(state_file.read_text()))
    # The same complaint; the CLI names its file where Python names the checkpoint.
    complaint = str(caught.value).split("the checkpoint's schedule state", 1)[1]
    assert complaint in line


def test_load_state_dict_wants_a_mapping():
    with pytest.raises(TypeError, match="mapping"):
        npucc.Schedule("fast|step").load_state_dict("high")
