"""newuser31 (measurement beside n9): every CLI command that prints a time named the reader's zone through
``zoneinfo.available_timezones()`` — a walk of the whole zone database, 0.14-0.16 s of each run. A zone name is
now told by its own file where it has one (``model.units._zone_file``); the full list decides the rest, so the
same names are zones as before (red team 19, R4's check)."""

from __future__ import annotations

import os
import zoneinfo

import pytest

from jupyter_sched.model import units


def test_newuser31_a_common_zone_is_told_without_walking_the_database(monkeypatch: pytest.MonkeyPatch) -> None:
    walked: list[bool] = []
    monkeypatch.setattr(units, "_zone_names", lambda: walked.append(True) or frozenset({"Europe/Berlin"}))
    for name in ("Europe/Berlin", "UTC", "America/Argentina/Buenos_Aires", "Etc/GMT+5"):
        assert units.iana_zone(name) is not None, name
    assert walked == []
    for name in ("localtime", "posixrules", "Factory", "Europe", "posix/Europe/Berlin", "right/UTC", "../etc/passwd",
                 "__pycache__", "Europe//Berlin", "x" * 300):
        assert units.iana_zone(name) is None, name


@pytest.mark.skipif(not any(os.path.isdir(base) for base in zoneinfo.TZPATH), reason="no zone database folder here")
def test_newuser31_the_file_check_says_no_zone_the_full_list_does_not() -> None:
    listed = units._zone_names()
    for base in zoneinfo.TZPATH:
        for root, _dirs, files in os.walk(base):
            for name in files:
                rel = os.path.relpath(os.path.join(root, name), base)
                assert not units._zone_file(rel) or rel in listed, rel
        break  # the first folder is the one read
    assert all(units._zone_file(name) for name in listed if not name.startswith(("posix", "right")))
