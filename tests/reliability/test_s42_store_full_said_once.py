"""store41's leftover (newuser41 N3, part 2): while the store's disk is full the engine wrote "reconnecting to the
database (attempt n, next in s)" at WARNING every backoff, each refused write's caller its traceback at ERROR, and each
507 an ERROR line plus the request's headers; the scheduler-off 503 an INFO line per panel poll. The full disk is now
said once by the store (:meth:`StoreOutage.full`), reminded once a minute, and its end said once a write commits with
room on the disk — at WARNING, as the end of a database outage now is: the package's INFO lines never reach the
server's log. The end-to-end check is in test_newuser41_store_start.py (a real tmpfs filled under a real server).

In-process: the outage tracker with a driven clock, the log filter with a driven clock.
"""

from __future__ import annotations

import logging

import pytest

from jupyter_sched.errors import StoreError, StoreFullError
from jupyter_sched.extension.request_log import REPEATS_EVERY_S, Repeats
from jupyter_sched.store.outage import StoreOutage, log_store_failure

CAUSE = "the store's disk /srv/sched is full (0 bytes free of 16 MiB; ENOSPC)"


def test_s42_store_full_is_said_once_reminded_once_a_minute_and_its_end_once_there_is_room(
        caplog: pytest.LogCaptureFixture) -> None:
    now, room = [100.0], [False]
    outage = StoreOutage("the database (sqlite:///x)", monotonic=lambda: now[0], room=lambda: room[0])
    caplog.set_level(logging.DEBUG, logger="jupyter_sched.store")
    for _ in range(40):
        outage.full(CAUSE)
        now[0] += 1.0
    outage.answered(wrote=False)  # a read commits on a full disk: no news
    outage.answered(wrote=True)  # a write committed into pages the store had, the disk still full: no news
    assert outage.full_now
    now[0] += 30.0
    outage.full(CAUSE)  # 70 s in: the reminder
    room[0] = True
    outage.answered(wrote=True)
    said = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert [level for level, _ in said] == [logging.WARNING] * 3, said
    assert said[0][1].startswith(f"{CAUSE} (since ") and "writes are refused and nothing of them is saved" in said[0][1]
    assert said[1][1] == f"the store's disk is still full after 70 s (41 writes refused): {CAUSE}", said
    assert said[2][1] == "the store's disk has room again after 70 s (41 writes refused meanwhile)", said
    assert not outage.full_now and outage.full_spells == 1


def test_s42_a_store_outages_end_is_said_at_its_level(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    outage = StoreOutage("the database (postgresql://h/d)", monotonic=lambda: now[0])
    caplog.set_level(logging.DEBUG, logger="jupyter_sched.store")
    outage.failed("connection refused")
    now[0] = 12.0
    outage.answered()
    assert [(r.levelno, r.getMessage()) for r in caplog.records][-1] == (
        logging.WARNING, "the database (postgresql://h/d) answers again after 12 s (1 failed reads and writes meanwhile)")


def test_s42_a_callers_full_disk_failure_is_debug_and_any_other_an_error(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("jupyter_sched.test_s42")
    caplog.set_level(logging.DEBUG, logger="jupyter_sched.test_s42")
    log_store_failure(log, "could not record when running jobs were last seen running", StoreFullError(CAUSE))
    log_store_failure(log, "could not read running work", StoreError("store failure: a bad row"))
    assert [r.levelno for r in caplog.records] == [logging.DEBUG, logging.ERROR]


def test_s42_scheduler_off_and_store_full_answers_write_a_line_a_minute() -> None:
    now = [0.0]
    written: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            written.append(record.getMessage())

    handler = Collect()
    handler.addFilter(Repeats(lambda: now[0]))
    logger = logging.getLogger("s42-store-full-repeats")
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    off = ("jupyter_sched GET /api/sched/jobs -> 503 [reference {0:08x}]: the scheduler is not running: the default "
           "store's disk /root/.local/share/jupyter/jupyter_sched is full (0 bytes free of 16 MiB; ENOSPC)")
    full = "jupyter_sched POST /api/sched/jobs -> 507 [reference {0:08x}]: store failure: " + CAUSE
    try:
        for n in range(30):  # a panel polls every 2 s; a notebook loop submits
            logger.info(off.format(n))
            logger.warning(full.format(n))
            now[0] += 1.0
        assert written == [off.format(0), full.format(0)], written
        now[0] += REPEATS_EVERY_S
        logger.info(off.format(99))
        logger.warning(full.format(99))
        assert len(written) == 4 and "29 more requests answered 503 while the scheduler is off" in written[2], written
        assert "29 more requests answered 507 while the store's disk is full" in written[3], written
    finally:
        logger.removeHandler(handler)
