"""newuser38 n6: the hub service's record of which users' notebook servers it let open a GPU
(``<log_dir>/.state/.server-fence.json``, :class:`~jupyter_sched.executors.server_fence.ServerFence`).

It was written only when a group was first opened, so every start before any kernel lease — the first one
included — found none and, where its log_dir held anything, warned "not there yet, and this service ran here
before; every account's group is closed unless its lease holds a GPU": false on a first start, and jargon. Now a
start that finds no record writes one at once (a later start reads it and says nothing), and where what was let
open is truly unknown (no record but jobs ran from the log_dir, or a record that does not read) the line says so
in the reader's words.

Real parts: the record file on disk, written and read by the service's own code. The cgroup root is an empty
folder (no account's group exists), as on a host before any user's server spawned: nothing here writes a cgroup.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from jupyter_sched.executors.server_fence import ServerFence

UNKNOWN = "which hub users' notebook servers this service let open a GPU is not known"


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_newuser38_n6_a_first_start_keeps_its_record_and_says_nothing(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Failed before: no record was written until a group was opened, so the next start warned again."""
    record = tmp_path / ".state" / ".server-fence.json"
    record.parent.mkdir(mode=0o700)
    with caplog.at_level(logging.INFO):
        ServerFence(root=tmp_path / "cg", record=record).sync({})
        assert json.loads(record.read_text()) == {"opened": []}
        # the next start, whatever its log_dir holds (job records: adopt_without_record), reads it
        ServerFence(root=tmp_path / "cg", record=record, adopt_without_record=True).sync({})
    assert _warnings(caplog) == [], caplog.text


@pytest.mark.parametrize(("content", "why"), [
    (None, "it is not there, yet jobs ran from this log_dir before (a version that kept no record, or the record "
           "was removed)"),
    ("{not json", "it does not read ("),
    ('{"opened": "all"}', "it holds no list of uids under 'opened'"),
], ids=["no record, jobs ran before", "not JSON", "no list of uids"])
def test_newuser38_n6_an_unknown_record_is_said_in_the_readers_words(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, content: str | None, why: str) -> None:
    """Failed before: "…: not there yet, and this service ran here before; every account's group is closed unless
    its lease holds a GPU"."""
    record = tmp_path / ".server-fence.json"
    if content is not None:
        record.write_text(content)
    with caplog.at_level(logging.INFO):
        ServerFence(root=tmp_path / "cg", record=record, adopt_without_record=True).sync({})
    (said,) = _warnings(caplog)
    assert said.startswith(f"{UNKNOWN}: {record} is its record and {why}"), said
    assert said.endswith("so at this start every user's notebook server, kernels and terminals on this host may "
                         "open only the GPUs of that user's own granted kernel leases (%gpu request), the others "
                         "none"), said
    assert "ran here before" not in said and "group is closed" not in said, said
    assert json.loads(record.read_text()) == {"opened": []}  # known from now on: the next start says nothing
