"""New user 22, "small items seen on the way": one named case each, fails before its fix.

- ``%schedule define show hr`` with no runs ended with pandas' ``Empty DataFrame / Columns: […]``;
  ``%gpu`` on a host without GPUs did too, under its own "No NVIDIA GPUs" sentence;
- ``cancel`` of a lease the idle reclaim had released said ``lease l-… is already released —
  request a new lease [conflict]`` (exit 1): the user wanted it gone, and it is — news, not an error;
- ``%gpu`` in a team holding all its quota allows said ``Ask with: %gpu request 1`` (a request that
  would wait) while the caller's other team had room.
"""

from __future__ import annotations

import argparse
import io
from typing import Any

import pytest

from jupyter_sched.cli.cancel import cancel
from jupyter_sched.cli.main import EXIT_OK, Streams
from jupyter_sched.client._wire import NamedJob, Req
from jupyter_sched.errors import ConflictError
from jupyter_sched.magics.core import SchedMagics
from jupyter_sched.magics.define import run_define
from jupyter_sched.wording.quota import ask_for_gpus, full_team_limit

HR = {"id": "d-1hr", "name": "hr", "script": "hr.py", "cron": "0 * * * *", "timezone": "UTC", "paused": False,
      "parameters": {}, "gpus": 1, "runs": [], "upcoming": []}


@pytest.mark.parametrize("action", ["show", "runs"])
def test_s22_newuser22_small_define_without_runs_says_no_runs_yet(action: str) -> None:
    def call(req: Req) -> Any:
        return [HR] if req.path == "definitions" else HR

    said: list[str] = []
    shown = run_define(call, [action, "hr"], resolve=lambda p, what: p, say=said.append)
    assert shown is None, shown  # before: an empty DataFrame, printed as "Empty DataFrame / Columns: …"
    assert said[-1].strip() == "No runs yet: %schedule define run hr starts one now.", said


RECLAIMED = {"id": "l-1abc", "kind": "lease", "name": "cvlease", "state": "cancelled", "user": "root",
             "message": "reclaimed while idle: kernel idle and GPU < 5 % for 4 min; GPUs released, the kernel keeps running",
             "finished_at": "2026-12-05T05:18:21Z", "resources": {"gpus": 1}}


class _Client:
    """The wire of a cancel: the lease as read, and the server's 409 for work already ended."""

    def __init__(self, job: dict[str, Any]) -> None:
        self.job_row = job
        self.cancels = 0

    def job_id_of(self, ref: str, command: str = "") -> str:
        return ref

    def job_named(self, ref: str, command: str = "") -> NamedJob:  # the resolver the CLI and the magics call (newuser22 N4)
        return NamedJob(ref)

    def job(self, job_id: str) -> dict[str, Any]:
        return self.job_row

    def cancel(self, job_id: str) -> dict[str, Any]:
        self.cancels += 1
        raise ConflictError(f"lease {job_id} is already released", field="lease_id", hint="request a new lease")

    release_lease = cancel


def test_s22_newuser22_small_cli_cancel_of_released_lease_is_news() -> None:
    out, err = io.StringIO(), io.StringIO()
    args = argparse.Namespace(mine=False, everyone=False, job_ids=["l-1abc"], json=False)
    code = cancel(_Client(RECLAIMED), args, Streams(out=out, err=err, stdin=io.StringIO()))
    assert code == EXIT_OK and err.getvalue() == "", err.getvalue()
    said = out.getvalue()
    assert said.startswith("nothing to do: it had already ended — lease l-1abc (cvlease): "), said
    assert "reclaimed while idle" in said and "request a new lease" not in said, said


def test_s22_newuser22_small_cli_cancel_when_it_ends_meanwhile_is_news_too() -> None:
    client = _Client({**RECLAIMED, "state": "running"})

    def ended_now(job_id: str) -> dict[str, Any]:
        client.job_row = RECLAIMED  # released between the read and the cancel
        raise ConflictError(f"lease {job_id} is already released", field="lease_id", hint="request a new lease")

    client.cancel = ended_now  # type: ignore[method-assign]
    out, err = io.StringIO(), io.StringIO()
    args = argparse.Namespace(mine=False, everyone=False, job_ids=["l-1abc"], json=False)
    assert cancel(client, args, Streams(out=out, err=err, stdin=io.StringIO())) == EXIT_OK
    assert out.getvalue().startswith("nothing to do: it had already ended — lease l-1abc"), out.getvalue()


def test_s22_newuser22_small_magic_cancel_of_released_lease_is_news(capsys: pytest.CaptureFixture[str]) -> None:
    client = _Client(RECLAIMED)
    magics = SchedMagics(None, client_factory=lambda: client)  # type: ignore[arg-type,return-value]
    magics.schedule("cancel l-1abc")
    said = capsys.readouterr()
    assert said.out.startswith("Nothing to do: it had already ended — lease l-1abc (cvlease)"), said
    assert "request a new lease" not in said.out + said.err, said


def _me(in_use: float) -> dict[str, Any]:
    ml = {"team": "ml", "in_use": in_use, "yours": in_use, "unlisted": False,
          "quotas": [{"team": "ml", "user": None, "gpu_model": "*", "guaranteed": 2, "borrowing_limit": 2}]}
    return {"user": "root", "team": "ml", "teams": ["ml", "cv"], "by_team": [ml]}


def test_s22_newuser22_small_gpu_in_a_full_team_points_at_the_team_with_room() -> None:
    assert full_team_limit(_me(4)) == 4 and full_team_limit(_me(3)) is None
    assert ask_for_gpus(_me(4), "%gpu request 1", room="cv") == (
        "Team ml holds all 4 GPUs its quota allows, so %gpu request 1 would wait; team cv has room: "
        "%gpu request 1 --team cv")
    assert ask_for_gpus(_me(3), "%gpu request 1", room="cv") == "Ask with: %gpu request 1"  # room in ml: as before
    assert ask_for_gpus(_me(4), "%gpu request 1") == "Ask with: %gpu request 1"  # no team with room: as before


class _GpuClient:
    """What ``%gpu`` reads: the inventory, the queue, telemetry, ``GET me`` and dry runs per team."""

    kernel_id = None

    def __init__(self, gpus: list[dict[str, Any]], me: dict[str, Any], fits: dict[str, bool]) -> None:
        self.gpus, self.me_row, self.fits, self.dryruns = gpus, me, fits, []  # type: ignore[var-annotated]

    def inventory(self) -> dict[str, Any]:
        return {"gpus": self.gpus, "simulated": False, "nvml": {"available": False, "error": "NVML Shared Library Not Found"}}

    def queue(self) -> list[dict[str, Any]]:
        return []

    def telemetry(self, job: str | None = None) -> dict[str, Any]:
        return {"samples": []}

    def me(self) -> dict[str, Any]:
        return self.me_row

    def dryrun(self, body: dict[str, Any]) -> dict[str, Any]:
        self.dryruns.append(body["team"])
        return {"fits": self.fits.get(body["team"], False)}


GPU = {"uuid": "GPU-a", "node": "vm", "index": 0, "model": "A100", "memory_mib": 81920, "health": "ok"}


def test_s22_newuser22_small_gpu_magic_asks_the_other_team_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    client = _GpuClient([GPU], _me(4), {"cv": True})
    SchedMagics(None, client_factory=lambda: client).gpu("")  # type: ignore[arg-type,return-value]
    out = capsys.readouterr().out
    assert "This kernel holds no GPUs. Team ml holds all 4 GPUs its quota allows, so %gpu request 1 would wait; " \
           "team cv has room: %gpu request 1 --team cv" in out, out
    assert client.dryruns == ["cv"]
    client = _GpuClient([GPU], _me(2), {"cv": True})
    SchedMagics(None, client_factory=lambda: client).gpu("")  # type: ignore[arg-type,return-value]
    assert "This kernel holds no GPUs. Ask with: %gpu request 1" in capsys.readouterr().out
    assert client.dryruns == []  # room in its own team: no dry run asked


def test_s22_newuser22_small_gpu_magic_without_gpus_returns_no_empty_frame(capsys: pytest.CaptureFixture[str]) -> None:
    shown = SchedMagics(None, client_factory=lambda: _GpuClient([], _me(0), {})).gpu("")  # type: ignore[arg-type,return-value]
    assert shown is None, shown  # before: an empty DataFrame under the sentence
    assert "No NVIDIA GPUs available on this host" in capsys.readouterr().out
