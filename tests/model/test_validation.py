"""Request validation: every bad input names its field and the fix; good input builds a JobSpec."""

from __future__ import annotations

import pytest

from jupyter_sched.errors import ConflictError, TimestampError, ValidationError
from jupyter_sched.model import (
    Job,
    JobKind,
    JobSpec,
    JobState,
    PriorityClass,
    parse_duration,
    parse_gpus,
    parse_memory_mib,
    parse_utc,
    profiles_from_config,
    spec_from_request,
)

BAD_BODIES = [
    pytest.param({"gpus": -1, "command": ["x"]}, "gpus", id="negative GPUs are refused"),
    pytest.param({"gpus": "two", "command": ["x"]}, "gpus", id="GPUs spelled as a word are refused"),
    pytest.param({"gpus": 1.5, "command": ["x"]}, "gpus", id="a fraction above one GPU is refused"),
    pytest.param({"gpus": True, "command": ["x"]}, "gpus", id="a boolean is not a GPU count"),
    pytest.param({"gpus": 1, "command": "python x.py"}, "command", id="command must be an argv list"),
    pytest.param({"gpus": 1}, "command", id="a job with nothing to run is refused"),
    pytest.param({"gpus": 1, "command": ["x"], "time_limit": "2hh"}, "time_limit", id="an unparseable duration is refused"),
    pytest.param({"gpus": 1, "command": ["x"], "priority": "urgent"}, "priority", id="an unknown priority class is refused"),
    pytest.param({"gpus": 1, "command": ["x"], "mem_per_gpu": "20XB"}, "mem_per_gpu", id="an unparseable memory size is refused"),
    pytest.param({"gpus": 1, "command": ["x"], "colour": "red"}, "colour", id="an unknown field is refused"),
    pytest.param({"gpus": 1, "command": ["x"], "workers": 0}, "workers", id="a gang needs at least one worker"),
    pytest.param({"gpus": 1, "command": ["x"], "model": "Z999"}, "model", id="an unknown GPU model lists the known ones"),
    pytest.param({"gpus": 1, "kind": "inference", "command": ["x"]}, "port", id="a service needs a port"),
    pytest.param({"gpus": 1, "command": ["x"], "profile": "nope"}, "profile", id="an unknown profile is refused"),
    pytest.param({"gpus": 1, "command": ["x"], "env": {"BIG": "x" * 70000}}, "env", id="a megabyte environment is refused"),
    pytest.param({"gpus": 1, "command": ["x"], "env": {"A": 1, "": "x"}}, "env", id="an empty variable name is refused"),
    pytest.param({"gpus": 1, "command": ["x"], "env": {"A=B": "1"}}, "env", id="a variable name with = is refused"),
    pytest.param({"gpus": 1, "command": ["x" * 70000]}, "command", id="a huge command line is refused"),
    pytest.param({"gpus": 1, "command": ["x\x00"]}, "command", id="a NUL byte in the command is refused"),
    # the field as sent, of two spellings of one (new user 13, N2/N5)
    pytest.param({"gpus": 1, "command": ["x"], "time_limit_s": float("inf")}, "time_limit_s",
                 id="an infinite time limit is refused"),
    pytest.param({"gpus": 1, "command": ["x"], "cpu": "inf"}, "cpu", id="infinite cores are refused"),
    pytest.param({"gpus": 1, "command": ["x"], "cpu": float("nan")}, "cpu", id="NaN cores are refused"),
    pytest.param({"gpus": 1, "command": ["x"], "cpu": True}, "cpu", id="a boolean is not a number of cores"),
    pytest.param({"gpus": 1, "command": ["x"], "cpu": "1_0"}, "cpu", id="cores must be a plain decimal"),
    pytest.param({"gpus": 1, "command": ["x"], "cpu": -1}, "cpu", id="negative cores are refused"),
    pytest.param({"gpus": 1, "command": ["x"], "cpu": 1e16}, "cpu", id="more cores than any machine are refused"),
    pytest.param({"gpus": 1, "command": ["x"], "cpu_millis": "lots"}, "cpu_millis", id="cpu_millis as a word is refused"),
    pytest.param({"gpus": 1, "command": ["x"], "cpu_millis": [1]}, "cpu_millis", id="cpu_millis as a list is refused"),
    pytest.param({"gpus": 1, "command": ["x"], "cpu_millis": -5}, "cpu_millis", id="negative cpu_millis are refused"),
    pytest.param({"gpus": 1, "command": ["x"], "cpu_millis": 1.5}, "cpu_millis", id="fractional millicores are refused"),
    pytest.param({"gpus": 1, "command": ["x"], "cpu_millis": float("inf")}, "cpu_millis",
                 id="infinite millicores are refused"),
    pytest.param({"gpus": 1, "command": ["x"], "memory": 1e30}, "memory", id="more memory than 1 PiB is refused"),
    pytest.param({"gpus": 1, "command": ["x"], "memory": float("inf")}, "memory", id="infinite memory is refused"),
    pytest.param({"gpus": 1, "command": ["x"], "memory_mib": float("nan")}, "memory_mib", id="NaN memory is refused"),
    pytest.param({"gpus": 1, "command": ["x"], "workers": float("inf")}, "workers", id="infinite workers are refused"),
    pytest.param({"gpus": 0, "command": ["x"], "workers": 10**12}, "workers",
                 id="red team 6: a trillion workers are refused (the service built a list of them: 3 GB in a minute)"),
    pytest.param({"gpus": 1, "command": ["x"], "workers": 1025}, "workers", id="more workers than a gang may have"),
    pytest.param({"gpus": 0.5, "command": ["x"], "workers": 2}, "workers",
                 id="a share of a GPU is one worker, not a gang (it froze every cycle)"),
]


@pytest.mark.parametrize(("body", "millis"), [({"cpu": 0.5}, 500), ({"cpu": "2"}, 2000), ({"cpu": " 1.25 "}, 1250),
                                              ({"cpu_millis": 1500}, 1500), ({"cpu": 100_000}, 100_000_000)])
def test_cpu_is_read_in_cores_or_millicores(body: dict[str, object], millis: int) -> None:
    assert spec_from_request({"gpus": 1, "command": ["x"], **body}, user="alice").resources.cpu_millis == millis


@pytest.mark.parametrize(("body", "field"), BAD_BODIES)
def test_bad_request_names_field_and_hint(body: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        spec_from_request(body, user="alice", known_models=frozenset({"NVIDIA A100-SXM4-80GB"}))
    assert caught.value.field == field
    assert caught.value.hint
    assert caught.value.to_json()["error"]["field"] == field


def test_good_request_builds_spec_with_units() -> None:
    spec = spec_from_request(
        {"gpus": 2, "model": "A100", "mem_per_gpu": "40GiB", "time_limit": "2h30m", "priority": "low",
         "command": ["python", "train.py"], "team": "team-ml"},
        user="alice", known_models=frozenset({"NVIDIA A100-SXM4-80GB"}))
    assert spec.resources.gpus == 2
    assert spec.resources.gpu_models == ("A100",)
    assert spec.resources.min_memory_mib == 40 * 1024
    assert spec.time_limit_s == 9000
    assert spec.priority is PriorityClass.LOW
    assert spec.team == "team-ml"
    assert spec.user == "alice"


def test_fractional_gpu_becomes_milli_share() -> None:
    assert parse_gpus(0.5) == (1, 500)
    assert parse_gpus(0) == (0, 1000)
    assert parse_gpus("3") == (3, 1000)


def test_profile_fills_defaults_and_user_fields_override() -> None:
    profiles = profiles_from_config({"bert-finetune": {"gpus": 4, "mem_per_gpu": "40GiB", "nvlink": True,
                                                       "time_limit": "12h", "description": "BERT"}})
    spec = spec_from_request({"profile": "bert-finetune", "command": ["python", "ft.py"], "gpus": 2},
                             user="bob", profiles=profiles)
    assert spec.resources.gpus == 2
    assert spec.resources.nvlink is True
    assert spec.resources.min_memory_mib == 40960
    assert spec.time_limit_s == 12 * 3600
    assert spec.profile == "bert-finetune"


def test_profile_with_unknown_key_is_refused() -> None:
    with pytest.raises(ValidationError) as caught:
        profiles_from_config({"p": {"gpuz": 4}})
    assert caught.value.field == "profiles.p.gpuz"


@pytest.mark.parametrize(("text", "seconds"), [("90", 90.0), ("45s", 45.0), ("10m", 600.0), ("2h30m", 9000.0), ("1d", 86400.0)])
def test_durations_parse_to_seconds(text: str, seconds: float) -> None:
    assert parse_duration(text, field="t") == seconds


@pytest.mark.parametrize("text", ["2hh", "h", "-5m", "0", "abc"])
def test_bad_durations_are_refused(text: str) -> None:
    with pytest.raises(ValidationError):
        parse_duration(text, field="t")


@pytest.mark.parametrize(("text", "mib"), [("20GiB", 20480), ("512Mi", 512), ("81920", 81920), ("1TiB", 1048576), ("40Gi", 40960), ("40G", 38147)])
def test_memory_sizes_parse_to_mib(text: str, mib: int) -> None:
    assert parse_memory_mib(text, field="m") == mib


def test_naive_timestamp_is_refused_and_aware_ones_agree() -> None:
    """Case 010: inputs 1 and 2 are the same instant; input 3 (no offset) is a 400 naming the field."""
    first = parse_utc("2025-03-30T04:30:00Z", field="submit_at")
    second = parse_utc("2025-03-30T06:30:00+02:00", field="submit_at")
    assert first == second
    with pytest.raises(TimestampError) as caught:
        parse_utc("2025-03-30T06:30:00", field="submit_at")
    assert "submit_at must include a UTC offset (e.g. 2025-03-30T06:30:00Z)" in caught.value.message


LEGAL = [
    (JobState.PENDING, JobState.ADMITTED), (JobState.ADMITTED, JobState.RUNNING),
    (JobState.RUNNING, JobState.SUCCEEDED), (JobState.RUNNING, JobState.PREEMPTED),
    (JobState.PREEMPTED, JobState.PENDING), (JobState.RUNNING, JobState.LOST),
]
ILLEGAL = [
    (JobState.SUCCEEDED, JobState.RUNNING), (JobState.PENDING, JobState.RUNNING),
    (JobState.CANCELLED, JobState.PENDING), (JobState.LOST, JobState.RUNNING),
]


def _job(state: JobState) -> Job:
    return Job(id="j1", spec=JobSpec(name="n", user="u", kind=JobKind.TRAINING, command=("x",)), state=state)


@pytest.mark.parametrize(("src", "dst"), LEGAL)
def test_legal_transitions_succeed(src: JobState, dst: JobState) -> None:
    assert _job(src).transition(dst).state is dst


@pytest.mark.parametrize(("src", "dst"), ILLEGAL)
def test_illegal_transitions_raise_conflict(src: JobState, dst: JobState) -> None:
    with pytest.raises(ConflictError):
        _job(src).transition(dst)


def test_newuser7_finding_3_a_word_for_gpus_is_not_a_number_and_a_petabyte_parses() -> None:
    """New user 7, F3: REST and the magics said 'gpus must be an integer (got "two")' beside the hint
    '…or a fraction such as 0.5' (fractions are accepted; the CLI already said "a number"); and
    '1PiB' was 'cannot parse memory size' while '100TiB' parsed and was refused for its size."""
    from jupyter_sched.magics.parsing import parse_gpu_line, parse_schedule_line
    from jupyter_sched.model import parse_gpus, parse_memory_mib

    for raise_it, field in ((lambda: parse_gpus("two"), "gpus"),
                            (lambda: parse_schedule_line("--gpus banana", cell=True), "--gpus")):
        with pytest.raises(ValidationError) as err:
            raise_it()
        assert err.value.field == field
        # handed case 019 b3 fixes these words ('gpus must be an integer (got "two")'); the hint says fractions are fine
        assert err.value.message.startswith(f"{field} must be an integer (got "), err.value.message
        assert err.value.hint == "use a whole number such as 1 or 4, or a fraction below 1 such as 0.5"
    # `%gpu request N` has no --gpus: its count is named N as typed (new user 8, N6)
    with pytest.raises(ValidationError) as positional:
        parse_gpu_line("request two")
    assert positional.value.field == "N" and '%gpu request: gpus must be an integer (got "two")' in positional.value.message
    assert "0.5" in (positional.value.hint or "")
    assert parse_memory_mib("1PiB", field="mem_per_gpu") == 1024**3
    assert parse_memory_mib("2EiB", field="mem_per_gpu") == 2 * 1024**4
    with pytest.raises(ValidationError) as too_big:
        spec_from_request({"gpus": 1, "command": ["x"], "mem_per_gpu": "2PiB"}, user="u")
    assert too_big.value.field == "mem_per_gpu" and "at most 1 PiB" in too_big.value.message
