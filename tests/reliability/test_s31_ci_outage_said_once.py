"""CI on aa0acf34 (session 31): a PostgreSQL restart under the engine's retention pass logged "retention could not
prune …: store failure: OperationalError: terminating connection due to administrator command" as a WARNING beside
the store's own outage line (hubadmin25 B6: the outage is said once, and its end). A housekeeping task's fault that
is the database not answering is now left to the outage line (DEBUG here), and the server shutting down under a
statement (PostgreSQL 57P01-57P03) counts as the database not answering."""

from __future__ import annotations

import logging

import pytest

from jupyter_sched.engine.faults import FaultLog
from jupyter_sched.errors import StoreError
from jupyter_sched.store.outage import UNREACHABLE


def test_s31_a_housekeeping_fault_that_is_the_outage_is_not_a_second_warning(caplog: pytest.LogCaptureFixture) -> None:
    faults = FaultLog(logging.getLogger("test.faults"))
    down = StoreError("store failure: OperationalError: terminating connection due to administrator command",
                      details={UNREACHABLE: True})
    with caplog.at_level(logging.DEBUG, logger="test.faults"):
        assert faults.warn("retention could not prune", down) is False
        assert faults.warn("retention could not prune", StoreError("store failure: DataError: bad row")) is True
    said = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert [m for level, m in said if level >= logging.WARNING] == ["retention could not prune: store failure: "
                                                                   "DataError: bad row"], said
    assert any(level == logging.DEBUG and "administrator command" in m for level, m in said), said
