"""Hub admin 22, H12: a typo in the inventory file at run time — one WARNING per distinct error
(setting, field, fix, the inventory kept and when it was read), no traceback, the file re-read once
per refresh interval (not by every reader), and the same sentence in ``GET inventory`` (admins)
and the admin's ``jupyter-sched status``."""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.static import StaticInventory
from jupyter_sched.services import CachedInventory, Services
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.wording.status import status_lines

GOOD = "nodes:\n  - {name: n1, gpu_count: 2, gpu_model: A100-80GB, gpu_memory: 80GiB}\n" \
       "  - {name: n2, gpu_count: 2, gpu_model: A100-80GB, gpu_memory: 80GiB}\n"
TYPO = GOOD.replace("n2, gpu_count: 2", "n2, gpu_count: two")
LOGGER = "jupyter_sched.services.config"


class Counting:
    """The static source, counting its reads."""

    def __init__(self, path: Path) -> None:
        self.inner = StaticInventory(path)
        self.setting = self.inner.setting
        self.reads = 0

    def current(self) -> Any:
        self.reads += 1
        return self.inner.current()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def nodes(tmp_path: Path) -> Path:
    path = tmp_path / "nodes.yaml"
    path.write_text(GOOD)
    return path


def _cached(nodes: Path, clock: Clock) -> tuple[CachedInventory, Counting]:
    source = Counting(nodes)
    wall = lambda: datetime(2026, 12, 5, 6, 5, 30, tzinfo=timezone.utc)  # noqa: E731
    return CachedInventory(source, 5.0, clock, repeat_s=300.0, wall=wall), source


def test_s22_hubadmin22_h12_one_warning_no_traceback_one_read_per_interval(
        nodes: Path, caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    cached, source = _cached(nodes, clock)
    good = cached.current()
    nodes.write_text(TYPO)
    clock.now += 5.0
    caplog.set_level(logging.WARNING, logger=LOGGER)
    for _ in range(50):  # readers of one engine tick and many status polls
        assert cached.current() is good, "the last good inventory is kept"
    assert source.reads == 2, "a failed read is retried once per refresh interval, not by every reader"
    for _ in range(10):  # 50 s more of the same typo: re-read each interval, said once
        clock.now += 5.0
        cached.current()
    assert source.reads == 12
    said = [r for r in caplog.records if r.name == LOGGER]
    assert len(said) == 1, [r.getMessage() for r in said]
    record = said[0]
    assert record.levelno == logging.WARNING and record.exc_info is None, "an admin's typo: no traceback"
    text = record.getMessage()
    for part in ("c.SchedApp.inventory_file", "nodes[1].gpu_count", "a whole number of GPUs", "(got 'two')",
                 "keeping the last good inventory (read at 06:05 UTC)", "Fix: "):
        assert part in text, (part, text)
    assert "1,099,511,627,776" not in text
    assert cached.warnings() == [text.removeprefix("jupyter_sched: ")]
    clock.now += 300.0  # still broken minutes later: said again, once
    cached.current()
    assert len([r for r in caplog.records if r.name == LOGGER]) == 2
    nodes.write_text(GOOD)
    clock.now += 5.0
    cached.current()
    assert cached.warnings() == [], "fixed: nothing in force"
    assert "reads again" in caplog.records[-1].getMessage()


def test_s22_hubadmin22_h12_a_real_bug_logs_its_traceback_once(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()

    class Buggy:
        setting = "c.SchedApp.inventory_file"
        ok = True

        def current(self) -> Any:
            if self.ok:
                return "inventory"
            raise KeyError("gpus")

    buggy = Buggy()
    cached = CachedInventory(buggy, 5.0, clock)
    cached.current()
    buggy.ok = False
    caplog.set_level(logging.WARNING, logger=LOGGER)
    for _ in range(20):
        clock.now += 5.0
        cached.current()
    said = [r for r in caplog.records if r.name == LOGGER]
    assert len(said) == 1 and said[0].exc_info is not None, "a bug: one traceback, not one per read"


def test_s22_hubadmin22_h12_get_inventory_and_status_say_it_to_admins(nodes: Path, tmp_path: Path) -> None:
    clock = Clock()
    cached, _ = _cached(nodes, clock)
    svc = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite")), inventory=cached,
                   executor=LocalExecutor(tmp_path / "jobs"))
    try:
        boss, ana = svc.caller("boss", admin=True), svc.caller("ana", admin=False)
        assert svc.system.inventory(boss).to_wire()["warnings"] == []
        nodes.write_text(TYPO)
        clock.now += 5.0
        wire = svc.system.inventory(boss).to_wire()
        assert len(wire["warnings"]) == 1 and "nodes[1].gpu_count" in wire["warnings"][0]
        assert "read at 06:05 UTC" in wire["warnings"][0]
        assert len(wire["gpus"]) == 4, "the last good inventory is answered"
        assert svc.system.inventory(ana).to_wire()["warnings"] == [], "the file's path and fields: admins only"
        lines = status_lines("http://x/", {"mode": "hub"}, {"user": "boss"}, wire, now=datetime.now(timezone.utc))
        assert any(line.startswith("inventory  c.SchedApp.inventory_file") for line in lines), lines
    finally:
        svc.store.close()


def test_s22_hubadmin22_h12_gpu_count_bound_reads_as_gpus(nodes: Path) -> None:
    nodes.write_text(TYPO)
    with pytest.raises(ValidationError) as err:
        StaticInventory(nodes).current()
    assert "nodes[1].gpu_count must be a whole number of GPUs from 0 to 4,096 (got 'two')" in err.value.message
    assert err.value.field == "nodes[1].gpu_count"
