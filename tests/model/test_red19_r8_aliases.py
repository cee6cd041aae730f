"""Red team 19, R8: two spellings of one job field (``team``/``queue``, ``gpus``/``gpu_milli``,
``model``/``gpu_models``, ``mem_per_gpu``/``min_memory_mib``, ``memory``/``memory_mib``,
``cpu``/``cpu_millis``, ``time_limit``/``time_limit_s``) naming different values are a 400 naming
both; the same value twice is taken. Before the fix ``{"team": "vision", "queue": "nlp"}`` ran in
vision and the queue was dropped without a word."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.model import spec_from_request
from jupyter_sched.model.validation import ALIASES, kept_spellings

BASE: dict[str, Any] = {"command": ["true"]}

CONFLICTS = [
    ({"team": "vision", "queue": "nlp"}, "queue", "team 'vision', queue 'nlp'"),
    ({"gpus": 0.5, "gpu_milli": 250}, "gpu_milli", "gpus 0.5, gpu_milli 250"),
    ({"model": "A100", "gpu_models": ["H100"]}, "gpu_models", "model 'A100', gpu_models"),
    ({"mem_per_gpu": "40GiB", "min_memory_mib": 1024}, "min_memory_mib", "mem_per_gpu '40GiB', min_memory_mib 1024"),
    ({"memory": "2GiB", "memory_mib": 1024}, "memory_mib", "memory '2GiB', memory_mib 1024"),
    ({"cpu": 2, "cpu_millis": 500}, "cpu_millis", "cpu 2, cpu_millis 500"),
    ({"time_limit": "10m", "time_limit_s": 60}, "time_limit_s", "time_limit '10m', time_limit_s 60"),
]


def test_red19_r8_every_alias_pair_is_checked() -> None:
    assert {(f, o) for f, (o, _) in ALIASES.items()} == {
        (next(iter(body)), field) for body, field, _ in CONFLICTS}, "a new alias needs a case here"


@pytest.mark.parametrize(("fields", "field", "both"), CONFLICTS)
def test_red19_r8_two_spellings_of_one_field_with_different_values_are_refused(
        fields: dict[str, Any], field: str, both: str) -> None:
    for body in ({**BASE, **fields}, {**BASE, "resources": fields}):
        with pytest.raises(ValidationError) as err:
            spec_from_request(body, user="ann", known_models={"A100", "H100"})
        assert err.value.field == field, err.value
        assert both in err.value.message, err.value.message
        assert "another name for" in err.value.message and err.value.hint, err.value


@pytest.mark.parametrize("fields", [
    {"team": "vision", "queue": "vision"}, {"gpus": 0.5, "gpu_milli": 500}, {"gpus": 1, "gpu_milli": 500},
    {"gpu_milli": 1000, "gpus": 2}, {"model": "A100,H100", "gpu_models": ["H100", "A100"]},
    {"mem_per_gpu": "1GiB", "min_memory_mib": 1024}, {"memory": "1 GiB", "memory_mib": 1024},
    {"cpu": 0.5, "cpu_millis": 500}, {"time_limit": "1m", "time_limit_s": 60}, {"team": "vision", "queue": None},
])
def test_red19_r8_the_same_value_in_both_spellings_is_taken(fields: dict[str, Any]) -> None:
    both = spec_from_request({**BASE, **fields}, user="ann", known_models={"A100", "H100"})
    exact = [(k, v) for k, v in fields.items() if v is not None][-1:]  # the more exact spelling alone
    one = spec_from_request({**BASE, **dict(exact)}, user="ann", known_models={"A100", "H100"})
    assert (both.team, both.resources, both.time_limit_s) == (one.team, one.resources, one.time_limit_s)


def test_red19_r8_an_edit_giving_one_spelling_replaces_the_other() -> None:
    assert kept_spellings({"team": "vision", "gpus": 1}, {"queue": "nlp"}) == {"gpus": 1}
    assert kept_spellings({"queue": "nlp", "memory_mib": 10}, {"team": "cv", "memory": "1GiB"}) == {}
    assert kept_spellings({"team": "vision"}, {"gpus": 2}) == {"team": "vision"}
