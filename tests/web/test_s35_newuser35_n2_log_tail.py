"""newuser35 N2: ``jupyter-sched logs JOB -n 2`` read the whole log over HTTP from byte 0 (2.9 s on a
220 MB log, ~14 s at the 1 GiB cap); ``GET jobs/{id}/logs`` had no tail (``?tail=`` was a 400).

Now ``GET jobs/{id}/logs?tail=N`` reads back from the log's end by slices until N lines (at most
``limit`` bytes: bounded work whatever the log's size), says where the text begins (``offset``) and
where to follow on (``next_offset``), and ``logs -n N`` (``-f`` too) asks for it. The proof is the bytes
the server read, not a time: the logs here are sparse files of 4 GiB whose last lines are real, and a
spy on the server's two log readers (the server runs in this process) counts what they read.

Real parts: the pytest-jupyter server with the extension, its SQLite store, the CLI as a subprocess;
each job's log a real file (its record inserted as the red30 R6 tests do: no process needs to write it).
"""

from __future__ import annotations

import asyncio
import os
import random
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from jupyter_sched.cli.commands import MAX_LOG_TAIL_LINES as CLI_MAX_LOG_TAIL_LINES
from jupyter_sched.cli.commands import _last_lines
from jupyter_sched.client import SchedClient
from jupyter_sched.client.discovery import Connection
from jupyter_sched.errors import ValidationError
from jupyter_sched.executors import log_tail
from jupyter_sched.executors.local import read_log_sized
from jupyter_sched.model import JobState
from jupyter_sched.services import jobs as jobs_service
from jupyter_sched.services.models.jobs import MAX_LOG_TAIL_LINES
from jupyter_sched.store import JobRecord
from tests.runtime.builders import T0, make_job

from .conftest import IVAN_TOKEN, JUDY_TOKEN
from .test_cli import cli  # noqa: F401  (the CLI as a subprocess against this test's server)

HOLE = 4 << 30
"""Bytes of nothing before a log's last lines (a sparse file: no disk, but a read from 0 never ends)."""


def _sparse_log(sched_app: Any, tmp_path: Path, job_id: str, body: bytes) -> int:
    """A finished job of ivan's whose log is :data:`HOLE` bytes of nothing, then ``body``; its size."""
    log = tmp_path / f"{job_id}.log"
    with open(log, "wb") as fh:
        fh.truncate(HOLE - 1)
        fh.seek(HOLE - 1)
        fh.write(b"\n" + body)
    job = replace(make_job(job_id, user="ivan", state=JobState.SUCCEEDED), started_at=T0, finished_at=T0)
    sched_app.services.store.insert_job(JobRecord(job=job, executor="local", handle={"log": str(log)}))
    return log.stat().st_size


@pytest.fixture
def bytes_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Bytes each log read of the server read (``read_log_tail``'s own count; ``read_log_sized``'s text)."""
    seen: list[int] = []

    def tail(*args: Any, **kwargs: Any) -> log_tail.LogTail:
        found = log_tail.read_log_tail(*args, **kwargs)
        seen.append(found.read_bytes)
        return found

    def sized(*args: Any, **kwargs: Any) -> tuple[str, int, int]:
        found = read_log_sized(*args, **kwargs)
        seen.append(len(found[0].encode()))
        return found

    monkeypatch.setattr(jobs_service, "read_log_tail", tail)
    monkeypatch.setattr(jobs_service, "read_log_sized", sized)
    return seen


LINES = b"".join(b"row %d \xc3\xa9\n" % i for i in range(5000))  # é: two bytes


async def test_newuser35_n2_rest_tail_reads_back_from_the_end_by_slices_bounded_by_limit(
        sched_app: Any, api: Any, tmp_path: Path, bytes_read: list[int]) -> None:
    size = _sparse_log(sched_app, tmp_path, "j-n2tail", LINES)
    status, body = await api("GET", "jobs/j-n2tail/logs", params={"tail": "3"})
    assert status == 200, body  # before: 400 "unknown query argument 'tail'"
    last = "row 4997 é\nrow 4998 é\nrow 4999 é\n"
    assert (body["text"], body["next_offset"], body["size"]) == (last, size, size)
    assert body["offset"] == size - len(last.encode()) and body["finished"] is True
    assert bytes_read == [log_tail.TAIL_SLICE]  # one slice back from the end of a 4 GiB log
    # bounded by limit (the default 64 KiB) when the lines asked for are more than it holds
    status, body = await api("GET", "jobs/j-n2tail/logs", params={"tail": "1000000"})
    assert status == 200 and sum(bytes_read[1:]) <= 65536, bytes_read
    assert body["text"].startswith("row ") and body["text"].endswith(last)  # from a line's start
    assert body["offset"] == size - len(body["text"].encode()) and body["next_offset"] == size
    # the reader follows on from next_offset: what is written after the tail comes next, nothing lost
    with open(tmp_path / "j-n2tail.log", "ab") as fh:
        fh.write(b"later 1\nlater 2\n")
    status, more = await api("GET", "jobs/j-n2tail/logs", params={"offset": str(body["next_offset"])})
    assert status == 200 and more["text"] == "later 1\nlater 2\n", more
    status, none = await api("GET", "jobs/j-n2tail/logs", params={"tail": "0"})
    assert status == 200 and (none["text"], none["next_offset"]) == ("", size + 16), none  # where it ends
    # only the job's owner reads it: another user's tail is the logs route's refusal, as without tail
    status, refused = await api("GET", "jobs/j-n2tail/logs", params={"tail": "3"}, token=JUDY_TOKEN)
    assert status == 404 and "text" not in refused, refused
    for params in ({"tail": "-1"}, {"tail": str(MAX_LOG_TAIL_LINES + 1)}, {"tail": "many"},
                   {"tail": "3", "offset": "5"}, {"tail": "3", "follow": "true"}):
        status, refused = await api("GET", "jobs/j-n2tail/logs", params=params)
        assert status == 400 and refused["error"]["field"] == "tail", (params, refused)
        assert refused["error"]["hint"], refused


async def test_newuser35_n2_cli_logs_n_asks_the_server_for_the_tail_and_follows_from_its_end(
        sched_app: Any, cli: Any, tmp_path: Path, bytes_read: list[int], http_server_port: Any,  # noqa: F811
        jp_base_url: str) -> None:
    _sparse_log(sched_app, tmp_path, "j-n2cli", LINES)
    shown = await cli("logs", "j-n2cli", "-n", "2")
    assert (shown.code, shown.out) == (0, "row 4998 é\nrow 4999 é\n"), shown  # before: 4 GiB read from 0
    assert sum(bytes_read) <= 1 << 20, bytes_read
    followed = await cli("logs", "j-n2cli", "-n", "2", "-f")
    assert (followed.code, followed.out) == (0, "row 4998 é\nrow 4999 é\n"), followed
    assert "succeeded" in followed.err, followed.err
    assert sum(bytes_read) <= 2 << 20, bytes_read
    # lines more than one answer holds (three of 600 KB): read back slice by slice before it, all of them whole
    long_lines = b"".join(bytes([97 + i]) * 600_000 + b"\n" for i in range(4))
    size = _sparse_log(sched_app, tmp_path, "j-n2long", long_lines)
    bytes_read.clear()
    client = SchedClient(Connection(url=f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}", token=IVAN_TOKEN))
    lines, end, _ = await asyncio.to_thread(_last_lines, client, "j-n2long", 3)  # the CLI's reader, in-process
    assert "".join(lines) == long_lines[600_001:].decode() and end == size
    assert sum(bytes_read) <= 3 << 20, bytes_read


def test_newuser35_n2_read_log_tail_is_the_last_lines_from_a_lines_start_within_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Against the plain rule (split on newlines, an unfinished last line is one), over many small logs
    and slice sizes, characters of 1 to 4 bytes: never a split character, never more than limit read."""
    log = tmp_path / "output.log"
    rng = random.Random(35)
    for _ in range(200):
        data = "".join(rng.choice(["a", "é", "€", "😀", "\n", "\n", "xyz" * rng.randint(0, 9)])
                       for _ in range(rng.randint(0, 30))).encode()
        log.write_bytes(data)
        lines, limit = rng.randint(0, 6), rng.choice([1, 2, 5, 10, 1000])
        monkeypatch.setattr(log_tail, "TAIL_SLICE", rng.choice([1, 3, 7, 65536]))
        found = log_tail.read_log_tail(log, lines, limit)
        pieces = data.decode().split("\n")
        partial = pieces.pop()
        whole = "".join(([p + "\n" for p in pieces] + ([partial] if partial else []))[-lines:]) if lines else ""
        assert (found.end, found.size) == (len(data), len(data))
        assert found.text == data[found.start:].decode(), (data, lines, limit, found)
        assert whole.endswith(found.text) and found.read_bytes <= limit, (data, lines, limit, found)
        if limit >= len(data):
            assert found.text == whole, (data, lines, limit, found)
        assert log_tail.tail_start(data, lines, limit) == found.start  # a pod's log read through cuts alike
    log.write_bytes(b"ab\ncd\n" + "€".encode()[:2])  # a character not all written yet: followed on from its start
    found = log_tail.read_log_tail(log, 1, 100)
    assert (found.text, found.start, found.end, found.size) == ("cd\n", 3, 6, 8)
    os.truncate(log, 0)
    found = log_tail.read_log_tail(log, 5, 100)
    assert (found.text, found.start, found.end) == ("", 0, 0)


class _LongLogClient:
    """The logs route of a finished job's 50 MB log of 100-byte lines, as the wire answers it (a double: the
    magic's reads are what is counted; the route itself is the real server's above)."""

    SIZE = 50_000_000

    def __init__(self, *, with_tail: bool = True) -> None:
        self.with_tail, self.reads = with_tail, []  # type: list[dict[str, Any]]

    def job_named(self, ref: str, command: str = "") -> Any:
        return SimpleNamespace(id=ref, note="")

    def job(self, job_id: str) -> dict[str, Any]:
        return {"id": job_id, "state": "failed", "kind": "batch"}

    def logs(self, job_id: str, *, offset: int = 0, limit: int = 65536, tail: int | None = None,
             **_: Any) -> dict[str, Any]:
        self.reads.append({"offset": offset, "limit": limit, "tail": tail})
        if tail is not None and not self.with_tail:
            raise ValidationError("unknown query argument 'tail'", field="tail")
        if tail is not None:
            text = "".join(f"{i:>99}\n" for i in range(self.SIZE // 100 - min(tail, limit // 100), self.SIZE // 100))
            return {"text": text, "offset": self.SIZE - len(text), "next_offset": self.SIZE, "size": self.SIZE,
                    "finished": True, "notes": []}
        end = min(self.SIZE, offset + limit)
        low = offset // 100  # bytes [offset, end) of the lines that hold them (ASCII: a character a byte)
        text = "".join(f"{i:>99}\n" for i in range(low, -(-end // 100)))[offset - low * 100:end - low * 100]
        return {"text": text, "offset": offset, "next_offset": offset + len(text), "size": self.SIZE,
                "finished": True, "notes": []}


@pytest.mark.parametrize("with_tail", [True, False], ids=["server with tail", "server from before tail"])
def test_newuser35_n2_magic_logs_of_a_long_log_reads_its_tail_once_not_a_bisection(
        with_tail: bool, capsys: pytest.CaptureFixture[str]) -> None:
    from jupyter_sched.magics.core import LOG_TAIL_LINES, SchedMagics

    client = _LongLogClient(with_tail=with_tail)
    SchedMagics(None, client_factory=lambda: client).schedule("logs j-big")  # type: ignore[arg-type,return-value]
    out = capsys.readouterr().out
    # before: the read from 0, then ~2 log2(size) one-byte reads to find the end, then the tail's read
    assert [read["limit"] for read in client.reads] == ([65536, 65536] if with_tail else [65536, 65536, 65536])
    lines = out.splitlines()
    assert lines[0].startswith("[… only the last 20 KB of the 50 MB log are shown here"), lines[0]
    assert lines[1:] == [f"{i:>99}" for i in range(500_000 - LOG_TAIL_LINES, 500_000)], lines[1:3]


def test_newuser35_n2_the_clis_tail_bound_is_the_servers() -> None:
    assert CLI_MAX_LOG_TAIL_LINES == MAX_LOG_TAIL_LINES
