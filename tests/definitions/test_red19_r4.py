"""Red team 19, R4: a time zone naming a folder of the zone database (``Europe``), of the tzdata
package (``__pycache__``) or a name too long for a file answered 500 with a traceback (definitions,
preview, PATCH); ``localtime``, ``posixrules``, ``Factory``, ``posix/…`` and ``right/…`` (leap-second
zones: firings drift 27 s) were taken as IANA zones. Every time zone a user or an admin names
goes through one check (``model.units.iana_zone``): 400 naming the field, the name cut."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_sched.definitions.schedule import parse_schedule
from jupyter_sched.errors import ValidationError
from jupyter_sched.model.units import iana_zone

NOT_ZONES = ["Europe", "__pycache__", "A" * 256, "Europe/" + "B" * 300, "localtime", "posixrules", "Factory",
             "posix/Europe/Berlin", "right/UTC", "../etc/passwd", "/etc/localtime", "Europe/"]


@pytest.mark.parametrize("name", NOT_ZONES, ids=[n[:20] for n in NOT_ZONES])
def test_red19_r4_a_name_that_is_no_iana_zone_is_refused_naming_timezone(name: str) -> None:
    with pytest.raises(ValidationError) as info:
        parse_schedule("0 3 * * *", name)
    assert info.value.field == "timezone" and info.value.message.startswith("unknown time zone '"), info.value
    assert len(info.value.message) < 120, info.value.message
    assert iana_zone(name) is None


@pytest.mark.parametrize("name", ["UTC", "Europe/Berlin", "America/New_York", "Etc/UTC", "Asia/Kolkata"])
def test_red19_r4_iana_zones_are_still_taken(name: str) -> None:
    assert parse_schedule("0 3 * * *", name).timezone == name


def test_red19_r4_a_time_window_and_the_servers_time_zone_use_the_same_check() -> None:
    from traitlets import TraitError

    from jupyter_sched.extension.config import PolicyConfig
    from jupyter_sched.queues.windows import TimeWindow

    with pytest.raises(ValidationError) as info:
        TimeWindow(name="night", start="20:00", end="06:00", tz="Europe")
    assert info.value.field == "tz" and "unknown time zone 'Europe'" in info.value.message
    with pytest.raises(TraitError, match="time_zone"):
        PolicyConfig(time_zone="__pycache__")
    assert PolicyConfig(time_zone="Europe/Berlin").time_zone == "Europe/Berlin"


def test_red19_r4_preview_and_create_answer_400_not_500(tmp_path: Path) -> None:
    from jupyter_sched.engine import ManualClock
    from jupyter_sched.executors.local import LocalExecutor
    from jupyter_sched.inventory.simulated import SimulatedInventory
    from jupyter_sched.services import Services
    from jupyter_sched.services.models.definitions import PreviewScheduleRequest
    from jupyter_sched.store import Store, sqlite_url
    from tests.runtime.builders import T0

    clock = ManualClock(T0)
    services = Services(store=Store(sqlite_url(tmp_path / "s.sqlite"), now=clock.now), clock=clock,
                        inventory=SimulatedInventory(1, node="vm"), executor=LocalExecutor(tmp_path / "jobs"))
    try:
        ann = services.caller("ann", admin=False)
        for name in ("Europe", "A" * 256, "__pycache__"):
            with pytest.raises(ValidationError) as info:
                services.definitions.preview(ann, PreviewScheduleRequest(schedule="0 3 * * *", timezone=name))
            assert info.value.field == "timezone"
    finally:
        services.store.close()
