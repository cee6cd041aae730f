"""red26 R6: a 60 KB f-string script (under the old 64 KiB in-process bound) still cost ~0.9 s of the
service's GIL per dry run.

Now the service compiles at most ``IN_PROCESS_BYTES`` = 8 KiB of a script itself (a larger one in the
limited child, which a script up to 64 KiB waits a second for when busy). The report also said a dry
run over the user's limit was refused only after its body was compiled: on main the compile runs in the
service's dry run, on the dry-run threads, after the place is taken — pinned here (it passed before).
A real Jupyter server; ``userfiles``' compile spied on.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from jupyter_sched import userfiles
from tests.services.test_s26_red26_r2_r3_compile_apart import compiled_here

from .conftest import EVE_TOKEN, wait_for

__all__ = ["compiled_here"]  # the fixture, for this module's tests

FSTRING = "a = 1\nx = f'" + "{a}" * 20_000 + "'\n"  # 60,008 bytes of f-string fields
SOURCE_JOB = {"gpus": 0, "script": "fs.py", "source": FSTRING}


async def test_red26_r6_a_dry_run_over_the_users_limit_is_refused_before_its_body_is_compiled(
        sched_app: Any, api: Any, monkeypatch: Any, compiled_here: list[int]) -> None:
    service = sched_app.services.jobs
    real = service.dryrun
    gate = threading.Event()
    inside = {"eve": 0}

    def held(caller: Any, request: Any) -> Any:
        inside["eve"] += 1
        gate.wait(30)
        return real(caller, request)

    monkeypatch.setattr(service, "dryrun", held)
    most = sched_app.dryrun_concurrency
    eves = [asyncio.ensure_future(api("POST", "dryrun", {"gpus": 0, "command": ["true"]}, token=EVE_TOKEN))
            for _ in range(most)]
    try:
        async def places_held() -> bool:
            return inside["eve"] == most
        await wait_for(places_held)
        compiled_here.clear()
        small = "a = 1\nx = f'" + "{a}" * 2_000 + "'\n"  # 6 KB: compiled here when computed
        status, body = await api("POST", "dryrun", {"gpus": 0, "script": "s.py", "source": small}, token=EVE_TOKEN)
        assert status == 429 and "of your dry runs are in flight" in body["error"]["message"], body
        assert compiled_here == [], "refused before its body was compiled"
    finally:
        gate.set()
    assert sorted(s for s, _ in [await t for t in eves]) == [200] * most


async def test_red26_r6_a_60_kb_f_string_script_is_compiled_apart_not_in_the_service(
        sched_app: Any, api: Any, compiled_here: list[int]) -> None:
    assert userfiles.IN_PROCESS_BYTES == 8 << 10
    status, body = await api("POST", "dryrun", SOURCE_JOB, token=EVE_TOKEN)
    assert status == 200, body
    assert all(size <= userfiles.IN_PROCESS_BYTES for size in compiled_here), compiled_here
    broken = {**SOURCE_JOB, "source": "y = 2\n" * 2_000 + FSTRING + "def broken(:\n"}  # 72 KB: apart, still refused
    status, body = await api("POST", "dryrun", broken, token=EVE_TOKEN)
    assert status == 400 and body["error"]["field"] == "source" and "line 2003" in body["error"]["message"], body
    assert all(size <= userfiles.IN_PROCESS_BYTES for size in compiled_here), compiled_here
