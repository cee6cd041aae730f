"""Every refusal a request model answers reads in plain words (new-user findings 7 and 8).

A second new user met pydantic's wording (``input should be less than or equal to
4611686018427387904``, ``unable to parse string as an integer``), a Python dict repr of the whole
body (``name: field required (got {'cron': 'banana'})``) and Python type names (``got NoneType``).
The whole kind: every request and query model of the REST API, every field, fed the wrong kinds of
value, answers through the one formatter (``services.models.base.request_error``).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from jupyter_sched.errors import ValidationError, json_kind, shown
from jupyter_sched.services.models import accounting, definitions, jobs, quotas, system, telemetry
from jupyter_sched.services.models.base import QueryModel, RequestModel, parse
from jupyter_sched.services.models.jobs import QUEUE_LIMIT_MAX


def _subclasses(cls: type[Any]) -> set[type[Any]]:
    found = set(cls.__subclasses__())
    for sub in list(found):
        found |= _subclasses(sub)
    return found


MODULES = (accounting, definitions, jobs, quotas, system, telemetry)
REQUEST_MODELS = sorted((cls for cls in _subclasses(RequestModel) | _subclasses(QueryModel)
                         if any(cls.__module__ == module.__name__ for module in MODULES)),
                        key=lambda cls: cls.__name__)

NOT_OURS = re.compile(r"[Ii]nput should|field required|unable to (parse|interpret)|valid (integer|number|string|"
                      r"dictionary|list|boolean)|instance of|NoneType|\b(dict|list|str|int|float|bool)\b|\{'|\['|"
                      r"Value error")

BODY_VALUES: list[Any] = [None, True, 3, 2.5, 10**23, "x", [], [1, "a"], {}, {"a": 1}]
QUERY_VALUES = ["99999999999999999999999", "abc", "-1", "0", "1.5", "maybe"]


def _refusals(model: type[Any]) -> list[tuple[str, ValidationError]]:
    found = []
    query = issubclass(model, QueryModel)
    required = {name: "x" for name, info in model.model_fields.items() if info.is_required()}
    for name in model.model_fields:
        for value in QUERY_VALUES if query else BODY_VALUES:
            try:
                parse(model, {**required, name: value}, where="query" if query else "body")
            except ValidationError as err:
                found.append((f"{name}={value!r}", err))
    try:
        parse(model, {}, where="query" if query else "body")
    except ValidationError as err:
        found.append(("{}", err))
    return found


@pytest.mark.parametrize("model", REQUEST_MODELS, ids=lambda cls: cls.__name__)
def test_every_request_model_refuses_in_plain_words(model: type[Any]) -> None:
    refusals = _refusals(model)
    for sent, err in refusals:
        assert not NOT_OURS.search(err.message), (sent, err.message)
        assert err.hint and not NOT_OURS.search(err.hint.split(" e.g. ")[0]), (sent, err.hint)
        assert "4611686018427387904" not in err.hint, (sent, err.hint)
        if err.field != "offset":  # a byte offset's bound is 2^62 bytes; no count is
            assert "4611686018427387904" not in err.message, (sent, err.message)


def test_the_matrix_holds_every_models_refusals() -> None:
    """The matrix above asserts something: the findings' own inputs are among its refusals."""
    names = {cls.__name__ for cls in REQUEST_MODELS}
    assert {"SubmitJobRequest", "GetQueueRequest", "CreateDefinitionRequest", "SetQuotasRequest"} <= names
    texts = {err.message for model in REQUEST_MODELS for _, err in _refusals(model)}
    assert "name is required" in texts
    assert "limit must be at most 10000 (got 99999999999999999999999)" in texts


@pytest.mark.parametrize("body, want", [
    pytest.param(None, "body must be a JSON object (got null)", id="null"),
    pytest.param([], "body must be a JSON object (got an array)", id="an array"),
    pytest.param("x", "body must be a JSON object (got a string)", id="a string"),
    pytest.param({"schedule": "banana"}, "name is required", id="a missing field, never the body's repr"),
    # an unknown field before a missing one: it is most often the misspelt one (new user 12, N9)
    pytest.param({"cron": "banana"}, "unknown field 'cron'", id="an unknown field before a missing one"),
    pytest.param({"name": "d", "notebook": "a.ipynb", "env": {"A": 1}}, "env.A must be a string (got 1)",
                 id="a value inside an object names its key"),
    pytest.param({"name": "d", "notebook": "a.ipynb", "missed": "urgent"},
                 "missed must be 'run_once' or 'skip' (got 'urgent')", id="a choice lists the choices"),
    # a priority is refused by the job's own rule, in the words the CLI and the magics say (new user 14, N2)
    pytest.param({"name": "d", "notebook": "a.ipynb", "priority": "urgent"},
                 "priority must be high, normal or low (got 'urgent')", id="a priority in the job rule's words"),
])
def test_case_findings_8_bodies(body: Any, want: str) -> None:
    with pytest.raises(ValidationError) as err:
        parse(definitions.CreateDefinitionRequest, body)
    assert err.value.message == want


@pytest.mark.parametrize("value, want", [
    ("99999999999999999999999", "limit must be at most 10000 (got 99999999999999999999999)"),
    ("abc", "limit must be a whole number (got 'abc')"),
    ("0", "limit must be at least 1 (got 0)"),
], ids=["too large", "not a number", "too small"])
def test_case_finding_7_queue_limit(value: str, want: str) -> None:
    with pytest.raises(ValidationError) as err:
        parse(jobs.GetQueueRequest, {"limit": value}, where="query")
    assert err.value.message == want and err.value.field == "limit"
    assert err.value.hint == ("give a whole number from 1 to 10000, or leave limit out (default: the first 1000 plus "
                              "all of your own)")


def test_the_clis_queue_limit_is_the_servers() -> None:
    from jupyter_sched.cli.main import QUEUE_LIMIT_MAX as CLI_QUEUE_LIMIT_MAX

    assert CLI_QUEUE_LIMIT_MAX == QUEUE_LIMIT_MAX


@pytest.mark.parametrize("value, kind, text", [
    (None, "null", "null"), (True, "true", "true"), (10**23, "a number", "100000000000000000000000"),
    ("it's", "a string", "'it's'"), ([1, 2], "an array", "an array of 2"), ({"a": 1}, "an object", "an object"),
])
def test_values_are_quoted_as_json_not_python(value: Any, kind: str, text: str) -> None:
    assert json_kind(value) == kind and shown(value) == text


@pytest.mark.parametrize("model, sent, want", [
    (definitions.CreateDefinitionRequest, "cron", "schedule"),
    (jobs.SubmitJobRequest, "mem-per-gpu", "mem_per_gpu"),
    (jobs.SubmitJobRequest, "time_limt", "time_limit"),
    (jobs.SubmitJobRequest, "banana", None),
], ids=["the CLI option's name", "the option's spelling", "a typo", "nothing like a field"])
def test_an_unknown_field_suggests_the_one_meant(model: type[Any], sent: str, want: str | None) -> None:
    with pytest.raises(ValidationError) as err:
        parse(model, {"name": "n", sent: 1})
    assert err.value.message == f"unknown field '{sent}'" and err.value.field == sent
    assert err.value.hint.startswith(f"did you mean '{want}'? known fields: " if want else "known fields: ")


@pytest.mark.parametrize("body, want", [
    ({"default": {"threshold_pct": 500}},
     "idle.default.threshold_pct must be a percentage above 0 and at most 100 (got 500)"),
    ({"default": {"window_s": 600, "warning_s": 900}},
     "idle.default.warning_s must be at least 0 and less than window_s (600 s) (got 900)"),
], ids=["interval notation and 500.0 before", ">= and < before"])
def test_idle_policy_refusals_read_in_words(body: dict[str, Any], want: str) -> None:
    from jupyter_sched.reclaim.codec import idle_policies_from_dict

    with pytest.raises(ValidationError) as err:
        idle_policies_from_dict(body)
    assert err.value.message == want


def test_job_fields_say_whole_number_and_at_least() -> None:
    from jupyter_sched.model.validation import spec_from_request

    for body, want in (({"workers": 1.5}, "workers must be a whole number (got 1.5)"),
                       ({"workers": 0}, "workers must be at least 1 (got 0)"),
                       ({"gpus": -1}, "gpus must be >= 0 (got -1)")):  # handed case 019's own words
        with pytest.raises(ValidationError) as err:
            spec_from_request({"command": ["true"], **body}, user="ann")
        assert err.value.message == want


def test_a_store_that_cannot_be_opened_is_one_line() -> None:
    """Third new-user run, finding 31: a bad ``db_url`` stopped the server with SQLAlchemy's
    four-line dump ("(psycopg.OperationalError) … Is the server running … (Background on this
    error at: https://sqlalche.me/…)"); the README promises one line naming the setting and the fix."""
    from jupyter_sched.errors import StoreError
    from jupyter_sched.store import Store

    with pytest.raises(StoreError) as err:
        Store("sqlite:////nonexistent-i20/dir/x.sqlite")
    assert err.value.message == "cannot open the store at sqlite:////nonexistent-i20/dir/x.sqlite: unable to open " \
                                "database file"
    assert err.value.field == "db_url" and "\n" not in err.value.message
