"""s36-edges (closing note 35): ``GET jobs/{id}/logs?tail=N`` on the Kubernetes executor read the pod log through from
its start in 1 MiB slices — and each slice was fetched with ``limitBytes`` = its end, so the log's start again every
time (a 100 MiB log: ~5 GiB fetched). Now the tail asks the API for it (``tailLines`` one more than shown,
``limitBytes`` the answer's bound): one read that costs what it shows where that is the whole log. The answer's offsets
are the log's own (the follow goes on from them; "only the last 64 KB of the 7 MB log" counts from them) and the pod
log API has no offset and no size, so a longer log's tail is one streamed read, counted and kept to what it shows.
Either way: the same lines and offsets as a local log file's tail (:func:`read_log_tail`).

The API server is ``fake_apiserver.FakeKubernetes`` (no cluster runs here): it now honours ``tailLines`` and
``limitBytes`` as the kubelet does (tail first, then the byte limit from there), and records each request's query.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from kubernetes import client

from jupyter_sched.executors.kubernetes import KubernetesExecutor
from jupyter_sched.executors.log_tail import read_log_tail, tail_in
from jupyter_sched.inventory.kubernetes import KubernetesInventory

from .fake_apiserver import FakeKubernetes
from .kube_builders import allocation, make_job
from .test_integration import NS, _executor, wait_for


@pytest.fixture
def pod_log(fake: FakeKubernetes, api_client: client.ApiClient,
            inventory: KubernetesInventory) -> Iterator[tuple[KubernetesExecutor, str]]:
    executor = _executor(api_client, inventory)
    executor.start(make_job("j-tail"), allocation("g2"))
    (pod,) = fake.run_job(NS, "js-j-tail")
    wait_for(lambda: bool(executor._pods_of(executor._tracked["j-tail"])))
    yield executor, pod["metadata"]["name"]
    executor.detach()


def _log_reads(fake: FakeKubernetes, since: int = 0) -> list[dict[str, list[str]]]:
    """The queries of the pod log reads among the fake's requests from the ``since``-th on."""
    return [parse_qs(urlsplit(path).query) for verb, path in fake.requests[since:]
            if verb == "GET" and urlsplit(path).path.endswith("/log")]


def _local(tmp_path: Path, data: bytes, lines: int, limit: int) -> tuple[str, int, int, int]:
    path = tmp_path / "job.log"
    path.write_bytes(data)
    tail = read_log_tail(path, lines, limit)
    return tail.text, tail.start, tail.end, tail.size


def test_s36_edges_a_pod_log_tail_asks_for_tail_lines_and_answers_as_a_local_log_does(
        fake: FakeKubernetes, pod_log: tuple[KubernetesExecutor, str], tmp_path: Path) -> None:
    executor, pod = pod_log
    fake.append_log(NS, pod, "loading data\nepoch 1 loss 0.9\nepoch 2 loss 0.5\nprogress 40%\rprogress 80%")
    data = bytes(fake.logs[(NS, pod)])

    # the whole log in fewer lines than asked: one read, bounded by the answer (start 0: nothing earlier to say)
    before = len(fake.requests)
    whole = executor.tail_logs("j-tail", 10, 4096)
    assert _log_reads(fake, before) == [{"container": ["main"], "tailLines": ["11"], "limitBytes": ["4097"]}]
    assert (whole.text, whole.start, whole.end, whole.size) == _local(tmp_path, data, 10, 4096)
    assert (whole.start, whole.end, whole.size) == (0, 72, 72)

    # more log than the tail: the same read first, then the log's length for the offsets (the API has none)
    before = len(fake.requests)
    tail = executor.tail_logs("j-tail", 3, 4096)
    assert _log_reads(fake, before) == [{"container": ["main"], "tailLines": ["4"], "limitBytes": ["4097"]},
                                        {"container": ["main"]}]
    assert (tail.text, tail.start, tail.end, tail.size) == (
        "epoch 1 loss 0.9\nepoch 2 loss 0.5\nprogress 40%\rprogress 80%", 13, 72, 72)
    assert (tail.text, tail.start, tail.end, tail.size) == _local(tmp_path, data, 3, 4096)


def test_s36_edges_a_long_pod_log_tail_has_the_same_lines_and_offsets_as_a_local_log(
        fake: FakeKubernetes, pod_log: tuple[KubernetesExecutor, str], tmp_path: Path) -> None:
    executor, pod = pod_log
    fake.append_log(NS, pod, "".join(f"step {i} loss {1 / (i + 1):.4f} — ok\n" for i in range(20_000)) + "saving…")
    data = bytes(fake.logs[(NS, pod)])
    for lines, limit in ((5, 65536), (200, 1000), (0, 65536), (1, 3)):
        tail = executor.tail_logs("j-tail", lines, limit)
        assert (tail.text, tail.start, tail.end, tail.size) == _local(tmp_path, data, lines, limit), (lines, limit)
    reads = _log_reads(fake)
    assert {"tailLines": ["6"], "limitBytes": ["65537"], "container": ["main"]} in reads


def test_s36_edges_tail_in_answers_as_read_log_tail_on_any_log(tmp_path: Path) -> None:
    """The cut the pod tail shares with a log file's (:func:`tail_in` over a log's last bytes): the same text and
    offsets on logs of whole and unfinished lines, multi-byte characters, ``\\r`` updates and any limit."""
    pick = random.Random(36)
    for _ in range(150):
        data = "".join(pick.choice(["a", "bb", "é", "€", "\n", "\n", "xyz", "\r"]) for _ in range(pick.randint(0, 60)))
        raw = data.encode()[:-1] if pick.random() < 0.2 else data.encode()  # an unfinished character at the end
        lines, limit = pick.randint(0, 6), pick.randint(1, 20)
        keep = pick.choice([len(raw), limit + 4, limit + 9])
        got = tail_in(raw[-keep:] if 0 < keep < len(raw) else raw, len(raw), lines, limit)
        assert (got.text, got.start, got.end, got.size) == _local(tmp_path, raw, lines, limit), (raw, lines, limit)


def test_s36_edges_get_logs_tail_of_a_pod_job_answers_from_the_executors_tail(
        fake: FakeKubernetes, pod_log: tuple[KubernetesExecutor, str], inventory: KubernetesInventory,
        tmp_path: Path) -> None:
    """``GET jobs/{id}/logs?tail=`` of a job whose log is a pod's (no file here): the service asks the executor's tail
    (the size known too), not the read through in slices."""
    from dataclasses import replace
    from datetime import datetime, timezone

    from jupyter_sched.model import JobState
    from jupyter_sched.services import Services
    from jupyter_sched.services.models import GetJobLogsRequest
    from jupyter_sched.store import JobRecord, Store, sqlite_url

    executor, pod = pod_log
    log = "".join(f"line {i}\n" for i in range(3000))
    fake.append_log(NS, pod, log)
    services = Services(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=inventory, executor=executor)
    try:
        job = replace(make_job("j-tail"), state=JobState.RUNNING, submitted_at=datetime.now(timezone.utc))
        services.store.insert_job(JobRecord(job=job, executor="kubernetes"))
        before = len(fake.requests)
        answer = services.jobs.logs(services.caller("alice", admin=False), "j-tail", GetJobLogsRequest(tail=2))
        assert (answer.text, answer.next_offset, answer.size) == ("line 2998\nline 2999\n", len(log), len(log))
        assert answer.offset == len(log) - len("line 2998\nline 2999\n")
        assert _log_reads(fake, before)[0] == {"container": ["main"], "tailLines": ["3"], "limitBytes": ["65537"]}
    finally:
        services.store.close()


def _stamped(fake: FakeKubernetes, pod: str, second: int | None = None) -> int:
    """Bytes of the pod's log as a ``timestamps=true`` read sends it (every record, or those of ``second``)."""
    return sum(len(at) + 1 + len(line) for at, line in fake.log_records[(NS, pod)]
               if second is None or int(at[17:19]) == second)


def test_s36_left_a_followed_pod_log_costs_what_is_new_per_poll(
        fake: FakeKubernetes, pod_log: tuple[KubernetesExecutor, str], tmp_path: Path) -> None:
    """Session 36 left: each poll of a followed pod log (``logs -f``, the panel) read the log from its start up to
    the reader's offset plus a slice (``limitBytes`` = offset + limit): a big log cost its whole length a poll. Now a
    poll from where the last answer ended asks for ``sinceTime`` = the last line's second with ``timestamps=true``
    and drops the lines it had read: the new bytes plus that second's lines. The answers are the log's own bytes and
    offsets, as before. The API server is the fake (no cluster runs here), speaking the kubelet's stamped format."""
    executor, pod = pod_log
    for second in range(40):  # 1.4 MB: 1,000 lines a second, some sharing one stamp, multi-byte characters
        for part in range(4):
            fake.append_log(NS, pod, "".join(f"step {second}.{part}.{i} loss é€ {i / 7:.5f}\n" for i in range(250)),
                            at=f"2026-12-07T07:00:{second:02d}.{part * 1000:09d}Z")
    data = bytes(fake.logs[(NS, pod)])
    offset, before, sent_before = 0, len(fake.requests), 0
    while True:  # a follower catching up, 64 KiB an answer
        text, following = executor.logs("j-tail", offset, 65536)
        assert text.encode() == data[offset:following], offset
        sent_before = sent_before or len(fake.log_bytes_sent)  # after the first read (from the start, streamed)
        if following == offset:
            break
        offset = following
    assert offset == len(data)
    reads = _log_reads(fake, before)
    assert reads[0] == {"container": ["main"], "timestamps": ["true"]}  # the first: from the start, once
    assert all(r["sinceTime"][0].startswith("2026-12-07T07:00:") and r["timestamps"] == ["true"] for r in reads[1:])
    since = fake.log_bytes_sent[sent_before:]  # each poll's answer: bounded by its slice, whatever its offset
    assert max(since) <= 2 * 65536 + (64 << 10) and sum(since) < 2 * _stamped(fake, pod), since

    # caught up: the next poll costs the new lines and the lines of the last one's second, never the log again
    fake.append_log(NS, pod, "epoch 2 saved\n", at="2026-12-07T07:00:39.000003000Z")
    fake.append_log(NS, pod, "epoch 3 loss 0.1\nsaving…", at="2026-12-07T07:00:41.000000000Z")
    data = bytes(fake.logs[(NS, pod)])
    sent_before = len(fake.log_bytes_sent)
    text, following = executor.logs("j-tail", offset, 65536)
    assert text == "epoch 2 saved\nepoch 3 loss 0.1\nsaving…" and following == len(data)
    (sent,) = fake.log_bytes_sent[sent_before:]
    assert sent == _stamped(fake, pod, 39) + _stamped(fake, pod, 41) < len(data) // 20, sent
    assert executor.logs("j-tail", following, 65536) == ("", following)  # nothing new: nothing but that second

    # any other offset (a restart of the server, a tail's end) reads from the start once, then follows from there
    begin = data.index(b"\n", 1000) + 1  # a line's start, as a tail's end or a follower's offset is
    text, following = executor.logs("j-tail", begin, 100)
    assert text.encode() == data[begin:following] and begin + 96 < following <= begin + 100
    before = len(fake.requests)
    text, again = executor.logs("j-tail", following, 100)
    assert text.encode() == data[following:again] and "sinceTime" in _log_reads(fake, before)[0]


def test_s36_left_a_followed_pod_log_in_small_slices_is_the_log_byte_for_byte(
        fake: FakeKubernetes, pod_log: tuple[KubernetesExecutor, str]) -> None:
    """The follow's marks inside a line, across lines sharing one stamp or one second, and at a cut multi-byte
    character: read in slices of 4 to 11 bytes, from the log's start or on from the last answer, the answers are
    its bytes in order and their offsets its own."""
    executor, pod = pod_log
    pick = random.Random(37)
    for n in range(36):
        line = "".join(pick.choice(["a", "é", "€", "xyz", " "]) for _ in range(pick.randint(0, 6)))
        fake.append_log(NS, pod, line + "\n", at=f"2026-12-07T07:00:{n // 9:02d}.{(n // 3) * 7:09d}Z")
    data = bytes(fake.logs[(NS, pod)])
    offset, got = 0, b""
    while True:
        text, following = executor.logs("j-tail", offset, pick.randint(4, 11))
        assert text.encode() == data[offset:following], offset
        if following == offset:
            break
        got, offset = got + text.encode(), following
    assert got == data
