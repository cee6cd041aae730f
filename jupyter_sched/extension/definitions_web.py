"""Job definitions on the server: settings, the service's wiring, the REST routes, kept notebooks.

Routes (relative to ``{base_url}api/sched/``; each parses, makes one service call, replies):

====================================  =========================================================
``GET  definitions[?all=true]``       the caller's definitions (admins: everyone's), each with its last run
``POST definitions``                  create (201); body: see :mod:`jupyter_sched.definitions.validation`
``POST definitions/preview``          ``{schedule, timezone}`` → the next firings, in words too
``GET  definitions/{id}``             one definition with its runs and next firings
``PATCH definitions/{id}``            change some fields (a new schedule fires from now on)
``DELETE definitions/{id}``           delete (runs stay as history)
``POST definitions/{id}/pause``       stop firing;  ``.../resume``: fire again from now on
``GET  definitions/{id}/runs``        runs, newest first (``limit`` 1..500)
``POST definitions/{id}/runs``        run now, optionally ``{"parameters": {...}}`` for this run
``GET  jobs/{id}/notebook``           a notebook run's executed copy (``?download=true``: as a file)
``POST jobs/{id}/notebook/open``      copy it under the server's root to open in JupyterLab → ``{path}``
====================================  =========================================================

The executed notebook of each run lives in the run's job directory (``log_dir/<job id>/``) and is
kept ``executed_notebook_retention_days`` days after the run ends (a sweep on the leading engine
deletes older ones; 0 keeps them). "Open" copies it to ``<root>/<executed_notebooks_dir>/<job
id>/`` — a file of the user's own from then on.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web
from traitlets import Float, Unicode, validate
from traitlets.config import Configurable

from ..errors import NotFoundError, ValidationError
from .config import config_error
from .handlers import SchedHandler

__all__ = ["DEFINITION_HANDLERS", "DefinitionsConfig", "build_definitions", "executed_notebook_path"]

log = logging.getLogger(__name__)

_SWEEP_EVERY_S = 3600.0


class DefinitionsConfig(Configurable):
    """Job definitions and notebook runs (``c.SchedApp.definition_*``, ``executed_notebook*``)."""

    definition_min_interval_s = Float(
        60.0,
        config=True,
        help="""Shortest time between two firings a definition's schedule may ask for, in seconds.
        Default: 60 (cron's minute). Lower it (>= 1) to allow six-field schedules with seconds,
        e.g. for demos; every firing is a job in the queue, so keep it coarse on shared servers.""",
    )
    definition_misfire_grace_s = Float(
        60.0,
        config=True,
        help="""Seconds a firing may be late and still run as scheduled. Default: 60. Later than
        that it was missed (no server led the store then) and follows the definition's missed
        policy: run_once (one catch-up run) or skip. Must exceed the engine's tick and the leader
        lease (15 s), so a leader change never counts as downtime.""",
    )
    executed_notebook_retention_days = Float(
        30.0,
        config=True,
        help="""Days an executed notebook (outputs and errors of a notebook run) is kept after its
        run ended. Default: 30; 0 keeps them forever. Copies a user opened in JupyterLab are theirs
        and never deleted.""",
    )
    executed_notebooks_dir = Unicode(
        "scheduled-runs",
        config=True,
        help="""Folder under the server's root directory where "open" puts a run's executed
        notebook (<folder>/<job id>/<notebook>). Default: "scheduled-runs". A relative path
        without "..".""",
    )

    @validate("definition_min_interval_s")
    def _check_interval(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if not 1 <= value <= 86400:
            raise config_error("definition_min_interval_s", value, "must be 1..86400 seconds", "set e.g. 60")
        return value

    @validate("definition_misfire_grace_s", "executed_notebook_retention_days")
    def _check_non_negative(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if value != value or value < 0:
            raise config_error(proposal["trait"].name, value, "must be >= 0", "set e.g. 60 (seconds) or 30 (days)")
        return value

    @validate("executed_notebooks_dir")
    def _check_dir(self, proposal: dict[str, Any]) -> str:
        value = str(proposal["value"])
        if not value or os.path.isabs(value) or ".." in Path(value).parts:
            raise config_error("executed_notebooks_dir", value, "must be a relative folder without '..'",
                               'set e.g. "scheduled-runs"')
        return value


def executed_notebook_path(service: Any, job_id: str) -> Path:
    """Where the executed notebook of ``job_id`` is (it may not exist: not a notebook, or swept)."""
    record = service.store.get_job(job_id)
    handle = record.handle or {}
    job_dir = Path(str(handle["job_dir"])) if handle.get("job_dir") else Path(service.executor.job_dir(job_id))
    return job_dir / "executed.ipynb"


def sweep_executed_notebooks(service: Any, *, retention_days: float, now: float | None = None) -> int:
    """Delete executed notebooks of runs that ended more than ``retention_days`` ago; how many."""
    if retention_days <= 0:
        return 0
    root = getattr(service.executor, "root", None)
    if root is None or not Path(root).is_dir():
        return 0
    cutoff = (now if now is not None else time.time()) - retention_days * 86400
    removed = 0
    for executed in Path(root).glob("*/executed.ipynb"):
        try:
            if executed.stat().st_mtime >= cutoff:
                continue
            record = service.store.get_job(executed.parent.name)
        except (OSError, NotFoundError):
            continue
        if record.job.state.terminal and record.job.finished_at and record.job.finished_at.timestamp() < cutoff:
            executed.unlink(missing_ok=True)
            removed += 1
    return removed


def build_definitions(app: Any) -> Any:
    """The ``DefinitionsService`` of an embedded server, its firing loop hooked to the engine
    (leading engine only) with the retention sweep; None in hub-client mode (the central service
    has them)."""
    from ..definitions.jobs import ServiceRunJobs
    from ..definitions.service import DefinitionsService

    service = app.services
    if not hasattr(service, "engine"):
        return None
    jobs = ServiceRunJobs(service)
    definitions = DefinitionsService(
        service.store, jobs, now=service.clock.now, ids=service.ctx.ids, render_job=jobs.render,
        default_team=service.admission.policy.default_team, min_interval_s=app.definition_min_interval_s,
        misfire_grace_s=app.definition_misfire_grace_s, publish=service.bus.publish)
    service.engine.leader_hooks.append(definitions.fire_due)
    last_sweep = [0.0]

    def sweep() -> None:
        if time.monotonic() - last_sweep[0] >= _SWEEP_EVERY_S:
            last_sweep[0] = time.monotonic()
            sweep_executed_notebooks(service, retention_days=app.executed_notebook_retention_days)

    service.engine.leader_hooks.append(sweep)
    return definitions


class _DefinitionsHandler(SchedHandler):
    """Base: the definitions service, off the event loop."""

    @property
    def definitions(self) -> Any:
        found = getattr(self.sched, "definitions", None)
        if found is None:
            raise NotFoundError("job definitions are served by the central service here", field="path",
                                hint="use the hub's jupyter_sched service")
        return found

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(fn, *args, **kwargs)


class DefinitionsHandler(_DefinitionsHandler):
    """``GET definitions`` / ``POST definitions``."""

    @property
    def _track_activity(self) -> bool:  # type: ignore[override]
        return self.request.method != "GET"

    @web.authenticated
    @authorized
    async def get(self) -> None:
        caller = self.caller
        everyone = self.query_bool("all")
        if everyone and not caller.admin:
            from ..errors import AuthorizationError

            raise AuthorizationError("only admins may list everyone's definitions", field="all",
                                     hint="leave out all to list your own")
        self.reply(await self.call(self.definitions.list_definitions, user=caller.user, is_admin=caller.admin,
                                   all_users=everyone))

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        self.reply(await self.call(self.definitions.create, body, user=self.caller.user), status=201)


class PreviewHandler(_DefinitionsHandler):
    """``POST definitions/preview``: the next firings of ``{schedule, timezone}``."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        self.reply(await self.call(self.definitions.preview, body))


class DefinitionHandler(_DefinitionsHandler):
    """``GET|PATCH|DELETE definitions/{id}``."""

    @web.authenticated
    @authorized
    async def get(self, definition_id: str) -> None:
        caller = self.caller
        runs = self.query_int("runs", 20, minimum=1, maximum=500)
        self.reply(await self.call(self.definitions.get, definition_id, user=caller.user, is_admin=caller.admin,
                                   runs=runs))

    @web.authenticated
    @authorized
    async def patch(self, definition_id: str) -> None:
        caller = self.caller
        body = self.json_body()
        self.reply(await self.call(self.definitions.update, definition_id, body, user=caller.user,
                                   is_admin=caller.admin))

    @web.authenticated
    @authorized
    async def delete(self, definition_id: str) -> None:
        caller = self.caller
        self.reply(await self.call(self.definitions.delete, definition_id, user=caller.user, is_admin=caller.admin))


class PauseHandler(_DefinitionsHandler):
    """``POST definitions/{id}/pause`` and ``.../resume``."""

    @web.authenticated
    @authorized
    async def post(self, definition_id: str, action: str) -> None:
        caller = self.caller
        fn = self.definitions.pause if action == "pause" else self.definitions.resume
        self.reply(await self.call(fn, definition_id, user=caller.user, is_admin=caller.admin))


class RunsHandler(_DefinitionsHandler):
    """``GET definitions/{id}/runs`` and ``POST definitions/{id}/runs`` (run now, 201)."""

    @web.authenticated
    @authorized
    async def get(self, definition_id: str) -> None:
        caller = self.caller
        limit = self.query_int("limit", 50, minimum=1, maximum=500)
        self.reply(await self.call(self.definitions.runs, definition_id, user=caller.user, is_admin=caller.admin,
                                   limit=limit))

    @web.authenticated
    @authorized
    async def post(self, definition_id: str) -> None:
        caller = self.caller
        body = self.json_body() if self.request.body else {}
        self.reply(await self.call(self.definitions.run_now, definition_id, body, user=caller.user,
                                   is_admin=caller.admin), status=201)


class _NotebookHandler(SchedHandler):
    """Base: the executed notebook of a job the caller may see."""

    def _path(self, job_id: str) -> Path:
        caller = self.caller
        self.services.jobs.get(caller, job_id)  # visibility: 404 if not yours (audited)
        path = executed_notebook_path(self.services, job_id)
        if not path.is_file():
            raise NotFoundError(f"job {job_id} has no executed notebook", field="job_id",
                                hint="only notebook runs keep one, from their start until the retention ends")
        return path


class ExecutedNotebookHandler(_NotebookHandler):
    """``GET jobs/{id}/notebook[?download=true]``: a notebook run's executed copy (outputs, errors)."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self, job_id: str) -> None:
        path = await asyncio.to_thread(self._path, job_id)
        text = await asyncio.to_thread(path.read_text, encoding="utf-8")
        if self.query_bool("download"):
            record = await asyncio.to_thread(self.services.store.get_job, job_id)
            stem = Path(record.job.spec.notebook or "notebook.ipynb").stem
            self.set_header("Content-Disposition", f'attachment; filename="{stem}-{job_id}.ipynb"')
        self.set_header("Content-Type", "application/x-ipynb+json")
        self.finish(text)


class OpenNotebookHandler(_NotebookHandler):
    """``POST jobs/{id}/notebook/open``: copy the executed notebook under the root; ``{"path"}`` to open."""

    _track_activity = True

    @web.authenticated
    @authorized
    async def post(self, job_id: str) -> None:
        source = await asyncio.to_thread(self._path, job_id)
        root = getattr(self.sched.serverapp, "root_dir", None)
        if not root:
            raise ValidationError("this server has no root directory to open files from", field="job_id",
                                  hint="download the notebook instead (GET jobs/{id}/notebook?download=true)")
        record = await asyncio.to_thread(self.services.store.get_job, job_id)
        name = Path(record.job.spec.notebook or "notebook.ipynb").name
        relative = Path(self.sched.executed_notebooks_dir) / job_id / name
        target = Path(root) / relative
        await asyncio.to_thread(target.parent.mkdir, parents=True, exist_ok=True)
        await asyncio.to_thread(shutil.copyfile, source, target)
        self.reply({"path": relative.as_posix(), "job_id": job_id})


_DEF = r"(?P<definition_id>[^/]+)"
_JOB = r"(?P<job_id>[^/]+)"

DEFINITION_HANDLERS: list[tuple[str, type[SchedHandler]]] = [
    ("definitions", DefinitionsHandler),
    ("definitions/preview", PreviewHandler),
    (f"definitions/{_DEF}", DefinitionHandler),
    (f"definitions/{_DEF}/(?P<action>pause|resume)", PauseHandler),
    (f"definitions/{_DEF}/runs", RunsHandler),
    (f"jobs/{_JOB}/notebook", ExecutedNotebookHandler),
    (f"jobs/{_JOB}/notebook/open", OpenNotebookHandler),
]
"""Routes of job definitions and kept notebooks (appended to the extension's route table)."""
