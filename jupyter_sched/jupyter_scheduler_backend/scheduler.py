"""jupyter-scheduler's backend, served by jupyter_sched: its jobs and job definitions are ours.

jupyter-scheduler's REST API and UI stay as they are; its extension points choose the backend
(``c.SchedulerApp.scheduler_class``, ``environment_manager_class``, ``job_files_manager_class``).
:class:`GpuScheduler` implements ``BaseScheduler`` by calling *this server's* jupyter_sched REST API
(:class:`.api.SelfApi`), so every job and job definition created in jupyter-scheduler goes through
the same authentication, admission, quotas, queue, reasons and accounting as one created by the
panel, ``%schedule`` or the CLI, lives in the one store, and shows everywhere. Nothing is kept in
jupyter-scheduler's own database.

Who asks: jupyter-scheduler's ``BaseScheduler`` API carries no caller, so its requests act as the
server's owner (the identity of the server's token) — which is who uses a personal or
JupyterHub single-user server.

What maps how: see :mod:`.mapping`. Limits, stated rather than faked: one output format (the
executed ``ipynb``); a job cannot be renamed or moved after it was submitted (stop it and create
another); jobs are not deleted (they are the accounting record), so ``delete_job`` is offered as
*off* in ``supported_features`` and refused with that reason. jupyter-scheduler's handlers answer
every backend error with HTTP 500 and its message (their choice, not ours); our messages say
which field and what to do.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

from jupyter_scheduler.environments import EnvironmentManager
from jupyter_scheduler.exceptions import InputUriError, SchedulerError
from jupyter_scheduler.executors import ExecutionManager
from jupyter_scheduler.models import (
    CountJobsQuery,
    CreateJob,
    CreateJobDefinition,
    CreateJobFromDefinition,
    DescribeJob,
    DescribeJobDefinition,
    JobFeature,
    ListJobDefinitionsQuery,
    ListJobDefinitionsResponse,
    ListJobsQuery,
    ListJobsResponse,
    RuntimeEnvironment,
    Status,
    UpdateJob,
    UpdateJobDefinition,
)
from jupyter_scheduler.scheduler import BaseScheduler
from traitlets import Any as AnyTrait
from traitlets import Type, Unicode

from ..client._routes import routes
from ..errors import ConflictError, SchedError
from .api import SelfApi
from .mapping import (
    ENVIRONMENT_NAME,
    NO_PROFILE_COMPUTE_TYPES,
    compute_request,
    definition_fields,
    describe_definition,
    describe_job,
)

__all__ = ["GpuEnvironmentManager", "GpuExecutionManager", "GpuScheduler"]

_MAX_LISTED = 1000


def _sort_key(name: str) -> Any:
    """Sort rows by ``name``; missing values last (as numbers or text, whichever the field holds)."""
    def key(row: Mapping[str, Any]) -> tuple[bool, str]:
        value = row.get(name)
        return (value is None, f"{value:020d}" if isinstance(value, int) else str(value or ""))
    return key


def _refusal(err: SchedError) -> SchedulerError:
    """Our error as jupyter-scheduler's, keeping the field and the fix in the message."""
    text = err.message
    if err.field and err.field not in text:
        text = f"{err.field}: {text}"
    if err.hint:
        text += f" ({err.hint})"
    return SchedulerError(text)


class GpuExecutionManager(ExecutionManager):  # type: ignore[misc]  # jupyter-scheduler ships no type hints
    """Declares what the jupyter_sched backend supports (jupyter-scheduler's UI reads it).

    Execution itself is jupyter_sched's (queue, GPUs, local or Kubernetes executor, the notebook
    runner); jupyter-scheduler never starts this manager's ``execute``.
    """

    def execute(self) -> None:
        raise SchedulerError("jobs run through jupyter_sched's queue, not jupyter-scheduler's execution manager")

    def supported_features(cls) -> dict[JobFeature, bool]:  # theirs: called as cls.supported_features(cls)
        return {
            JobFeature.job_name: True, JobFeature.parameters: True, JobFeature.output_formats: False,
            JobFeature.job_definition: True, JobFeature.idempotency_token: False, JobFeature.tags: False,
            JobFeature.email_notifications: False, JobFeature.timeout_seconds: False,
            JobFeature.retry_on_timeout: False, JobFeature.max_retries: False,
            JobFeature.min_retry_interval_millis: False, JobFeature.output_filename_template: False,
            JobFeature.stop_job: True, JobFeature.delete_job: False,
        }

    def validate(cls, input_path: str) -> bool:
        return True


class GpuEnvironmentManager(EnvironmentManager):  # type: ignore[misc]  # jupyter-scheduler ships no type hints
    """One runtime environment (this server's Python) whose compute types are our GPU profiles."""

    def __init__(self, api: SelfApi | None = None) -> None:
        self.api = api or SelfApi()

    async def list_environments(self) -> list[RuntimeEnvironment]:
        """``jupyter_sched`` with compute types = the admin's profiles (``1 GPU`` / ``CPU only`` without any)."""
        profiles = await self.api.profiles()
        compute_types = list(profiles) or list(NO_PROFILE_COMPUTE_TYPES)
        return [RuntimeEnvironment(
            name=ENVIRONMENT_NAME, label="GPU queue (jupyter_sched)",
            description="Runs in jupyter_sched's GPU queue with this server's Python; the compute type is a GPU "
                        "profile (quotas, priorities and pending reasons apply).",
            file_extensions=["ipynb"], output_formats=["ipynb"], metadata={"path": sys.executable},
            compute_types=compute_types, default_compute_type=compute_types[0], utc_only=False)]

    def manage_environments_command(self) -> str:
        return ""

    def output_formats_mapping(self) -> dict[str, str]:
        return {"ipynb": "Notebook"}


class GpuScheduler(BaseScheduler):  # type: ignore[misc]  # jupyter-scheduler ships no type hints
    """``BaseScheduler`` over jupyter_sched (see the module docstring).

    Configure::

        c.SchedulerApp.scheduler_class = "jupyter_sched.jupyter_scheduler_backend.GpuScheduler"
        c.SchedulerApp.environment_manager_class = "jupyter_sched.jupyter_scheduler_backend.GpuEnvironmentManager"
        c.SchedulerApp.job_files_manager_class = "jupyter_sched.jupyter_scheduler_backend.GpuJobFilesManager"
    """

    db_url = Unicode(help="jupyter-scheduler's own database: unused, jobs live in jupyter_sched's store")
    execution_manager_class = Type(
        default_value=GpuExecutionManager, klass=ExecutionManager, config=True,
        help="Declares the features of the jupyter_sched backend (jobs run in jupyter_sched's queue).")
    task_runner = AnyTrait(None, allow_none=True, help="none: jupyter_sched's engine fires job definitions")

    def __init__(self, root_dir: str, environments_manager: EnvironmentManager, config: Any = None,
                 db_url: str = "", api: SelfApi | None = None, **kwargs: Any) -> None:
        super().__init__(root_dir=root_dir, environments_manager=environments_manager, config=config, **kwargs)
        self.db_url = db_url
        self.api = api or getattr(environments_manager, "api", None) or SelfApi()

    # -- helpers -------------------------------------------------------------------------------

    async def _call(self, req: Any) -> Any:
        try:
            return await self.api.call(req)
        except SchedError as err:
            raise _refusal(err) from None

    def _input_path(self, input_uri: str) -> str:
        if not input_uri or not self.file_exists(input_uri):  # also refuses paths outside the root
            raise InputUriError(input_uri)
        return os.path.join(os.path.abspath(self.root_dir), input_uri)

    async def _compute(self, compute_type: str | None) -> dict[str, Any]:
        try:
            return compute_request(compute_type, await self.api.profiles())
        except ValueError as exc:
            raise SchedulerError(str(exc)) from None

    async def _describe(self, job: Mapping[str, Any], *, job_files: bool) -> DescribeJob:
        model = DescribeJob(**describe_job(job))
        if job_files:
            self.add_job_files(model)
        return model

    # -- jobs -----------------------------------------------------------------------------------

    async def create_job(self, model: CreateJob) -> str:
        """Submit the notebook to our queue with the compute type's GPU request; its job id."""
        path = self._input_path(model.input_uri)
        body = {"name": model.name or os.path.basename(path), "notebook": path, "working_dir": os.path.dirname(path),
                **(await self._compute(model.compute_type))}
        if model.parameters:
            body["parameters"] = dict(model.parameters)
        job = await self._call(routes.submit(body))
        return str(job["id"])

    async def _notebook_jobs(self) -> list[dict[str, Any]]:
        """This server's owner's notebook jobs, every page of ``GET jobs`` (s30: the first page only before)."""
        try:
            rows = await self.api.jobs()
        except SchedError as err:
            raise _refusal(err) from None
        return [j for j in rows if j.get("notebook")]

    async def list_jobs(self, query: ListJobsQuery) -> ListJobsResponse:
        rows = [describe_job(j) for j in await self._notebook_jobs()]
        if query.job_definition_id:
            rows = [r for r in rows if r["job_definition_id"] == query.job_definition_id]
        if query.status:
            rows = [r for r in rows if r["status"] == Status(query.status).value]
        if query.name:
            rows = [r for r in rows if str(r["name"]).startswith(query.name)]
        if query.start_time:
            rows = [r for r in rows if (r["start_time"] or 0) >= query.start_time]
        for sort in reversed(query.sort_by or []):
            rows.sort(key=_sort_key(str(sort.name)), reverse=sort.direction.value == "desc")
        start = int(query.next_token or 0)
        size = min(int(query.max_items or _MAX_LISTED), _MAX_LISTED)
        page = rows[start:start + size]
        token = str(start + size) if start + size < len(rows) else None
        jobs = []
        for row in page:
            model = DescribeJob(**row)
            self.add_job_files(model)
            jobs.append(model)
        return ListJobsResponse(jobs=jobs, total_count=len(rows), next_token=token)

    async def count_jobs(self, query: CountJobsQuery) -> int:
        wanted = Status(query.status).value
        return sum(1 for j in await self._notebook_jobs() if describe_job(j)["status"] == wanted)

    async def get_job(self, job_id: str, job_files: bool | None = True) -> DescribeJob:
        job = await self._call(routes.job(job_id))
        if not job.get("notebook"):
            raise SchedulerError(f"{job_id} is not a notebook job; see it with jupyter-sched or the GPU panel")
        return await self._describe(job, job_files=bool(job_files))

    async def stop_job(self, job_id: str) -> None:
        """Cancel it in our queue (a finished job stays as it ended)."""
        try:
            await self.api.call(routes.cancel(job_id))
        except ConflictError:
            return
        except SchedError as err:
            raise _refusal(err) from None

    async def update_job(self, job_id: str, model: UpdateJob) -> None:
        if model.status == Status.STOPPED:
            await self.stop_job(job_id)
            return
        raise SchedulerError("a submitted job cannot be renamed or moved to another compute type "
                             "(stop it and create a new one)")

    async def delete_job(self, job_id: str) -> None:
        raise SchedulerError("jobs are kept as the GPU accounting record and cannot be deleted; stop it instead")

    # -- job definitions -------------------------------------------------------------------------

    async def create_job_definition(self, model: CreateJobDefinition) -> str:
        """Save it as our job definition (our engine fires its schedule); its id."""
        self._input_path(model.input_uri)
        try:
            body = definition_fields(model.dict(exclude_none=True), root_dir=os.path.abspath(self.root_dir),
                                     profiles=await self.api.profiles())
        except ValueError as exc:
            raise SchedulerError(str(exc)) from None
        body.setdefault("timezone", "UTC")
        created = await self._call(routes.create_definition(body))
        return str(created["id"])

    async def update_job_definition(self, job_definition_id: str, model: UpdateJobDefinition) -> None:
        fields = model.dict(exclude_unset=True)
        fields.pop("output_filename_template", None)
        fields.pop("url", None)
        if fields.get("input_uri"):
            self._input_path(str(fields["input_uri"]))
        try:
            body = definition_fields(fields, root_dir=os.path.abspath(self.root_dir),
                                     profiles=await self.api.profiles())
        except ValueError as exc:
            raise SchedulerError(str(exc)) from None
        if body:
            await self._call(routes.update_definition(job_definition_id, body))

    async def delete_job_definition(self, job_definition_id: str) -> None:
        await self._call(routes.delete_definition(job_definition_id))

    async def get_job_definition(self, job_definition_id: str) -> DescribeJobDefinition:
        return DescribeJobDefinition(**describe_definition(await self._call(routes.definition(job_definition_id))))

    async def list_job_definitions(self, query: ListJobDefinitionsQuery) -> ListJobDefinitionsResponse:
        try:  # every page (red28 R6 paged GET definitions at 100; this list pages by its own next_token)
            mine = await self.api.definitions()
        except SchedError as err:
            raise _refusal(err) from None
        rows = [describe_definition(d) for d in mine if str(d.get("notebook") or "").endswith(".ipynb")]
        if query.name:
            rows = [r for r in rows if str(r["name"]).startswith(query.name)]
        if query.create_time:
            rows = [r for r in rows if r["create_time"] >= query.create_time]
        start = int(query.next_token or 0)
        size = min(int(query.max_items or _MAX_LISTED), _MAX_LISTED)
        page = rows[start:start + size]
        token = str(start + size) if start + size < len(rows) else None
        return ListJobDefinitionsResponse(job_definitions=[DescribeJobDefinition(**r) for r in page],
                                          total_count=len(rows), next_token=token)

    async def create_job_from_definition(self, job_definition_id: str,
                                         model: CreateJobFromDefinition) -> str:
        body = {"parameters": dict(model.parameters)} if model.parameters else {}
        run = await self._call(routes.run_definition(job_definition_id, body))
        return str(run["job_id"])

    # -- files ------------------------------------------------------------------------------------

    def get_staging_paths(self, model: DescribeJob | DescribeJobDefinition) -> dict[str, str]:
        """Where the job's files come from: the executed notebook through our API, the input notebook."""
        job_id = getattr(model, "job_id", None)
        return {"ipynb": f"{self.api.api_url}jobs/{job_id}/notebook", "input": model.input_filename or ""}
