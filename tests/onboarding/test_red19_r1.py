"""Red team 19, R1 (log flood): a refused submit wrote its whole message to the service log — a
``node_selector`` of 6,500 pairs (under the 64 KiB field cap; no count cap, unlike tolerations' 64)
gave 58 KB of log and a 320 KB answer per request. Now ``node_selector`` is capped in count (400
naming it), a reason lists a bounded excerpt of it (``… and N more``), every refusal's message and
hint are bounded on the wire and in ``str()``, and every service log line is bounded.

Real parts: the embedded server (a subprocess, its log file), SQLite, simulated GPUs; the log
filter on a real ``logging`` handler.
"""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Iterator

import pytest

from jupyter_sched.errors import MESSAGE_MAX_CHARS, ValidationError
from jupyter_sched.extension.request_log import LOG_LINE_MAX_CHARS, escape_log_controls
from jupyter_sched.model import spec_from_request
from jupyter_sched.model.validation import MAX_NODE_SELECTOR
from tests.onboarding.test_cli_firsthour import USERS, api, module_server
from tests.reliability.harness import EmbeddedServer


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "red19r1", USERS)


def test_red19_r1_node_selector_is_capped_in_count_and_length_like_tolerations() -> None:
    pairs = {f"k{i}": "v" for i in range(MAX_NODE_SELECTOR + 1)}
    with pytest.raises(ValidationError) as info:
        spec_from_request({"gpus": 1, "command": ["true"], "node_selector": pairs}, user="ann")
    assert info.value.field == "node_selector"
    assert info.value.message == f"node_selector must have at most {MAX_NODE_SELECTOR} pairs (got 65)", info.value
    for pair, said in (({"k" * 318: "v"}, "key 'kkk"), ({"zone": "v" * 64}, "'zone' value is 64 characters")):
        with pytest.raises(ValidationError) as info:
            spec_from_request({"gpus": 1, "command": ["true"], "node_selector": pair}, user="ann")
        assert info.value.field == "node_selector" and said in info.value.message, info.value
        assert len(info.value.message) < 200, info.value.message
    kept = spec_from_request({"gpus": 1, "command": ["true"], "node_selector": dict(list(pairs.items())[:64])},
                             user="ann")
    assert len(kept.resources.node_selector) == MAX_NODE_SELECTOR


_BIG_SELECTOR = {f"key-{i:02d}-" + "k" * 300: "v" * 63 for i in range(MAX_NODE_SELECTOR)}  # ~24 KiB, at the bounds
_BODIES = {
    "node_selector no node carries": ({"gpus": 1, "node_selector": _BIG_SELECTOR}, 422, "node_selector"),
    "an unknown model of 60,000 characters": ({"gpus": 1, "model": "m" * 60_000}, 400, "model"),
    "a mig_profile of 60,000 characters": ({"gpus": 1, "mig_profile": "1g." + "x" * 60_000}, 400, "mig_profile"),
}


@pytest.mark.parametrize("case", list(_BODIES), ids=list(_BODIES))
def test_red19_r1_a_refusal_of_huge_text_is_bounded_in_the_answer_and_the_service_log(
        server: EmbeddedServer, case: str) -> None:
    body, status, field = _BODIES[case]
    before = server.log_path.stat().st_size
    answers = [api(server, "tok-ann").post("jobs", json={"command": ["true"], **body}) for _ in range(3)]
    for answer in answers:
        assert answer.status_code == status, answer.text[:500]
        error = answer.json()["error"]
        assert error["field"] == field, error["field"]
        assert len(error["message"]) <= MESSAGE_MAX_CHARS and len(error["hint"] or "") <= MESSAGE_MAX_CHARS
        assert len(answer.content) < 12_000, f"{len(answer.content)} bytes answered to a {case}"
    grown = server.log_path.stat().st_size - before
    assert grown < 3 * 8_000, f"the service log grew {grown} bytes for 3 refusals"
    if field == "node_selector":
        message = answers[0].json()["error"]["message"]
        assert "and 54 more" in message, message[:300]
        details = answers[0].json()["error"]["details"]["reason"]["details"]
        assert details["node_selector_pairs"] == MAX_NODE_SELECTOR and len(details["node_selector"]) == 10, details


def test_red19_r1_every_refusal_is_bounded_on_the_wire_and_in_its_text() -> None:
    """The kind: whatever text a refusal quotes, its message and hint are at most
    ``MESSAGE_MAX_CHARS`` on the wire and in ``str()`` (the log line's text), with the cut said."""
    err = ValidationError("x" * 100_000, field="model", hint="h" * 100_000)
    wire = err.to_json()["error"]
    assert len(wire["message"]) <= MESSAGE_MAX_CHARS and wire["message"].endswith(" more characters)"), \
        wire["message"][-60:]
    assert len(wire["hint"]) <= MESSAGE_MAX_CHARS
    assert len(str(err)) <= 2 * MESSAGE_MAX_CHARS + 3
    short = ValidationError("fine", field="x", hint="as is")
    assert short.to_json()["error"]["message"] == "fine" and str(short) == "fine (as is)"


@contextlib.contextmanager
def service_log(name: str) -> Iterator[tuple[logging.Logger, io.StringIO]]:
    """A logger ``name`` writing to the returned buffer through the service log's filter
    (:func:`escape_log_controls`), as the server's log handlers do; its handler removed after."""
    out = io.StringIO()
    log = logging.getLogger(name)
    log.propagate = False
    log.setLevel(logging.INFO)
    handler = logging.StreamHandler(out)
    log.addHandler(handler)
    escape_log_controls(log)
    try:
        yield log, out
    finally:
        log.removeHandler(handler)


def test_red19_r1_every_service_log_line_is_bounded() -> None:
    """Whatever logger a record came through, a line of the service log is at most
    ``LOG_LINE_MAX_CHARS`` (the cut said); a traceback below it is kept whole."""
    with service_log("red19-r1-test") as (log, out):
        log.info("jupyter_sched %s %s -> %s: %s", "POST", "/api/sched/jobs", 422, "no node carries " + "k=v, " * 20_000)
        log.info("short line")
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            log.exception("failed: %s", "y" * 50_000)
    lines = out.getvalue().splitlines()
    assert len(lines[0]) <= LOG_LINE_MAX_CHARS and "more characters" in lines[0], lines[0][-80:]
    assert lines[1] == "short line"
    assert len(lines[2]) <= LOG_LINE_MAX_CHARS and lines[-1] == "RuntimeError: boom", lines[-3:]


def test_red19_r1_an_env_refusal_s_details_list_each_name_shortened_as_its_message_does() -> None:
    # verify19 (R1 leftover): one 60,000-character invalid env key came back whole in details.invalid
    # (a 60 KB answer) while the message quoted it cut at 40 characters
    huge, many = "=" * 60_000, {f"{i}X": "1" for i in range(30)}
    for env, listed in (({huge: "1"}, "invalid"), (many, "invalid"), ({"A" * 60_000: 1.5j}, "not_text")):
        with pytest.raises(ValidationError) as info:
            spec_from_request({"gpus": 1, "command": ["true"], "env": env}, user="ann")
        names = info.value.details[listed]
        assert len(names) <= 20 and all(len(n) <= 41 for n in names), (listed, len(names), max(map(len, names)))
        assert len(str(info.value.to_json())) < 5_000, len(str(info.value.to_json()))
