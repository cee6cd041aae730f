"""Request and response models of jobs and leases (``jobs``, ``leases``, ``dryrun``, ``queue``, logs).

Jobs and leases share one shape (a lease is a job of kind ``lease``). Response models mirror
:func:`jupyter_sched.model.codec.job_to_dict`; fields a response leaves unset are left out of the
wire (another user's queue entry has no command, environment or paths).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, RootModel, ValidationInfo, WithJsonSchema, field_validator, model_validator
from pydantic_core import PydanticCustomError

from ...model.validation import (
    ENV_KEY,
    MAX_ENV_KEY_CHARS,
    MAX_ENV_VALUE_CHARS,
    MAX_NODE_LABEL_KEY_CHARS,
    MAX_NODE_LABEL_VALUE_CHARS,
    MAX_NODE_SELECTOR,
    MAX_TOLERATIONS,
    check_env,
    number_as_text,
    parse_gpus,
    parse_priority,
)
from ...wording import reason_in_words, render_reason
from ..withheld import reason_for
from .base import CodecView, QueryModel, RequestModel, ResponseModel, dump_set

__all__ = [
    "Allocation",
    "CancelJobRequest",
    "DryrunJobResponse",
    "GetJobLogsRequest",
    "GetJobLogsResponse",
    "GetQueueResponse",
    "JobLogNote",
    "Job",
    "JobKindName",
    "JobsPage",
    "JobStateName",
    "KeepaliveLeaseRequest",
    "KeepaliveLeaseResponse",
    "LeaseHeartbeatResponse",
    "UnhealthyGpu",
    "job_in_words",
    "LeaseEndCause",
    "ListJobsRequest",
    "ListJobsResponse",
    "PendingReason",
    "PriorityName",
    "ReasonText",
    "QueueEntry",
    "PreemptionPlanned",
    "PlannedTimeLimit",
    "ProjectedEnd",
    "StopRequested",
    "Resources",
    "RunJobFields",
    "SubmitJobRequest",
    "UpdateJobRequest",
    "WorkerGroup",
]

JobKindName = Literal["training", "inference", "lease"]
PriorityName = Literal["high", "normal", "low"]
JobStateName = Literal["pending", "admitted", "running", "succeeded", "failed", "cancelled", "preempted", "lost",
                       "rejected"]
Number = int | float
MAX_LOG_CHUNK = 1 << 20
"""Most bytes one logs call returns (bounded memory per request)."""
MAX_QUERY_INT = 2**62
"""Largest byte offset a logs query takes (offsets fit in 64-bit file offsets)."""
QUEUE_LIMIT_MAX = 10_000
"""Most pending entries one ``GET queue?limit=`` lists (each is a few KiB to validate and send;
leave ``limit`` out for the first 1000 plus all of your own). ``jupyter-sched queue --limit``
holds the same bound (``cli/commands.py``; a test keeps the two equal)."""


class WorkerGroupRequest(RequestModel):
    """One worker group of a heterogeneous gang (case 024): ``workers`` workers of ``gpus`` whole GPUs
    each; all groups start together or none. Validated further by the spec (``groups[i].field``)."""

    name: str = Field(examples=["trainer"], description="1-32 lower-case letters, digits or '-'; unique")
    gpus: Number | str | None = Field(default=None, examples=[8], description="whole GPUs per worker (default 1)")
    workers: Number | None = Field(default=None, examples=[4], description="workers in this group (default 1)")
    cpu: Number | str | None = Field(default=None, examples=[4], description="cores per worker")
    cpu_millis: Number | None = Field(default=None, examples=[4000])
    memory: Number | str | None = Field(default=None, examples=["64GiB"], description="host memory per worker")
    memory_mib: Number | str | None = Field(default=None, examples=[65536])


# The bounds the server checks (model.validation), declared in the schema only: the server's own
# 400 (naming the field, the count or length, and the fix) stays the refusal a client gets.
NodeSelector = Annotated[dict[str, str], WithJsonSchema({
    "type": "object", "maxProperties": MAX_NODE_SELECTOR, "propertyNames": {"maxLength": MAX_NODE_LABEL_KEY_CHARS},
    "additionalProperties": {"type": "string", "maxLength": MAX_NODE_LABEL_VALUE_CHARS}})]
Tolerations = Annotated[list[str], WithJsonSchema({
    "type": "array", "maxItems": MAX_TOLERATIONS, "items": {"type": "string"}})]
JobEnv = Annotated[dict[str, str], WithJsonSchema({
    "type": "object", "propertyNames": {"pattern": f"^{ENV_KEY.pattern}$", "maxLength": MAX_ENV_KEY_CHARS},
    "additionalProperties": {"type": "string", "maxLength": MAX_ENV_VALUE_CHARS}})]


class RunJobFields(RequestModel):
    """What the job that runs asks for — resources, limits, where it starts and with what
    environment: ONE definition of each field, shared by :class:`SubmitJobRequest` and a job
    definition's runs (:mod:`.definitions`; a run is a batch notebook or script, so it has no
    ``command``, ``kind``, ``port`` or ``kernel_id``)."""

    team: str | None = Field(default=None, examples=["ml"], description="one of your teams (default: your first)")
    queue: str | None = Field(default=None, description="alias of team")
    priority: PriorityName | None = Field(default=None, examples=["normal"], description="high needs an admin's grant")
    gpus: Number | str | None = Field(default=None, examples=[1],
                                      description="whole GPUs, or a fraction below 1 (0.5 = half a GPU)")
    gpu_milli: Number | None = Field(default=None, examples=[500])
    model: str | list[str] | None = Field(default=None, examples=["A100"])
    gpu_models: str | list[str] | None = Field(default=None, examples=[["A100", "H100"]])
    mem_per_gpu: Number | str | None = Field(default=None, examples=["40GiB"], description='e.g. "40GiB" or MiB')
    min_memory_mib: Number | str | None = Field(default=None, examples=[40960])
    mig_profile: str | None = Field(default=None, examples=["1g.10gb"])
    nvlink: bool | None = Field(default=None, examples=[True])
    cpu: Number | str | None = Field(default=None, examples=[4], description="cores per worker")
    cpu_millis: Number | None = Field(default=None, examples=[4000])
    memory: Number | str | None = Field(default=None, examples=["64GiB"], description="host memory per worker")
    memory_mib: Number | str | None = Field(default=None, examples=[65536])
    workers: Number | None = Field(default=None, examples=[2], description="gang size (all start or none)")
    node_selector: NodeSelector | None = Field(default=None, examples=[{"zone": "a"}], description=(
        f"node labels the job's nodes carry, as the nodes carry them: at most {MAX_NODE_SELECTOR} pairs, a key of at "
        f"most {MAX_NODE_LABEL_KEY_CHARS} characters (a label's DNS prefix, /, name), a value of at most "
        f"{MAX_NODE_LABEL_VALUE_CHARS}"))
    tolerations: Tolerations | None = Field(default=None, examples=[["gpu=true:NoSchedule"]], description=(
        "taints this job tolerates, each KEY, KEY=VALUE or KEY=VALUE:EFFECT (NoSchedule, PreferNoSchedule, "
        f"NoExecute), at most {MAX_TOLERATIONS}; a node tainted so runs it only when one matches"))
    time_limit: Number | str | None = Field(default=None, examples=["2h"], description=(
        'e.g. "2h" or seconds, at least 1 second; 0 = no limit at all (the answer\'s warnings say so: such a job '
        'starts only when nothing is reserved); left out: the queue default'))
    time_limit_s: Number | None = Field(default=None, examples=[7200])
    working_dir: str | None = Field(default=None, examples=["/home/ana/project"], description=(
        "where the job starts; ~ is your home; a relative path is read where a job that names none starts "
        "(your home on a hub, the server's root directory embedded, the pods' home mount on Kubernetes — "
        "refused there when the admin mounts none), as a relative script is read in working_dir; the job's "
        "answer shows it resolved, and for a job naming none the folder it starts in (null on a hub: your "
        "home; on Kubernetes without a home mount: the image's working directory)"))
    env: JobEnv | None = Field(default=None, examples=[{"BATCH_SIZE": "64"}], description=(
        "variable names as keys, string values: the job's own process environment (PATH, PYTHONPATH, LD_PRELOAD… "
        "change only your own processes, which run as your account); refused (400, every one named): "
        "JUPYTER_SCHED_* but JUPYTER_SCHED_URL/TOKEN, JUPYTERHUB_*, JPY_*, what chooses the devices a job sees "
        "(NVIDIA_VISIBLE_DEVICES…, CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, "
        "GPU_DEVICE_ORDINAL, ZE_AFFINITY_MASK, ONEAPI_DEVICE_SELECTOR: the scheduler sets them from the allocation), "
        "HOME, USER, LOGNAME; CUDA_DEVICE_ORDER is set to PCI_BUS_ID (a value given is left out, said in warnings)"))
    image: str | None = Field(default=None, examples=["python:3.11"])
    profile: str | None = Field(default=None, examples=["gpu-small"])
    checkpointable: bool | None = Field(default=None, examples=[False])
    resources: dict[str, Any] | None = Field(default=None, examples=[{"gpus": 2}])
    no_preempt: bool | None = Field(default=None, examples=[True], description=(
        "true: this request never preempts nor reclaims (no other job is stopped for it, another team's borrowed "
        "GPUs included): it starts on free GPUs only and otherwise waits, its reason saying so (%gpu request "
        "--no-preempt, %%schedule --no-preempt, jupyter-sched submit --no-preempt; newuser36 N6); a definition's "
        "runs each ask so (definitions create/edit --no-preempt, edit --preempt to undo; session 38)"))

    @field_validator("env", mode="before")
    @classmethod
    def _every_env_problem(cls, value: Any) -> Any:
        """Every problem of ``env`` in one 400 (new user 12, N2: a non-string value hid the bad names,
        which then came one request at a time): :func:`~jupyter_sched.model.validation.check_env`, here
        when a value is not a string (the model's own refusal), else where the job is built."""
        if isinstance(value, dict) and not all(isinstance(v, str) for v in value.values()):
            check_env(value, strict=True)
        return value

    @field_validator("gpus", mode="before")
    @classmethod
    def _gpus_in_one_wording(cls, value: Any) -> Any:
        """A ``gpus`` of the wrong JSON type (true, an array) refused in the words every other value
        that is not a number of GPUs gets (:func:`~jupyter_sched.model.validation.parse_gpus`; new
        user 13, N5: "gpus must be a number or a string (got true)" beside "must be an integer")."""
        if isinstance(value, bool) or not isinstance(value, (int, float, str, type(None))):
            parse_gpus(value)
        number_as_text(value, "gpus")  # "1" as true is (new user 15, N3)
        return value

    @field_validator("cpu", mode="before")
    @classmethod
    def _cpu_is_a_number(cls, value: Any) -> Any:
        """``cpu`` "2" refused as ``gpus`` "1" is (:func:`~jupyter_sched.model.validation.number_as_text`)."""
        number_as_text(value, "cpu")
        return value

    @field_validator("priority", mode="before")
    @classmethod
    def _priority_in_one_wording(cls, value: Any) -> Any:
        """A ``priority`` that is no class refused in the words the CLI and the magics say too
        (:func:`~jupyter_sched.model.validation.parse_priority`; new user 14, N2: "must be 'high',
        'normal' or 'low'" with the hint ``e.g. "normal"`` here, two other wordings there); case folded
        there (``"HIGH"`` is ``high``: new user 20, N27)."""
        return value if value is None else parse_priority(value).value

    def body(self) -> dict[str, Any]:
        """The fields the client sent, as :func:`~jupyter_sched.model.spec_from_request` reads them
        (``null`` kept: it clears a field in a definition's update)."""
        return self.model_dump(exclude_unset=True)


class SubmitJobRequest(RunJobFields):
    """``POST jobs`` / ``POST leases`` / ``POST dryrun``: a flat request; resource keys may also sit
    in a nested ``resources`` object. The user comes from authentication, never from the body.
    Validated further by :func:`jupyter_sched.model.spec_from_request` and the admission rules."""

    # the fields of the job that runs come from RunJobFields (shared with definitions); these are a submission's own

    name: str | None = Field(default=None, examples=["train-resnet"], description="1-200 printable characters")
    kind: JobKindName | None = Field(default=None, examples=["training"])
    groups: list[WorkerGroupRequest] | None = Field(
        default=None, examples=[[{"name": "launcher", "gpus": 1}, {"name": "trainer", "gpus": 8, "workers": 4}]],
        description="a heterogeneous gang: worker groups instead of gpus/workers (at most 16 groups)")
    command: list[str] | None = Field(default=None, examples=[["python", "train.py"]])
    args: list[str] | None = Field(default=None, examples=[["--epochs", "3"]])
    script: str | None = Field(default=None, examples=["train.py"])
    notebook: str | None = Field(default=None, examples=["analysis.ipynb"])
    port: int | None = Field(default=None, examples=[8000])
    kernel_id: str | None = Field(default=None, examples=["5b0e4c3a-8f0e-4b5e-9d7f-1a2b3c4d5e6f"])
    kernel_notebook: str | None = Field(default=None, examples=["analysis/explore.ipynb"], description=(
        "leases only: the notebook whose kernel asks (its session path; %gpu sends it). Shown to you and "
        "admins only — a job of yours it blocks names it"))
    parent_job_id: str | None = Field(default=None, examples=["j-1m8vcdgaj-hf02n5"], description=(
        "leases only: your running job whose kernel asks (%gpu sends its JUPYTER_SCHED_JOB_ID); the lease "
        "ends when that job ends, however it ends"))
    released_at_exit: bool | None = Field(default=None, examples=[True], description=(
        "leases only, without kernel_id: the asking process (a kernel this server did not start — nbconvert, "
        "papermill, VS Code; %gpu sends it) gives the lease back itself when it exits. Shown to you and admins only"))
    asking_process: dict[str, Any] | None = Field(default=None, examples=[
        {"pid": 4242, "started": 3853947, "host": "de092da6-5f74-4c64-a57e-00d456fe54f7/pid:[4026531836]"}],
        description=("leases only, with released_at_exit: the asking process — pid, start (clock ticks after boot, "
                     "field 22 of /proc/<pid>/stat) and host (<boot id>/<pid namespace>); %gpu sends it. A service "
                     "on that same host ends the lease once that process is gone without releasing it (killed)"))
    parameters: dict[str, Any] | None = Field(default=None, examples=[{"epochs": 3}],
                                              description="a notebook's or script's parameters (papermill's convention)")
    source: str | None = Field(default=None, examples=["print('hello')"],
                               description="the script's text, carried to the executing side (at most 1 MiB)")
    notebook_json: str | None = Field(default=None, description="the notebook's JSON text, carried (at most 8 MiB)")


class ListJobsRequest(QueryModel):
    """``GET jobs`` / ``GET leases``: the caller's work (admins: ``user`` or ``all=true``)."""

    state: str | None = Field(default=None, examples=["pending,running"], description=(
        "a state or a comma-separated list; 'released' filters ended leases (their state is cancelled), "
        "and alone lists leases only"))
    kind: JobKindName | None = Field(default=None, examples=["training"])
    user: str | None = Field(default=None, description="admins only: another user's work")
    all: bool = Field(default=False, description="admins only: everyone's work")
    limit: int = Field(default=500, ge=1, le=1000, examples=[100],
                       description="newest first, at most this many; a page also ends once it passes 4 MiB of "
                                   "answer (a Link: rel=next header gives the next page)")
    cursor: str | None = Field(default=None, description="the cursor of the next page (from the Link header)")
    team: str | None = Field(default=None, max_length=200, examples=["nlp"],
                             description="only work charged to this team (a team no job was charged to lists nothing)")
    since: str | None = Field(default=None, max_length=64, examples=["2026-11-01T00:00:00+00:00"],
                              description="only work submitted at or after this time (ISO 8601 with offset)")
    until: str | None = Field(default=None, max_length=64, examples=["2026-12-01T00:00:00+00:00"],
                              description="only work submitted before this time (ISO 8601 with offset)")
    name: str | None = Field(default=None, min_length=1, max_length=200, examples=["train"], description=(
        "only work of this name (its first 200 characters); listing the caller's own, a name that none of theirs has "
        "but other users' pending or running work has is answered with whose that is (as the queue shows it): 403 "
        "forbidden, audited as the request purpose names, as that job's id would be (an admin: 400 with its id to "
        "give) — how the CLI and the magics take a job's name (newuser39 n6)"))
    purpose: Literal["read", "cancel", "update", "top", "logs"] = Field(default="read", examples=["cancel"], description=(
        "with name: what the caller means to do with the job of that name (update: hold, release or change it; top: "
        "put it first) — the words of the refusal of another user's, and the request it is audited as"))
    idempotency_key: str | None = Field(default=None, max_length=128, examples=["5f0c9e2ad0b44c6f9d1a7f3b2c4e6a80"],
                                        description=(
        "the key a submit (POST jobs?idempotency_key=) was sent with: lists the caller's job that submit made, or "
        "none when it made none — how a client whose submit got no answer learns its outcome without sending it "
        "again (newuser33 N3); the other filters are not read with it. The server keeps each user's newest 1,000 "
        "keys"))


class GetQueueRequest(QueryModel):
    """``GET queue``: the whole queue, or its head (a terminal shows the first lines; a busy
    server holds thousands of pending jobs, and each entry is a few KiB)."""

    limit: int | None = Field(default=None, ge=1, le=QUEUE_LIMIT_MAX, examples=[50],
                              description="at most this many pending entries, the first in queue order "
                                          "(default: the first 1000 plus all of your own); work holding "
                                          "GPUs is listed on the first page (a Link: rel=next header gives "
                                          "the next page when limit or cursor is given; an X-Total-Count "
                                          "header, how many wait in all when more follow)")
    cursor: str | None = Field(default=None, description="the cursor of the next page (from the Link header); "
                                                         "pages are limit entries long (default 1000)")


MAX_LOG_TAIL_LINES = 1_000_000
"""Bound of ``tail`` (lines): the read is bounded by ``limit`` bytes anyway; a count past it is a typo."""

MAX_NOTES_SEEN = 1000
"""Bound of ``notes_seen``: a count of notes (a job's log answer carries at most 20), so a bound a
reader can act on, never the 2^62 of a byte offset (the first whole-suite run of session 22)."""


class GetJobLogsRequest(QueryModel):
    """``GET jobs/{id}/logs``: a byte range of the job's output."""

    offset: int = Field(default=0, ge=0, le=MAX_QUERY_INT, examples=[0], description="byte offset; pass back next_offset")
    limit: int = Field(default=65536, ge=1, le=MAX_LOG_CHUNK, examples=[65536], description="bytes, at most 1 MiB")
    follow: bool = Field(default=False, description="long-poll up to 25 s for new text")
    notes_seen: int | None = Field(default=None, ge=0, le=MAX_NOTES_SEEN, description=(
        "with follow: the scheduler's notes the reader has shown; the long poll answers as soon as the job has "
        "more (left out: notes do not end it)"))
    tail: int | None = Field(default=None, ge=0, le=MAX_LOG_TAIL_LINES, examples=[100], description=(
        "the log's last N lines instead of a range (0: none, only where it ends): read back from its end, at most "
        "limit bytes, from a line's start (a last line longer than limit: its last limit bytes); the answer's "
        "offset is where text begins, next_offset the end to follow from. Not with offset or follow"))


MAX_LEASE_WAIT_MS = 25_000
"""Longest ``wait_ms`` of ``POST leases`` / ``GET leases/{id}``: under proxy idle timeouts, as the
log follow's long poll."""


MAX_OPEN_LEASE_WAITS = 64
"""A user's lease requests that may wait (``wait_ms`` > 0) at once on one server; one more is
refused 429 ``busy`` naming ``wait_ms`` (enforced by :mod:`jupyter_sched.extension.lease_wait`,
red-team 3 finding 2; stated in ``wait_ms``'s description so clients know before they meet it)."""


class WaitLeaseRequest(QueryModel):
    """``POST leases`` and ``GET leases/{id}``: answer once the lease is decided, up to ``wait_ms``."""

    wait_ms: int = Field(default=0, ge=0, le=MAX_LEASE_WAIT_MS, examples=[5000],
                         description="long-poll: answer as soon as the lease is granted or ended (not pending), "
                                     "or after this many milliseconds with it still pending; 0 answers at once. "
                                     f"At most {MAX_OPEN_LEASE_WAITS} of a user's requests wait at once on one "
                                     "server: one more is refused 429 busy naming wait_ms, with nothing submitted "
                                     "(retry once one has answered, or ask without wait_ms)")


class SubmitJobQuery(QueryModel):
    """``POST jobs``: the client's submit key (:mod:`jupyter_sched.store.submit_keys`; s31-n8's next step)."""

    idempotency_key: str | None = Field(default=None, max_length=128, examples=["5f0c9e2ad0b44c6f9d1a7f3b2c4e6a80"],
                                        description="the client's key for this submit: sent again with the same "
                                                    "request, answered with the job it made (200), never a second")


LeaseEndCause = Literal["release", "timeout", "interrupt", "kernel_exit", "kernel_shutdown", "kernel_restart",
                        "server_stop"]
"""Why a client ends a lease (``DELETE leases/{id}?why=``), as its record then says it."""

MAX_TIMEOUT_S = 1e7
"""Largest ``timeout_s`` a withdrawal names (about 115 days; any real timeout is far below)."""


class CancelJobRequest(QueryModel):
    """``DELETE jobs/{id}`` / ``DELETE leases/{id}``: why the caller ends a lease, so its record
    says so — a request given up by its ``--timeout`` read "request withdrawn by root" (issue 20)."""

    why: LeaseEndCause | None = Field(default=None, examples=["timeout"], description=(
        "leases only: release (the owner gave it back, the default), timeout (a request withdrawn because no "
        "GPUs came within its timeout_s), interrupt (the waiting request was interrupted), kernel_exit (its "
        "kernel's process is exiting); a hub user's server says why it releases: kernel_shutdown, kernel_restart, "
        "server_stop (the Jupyter server running the kernel stops)"))
    timeout_s: float | None = Field(default=None, gt=0, le=MAX_TIMEOUT_S, examples=[30],
                                    description="with why=timeout: the timeout that passed, in seconds")


class UpdateJobRequest(RequestModel):
    """``PATCH jobs/{id}``: hold or release a pending job, change its time limit or class, or (admins) put it
    first in its class (hubadmin25 B18; Slurm's ``scontrol hold|release|update|top``). Only the fields given
    change, all or none; each change is audited with what it was before.

    Who may do what: the owner holds and releases their own pending job, but not a hold an admin put on it;
    the owner shortens its time limit at any time, and lengthens it while it is pending up to its queue's
    maximum (a running job's limit was what backfill planned the jobs behind it on: only an admin lengthens
    it, and beyond the queue's maximum too); the owner changes a pending job's class to one granted to them in
    its team (admins: any); ``top`` is for admins."""

    held: bool | None = Field(default=None, examples=[True], description=(
        "true: hold the pending job (it stays pending, never starts, reserves nothing: ETA unknown: held); false: "
        "release it. An admin's hold is released by an admin only"))
    time_limit: Number | str | None = Field(default=None, examples=["3h"], description=(
        "the new time limit: seconds, a duration ('3h', '90m'), '+1h' / '-30m' relative to the current one, or 0 "
        "for none; a running job is stopped at the new limit"))
    time_limit_s: Number | None = Field(default=None, examples=[10800], description="time_limit in seconds")
    priority: PriorityName | None = Field(default=None, examples=["normal"], description=(
        "the pending job's new class: one granted to its owner in its team (admins: any)"))
    top: bool | None = Field(default=None, examples=[True], description=(
        "admins: true puts the pending job first in its class (the latest topped first), false takes that back"))

    @field_validator("priority", mode="before")
    @classmethod
    def _priority_in_one_wording(cls, value: Any) -> Any:
        """A ``priority`` that is no class refused as a submit's is (:func:`~jupyter_sched.model.validation.
        parse_priority`; newuser31 n7 addendum: ``%schedule update X --priority urgent`` said ``must be 'high',
        'normal' or 'low' … E.g. "normal"``, the CLI's submit another way)."""
        return value if value is None else parse_priority(value, change=True).value


class KeepaliveLeaseRequest(RequestModel):
    """``POST leases/{id}/keepalive``: keep an idle lease's GPUs (once per allocation: a lease granted again may keep alive again)."""

    seconds: float | None = Field(default=None, gt=0, lt=1e7, examples=[3600],
                                  description="default and maximum: the admin's keepalive limit")


class ReportProgressRequest(RequestModel):
    """``POST jobs/{id}/progress``: the running job's progress, ``done`` of ``total`` steps (issue 16 item 4)."""

    BOUND_HINTS: ClassVar[Mapping[tuple[str, str], str]] = {
        ("total", "greater_than"): 'the number of steps to do in all, e.g. {"done": 0, "total": 1000} at the start',
        ("total", "less_than_equal"): 'count in larger steps (batches or epochs), e.g. {"done": 120, "total": 1000}',
        ("done", "greater_than_equal"): 'the steps done so far, from 0 to total, e.g. {"done": 0, "total": 1000} '
                                        "at the start",
        ("done", "less_than_equal"): 'count in larger steps (batches or epochs), e.g. {"done": 120, "total": 1000}',
    }
    """Each bound's own hint (new user 21, N2: "total must be more than 0" was hinted with its upper bound)."""

    total: float = Field(gt=0, le=1e15, allow_inf_nan=False, examples=[5000], description="steps to do in all")
    done: float = Field(ge=0, le=1e15, allow_inf_nan=False, examples=[1200],
                        description="steps (iterations, batches, samples) done so far; at most total")

    @field_validator("done")
    @classmethod
    def _done_within_total(cls, done: float, info: ValidationInfo) -> float:
        total = info.data.get("total")  # validated first (declared first); absent when it was refused itself
        if isinstance(total, float) and done > total:  # its own words and hint (new user 21, N2)
            end = json.dumps({"done": _whole(total), "total": _whole(total)})
            raise PydanticCustomError("done_above_total", "must be at most total", {
                "got": f"done {done:g}, total {total:g}", "hint": f"report done ≤ total, e.g. {end} at the end"})
        return done


def _whole(number: float) -> float | int:
    """``10`` for ``10.0`` (an example a user copies reads as they wrote it), else the number."""
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


class JobProgress(ResponseModel):
    """A job's latest stored progress report (``GET jobs/{id}``, ``POST jobs/{id}/progress``)."""

    fraction: float = Field(description="done / total, 0..1", examples=[0.24])
    done: float = Field(description="steps done, as reported", examples=[1200])
    total: float = Field(description="steps to do, as reported", examples=[5000])
    at: str = Field(description="when it was reported (UTC)")
    run_started_at: str = Field(description="the start of the run it reports on (a restarted job reports afresh)")
    ran_s: float = Field(description="seconds the run had run when it reported")
    reports: int = Field(default=0, description="reports of this run stored so far (at least 1 % done; at most one "
                                                "per min_interval_s)")
    ignored: str = Field(default="", examples=["its progress went backwards within one run: 99 % done at 02:10:05 "
                                               "UTC, then 1.1 %"], description=(
        "why this run's reports are not read for the ETAs of the jobs waiting on it (they contradict themselves; "
        "until the job starts a new run); \"\": they are read"))
    text: str = Field(default="", examples=["42 % done, reported Dec 5 02:10 UTC"], description=(
        "job answers (GET jobs, jobs/{id}, queue): the report in words, as the panel, the CLI and the magics say it "
        "(they say the clock as of their own now and add how long ago: '42 % done, reported 02:10 UTC (3m ago)'); "
        "\"\" when the report is not of the job's current run (a requeued job counts again) or it no longer runs"))


class ReportProgressResponse(ResponseModel):
    """The answer to a progress report: what is stored, and whether this report was."""

    job_id: str
    stored: bool = Field(description=(
        "false: it came sooner than min_interval_s after the stored report and was coalesced into it (answered "
        "200 all the same: a loop that reports every step need not slow down)"))
    min_interval_s: float = Field(description="seconds between two stored reports of one job")
    progress: JobProgress


class WorkerGroup(CodecView):
    """One group of a heterogeneous gang: its own GPUs, CPU and memory per worker."""

    name: str
    gpus: int
    workers: int = 1
    cpu_millis: int = 0
    memory_mib: int = 0


class Resources(CodecView):
    """What a job asks for (:func:`~jupyter_sched.model.codec.resources_to_dict`): per worker GPUs
    (``gpu_milli`` thousandths of each), memory per GPU (MiB), host CPU (millicores) and memory (MiB)."""

    # what a fraction and 0 read as, said in the schema (new user 7, F4: a 0.5-GPU job reads gpus 1, and
    # a CPU-only job gpu_milli 1000, to anyone scripting against openapi.yaml)
    gpus: int = Field(description=(
        "whole GPUs per worker: a share of one GPU is gpus 1 with gpu_milli below 1000 (0.5 GPU: gpus 1, "
        "gpu_milli 500); 0 for work that needs no GPU"))
    gpu_milli: int = Field(default=1000, description=(
        "thousandths of each of its GPUs the job holds: 1000 the whole GPU, 500 half of it; 0 when gpus is 0"))
    gpu_models: list[str] = Field(default_factory=list)
    min_memory_mib: int = 0
    mig_profile: str | None = None
    nvlink: bool = False
    cpu_millis: int = 0
    memory_mib: int = 0
    workers: int = 1
    node_selector: dict[str, str] = Field(default_factory=dict)
    tolerations: list[str] = Field(default_factory=list)
    groups: list[WorkerGroup] = Field(default_factory=list, description=(
        "a heterogeneous gang's worker groups (workers x gpus each); then gpus is the largest group's GPUs "
        "per worker, workers the sum of the groups' workers and gpu_milli 1000 (whole GPUs): gpus x workers "
        "is no total for a gang of groups — read total_gpus"))
    total_gpus: Number | None = Field(default=None, examples=[3], description=(
        "the GPUs of all its workers together (a share counts its part: 0.5); for a homogeneous job gpus x "
        "workers (x gpu_milli/1000), for a gang of groups the sum over groups of workers x gpus"))


class WorkerAllocation(CodecView):
    node: str
    gpu_uuids: list[str]


class Allocation(CodecView):
    """Where a job runs: its node, GPUs and share of each GPU (milli-GPUs)."""

    # null wherever a job has none (as the first openapi.yaml said; generated clients rely on it)
    model_config = ConfigDict(extra="allow", frozen=True, json_schema_extra={"nullable": True})

    node: str
    gpu_uuids: list[str]
    gpu_milli: int = Field(description=(
        "thousandths of each GPU in gpu_uuids held (1000: whole GPUs); 0 when gpu_uuids is empty"))
    workers: list[WorkerAllocation] = Field(default_factory=list)


class ReasonText(ResponseModel):
    """A reason in words (:func:`jupyter_sched.wording.render_reason`, the one place its wording
    lives): the panel, the magics and the CLI show these strings as they are. Times are absolute
    UTC (``ETA Mar 2 19:42 UTC``) so they stay true while shown; clients may add "in 5 min"."""

    summary: str = Field(description="what blocks it, one sentence with its numbers")
    eta: str = Field(description="'ETA <day> <HH:MM> UTC', or 'ETA unknown: <why>'")
    unblock: str = Field(description="what would let it start, one sentence; '' when the ETA says it")
    line: str = Field(description="'queued #2 · <summary> · <eta> · <unblock>' for one-line surfaces")


_ENDED = frozenset({"succeeded", "failed", "cancelled", "lost", "rejected"})


def _with_text(data: dict[str, Any], key: str, **how: Any) -> dict[str, Any]:
    """``data`` with ``data[key]`` (a wire reason) rendered by :func:`render_reason` ``(**how)``."""
    reason = data.get(key)
    if not isinstance(reason, dict) or "code" not in reason:
        return data
    return {**data, key: reason_in_words(reason, render_reason(reason, **how))}


def _for_reader(data: dict[str, Any], reader: str | None, admin: bool = False) -> dict[str, Any]:
    """``data`` (a job dict) with its reason as ``reader`` may see it: another user's progress and
    idle state withheld (:func:`~jupyter_sched.services.withheld.reason_for`, red team 22, R2)."""
    reason = data.get("reason")
    seen = reason_for(reason, owner=data.get("user"), reader=reader, admin=admin)
    return data if seen is reason else {**data, "reason": seen}


def job_in_words(data: dict[str, Any], *, viewer: str, admin: bool = False) -> dict[str, Any]:
    """A job dict (:func:`~jupyter_sched.model.codec.job_to_dict` shape) with its reason's
    sentences (``reason.text``) as ``viewer`` reads them — what :class:`Job` adds to a REST
    answer (:class:`PendingReason` and ``Job._lease_in_words``), for the event stream, whose job
    events carry the engine's dicts. Without it the panel's live rows fell back to the raw core
    fields: "ETA unknown (it fits only after jobs without a time limit end (l-…, l-…))", a hint
    for another team's release where the lease was the reader's own (new user 5 check). What it says
    of other users' work is what ``viewer`` may see (``admin``: everything; red team 22, R2)."""
    data = _for_reader(data, viewer, admin)
    reason = data.get("reason")
    if not isinstance(reason, dict) or "code" not in reason or "text" in reason:
        return data
    ended = data.get("state") in _ENDED
    # read by its owner: what blocks it that is theirs is said as theirs — their own leases (issue 20),
    # "as your other runs did" (newuser25 N8: the panel said "its owner's other runs" of the reader's own)
    own = data.get("user") == viewer and not ended
    if data.get("kind") != "lease" and not ended and not own:
        return _with_text(data, "reason")
    return _with_text(data, "reason", kind=str(data.get("kind") or ""), never=ended, mine=own)


class PendingReason(CodecView):
    """Why a job waits (or can never run): one code with numbers and what would unblock it, and
    the same in words (``text``)."""

    model_config = ConfigDict(extra="allow", frozen=True, json_schema_extra={"nullable": True})

    code: str
    message: str
    details: dict[str, Any] = Field(default_factory=dict)
    unblock: str = Field(default="", description="text.unblock (kept for older clients; display text)")
    position: int | None = Field(default=None, description=(
        "1-based place among the jobs waiting to start, in the order the queue will have when GPUs next free (#1 "
        "starts first); null for work holding GPUs, a held job (it waits for a person: released, it takes its place "
        "again) and a job above a quota ceiling"))
    eta: str | None = Field(default=None, description="the current start estimate, re-projected every cycle")
    eta_reason: str = Field(default="", description="why the ETA is unknown, in text.eta's words ('' when text.eta "
                                                    "says a time or there is no ETA); for display, text.eta")
    per_flavor: list[dict[str, Any]] = Field(default_factory=list)
    predicted_start: str | None = Field(default=None, description=(
        "the start predicted when the job was first queued, kept unchanged (it may be in the past) for "
        "the accuracy log (GET eta-accuracy); the current estimate is eta. null while the job can never start "
        "as things stand (eta null, eta_reason 'never, …' says why)"))
    text: ReasonText | None = None

    @model_validator(mode="before")
    @classmethod
    def _in_words(cls, data: Any) -> Any:
        """Every reason the API answers carries its sentences (issue 20: the panel, magics and
        CLI each wrote their own, with nested brackets and the ETA said twice)."""
        if isinstance(data, dict) and data.get("text") is None and "code" in data:
            return reason_in_words(data, render_reason(data))
        return data


class StopRequested(ResponseModel):
    """Work in the grace of a stop (:func:`~jupyter_sched.services.cancelling.stop_requested`): it
    still holds its GPUs, its state still reads ``admitted``/``running`` until it exits."""

    intent: str = Field(description="why: cancel, preempt, timeout (its time limit), idle (reclaimed as idle)",
                        examples=["cancel"])
    by: str | None = Field(default=None, description="who asked: a user, or 'scheduler'")
    at: str | None = Field(default=None, description="when the stop was asked for (UTC)")
    kill_at: str | None = Field(default=None, description=(
        "when SIGKILL follows if it has not exited (cancel, timeout and idle stops: the server's grace); null "
        "for a preemption, which sets its own grace"))
    text: str | None = Field(default=None, description=(
        "the sentence the panel, the magics and the CLI show, e.g. 'stopping (cancel requested by ann at 04:08:01 "
        "UTC; killed at 04:08:11 UTC if still running)'"))


class PreemptionPlanned(ResponseModel):
    """Running work the scheduler will preempt (or reclaim) at a known time: a waiting job's ETA is the
    moment this one has run the minimum runtime (new user 21, N5). The waiter is named as its own queue
    line names it."""

    at: str = Field(description="when (UTC): the waiting job's ETA, the moment this one has run the minimum runtime",
                    examples=["2026-12-05T02:11:00Z"])
    for_job: str = Field(description="the waiting job (or lease) it is stopped for")
    for_name: str | None = Field(default=None, description="that job's name, when it says more than its id")
    for_owner: str | None = Field(default=None, description="that job's owner, when it is not this job's owner")
    for_priority: PriorityName = Field(description="that job's class")
    for_team: str = Field(description="that job's team")
    same_team: bool = Field(description="the waiter is of this job's team (else a reclaim or class preemption "
                                        "across teams)")
    verb: Literal["preempted", "reclaimed"] = Field(description="how it is stopped, as the waiter's ETA says it")
    text: str = Field(default="", examples=["to be preempted at ~Dec 5 02:11 UTC for norm2 (j-1m91z6wnt-e4dzvs), "
                                            "normal priority of the same team, unless it ends first"], description=(
        "the plan in words, as the panel, the CLI and the magics say it after the job's end (they say the clock as "
        "of their own now)"))


class ProjectedEnd(ResponseModel):
    """When running work is projected to end before its time limit ends it — the end the ETAs of the jobs
    waiting on it read, from its own progress report or a runtime learnt from past runs (new user 22, N10)."""

    at: str = Field(description="the projected end (UTC)", examples=["2026-12-05T05:10:00Z"])
    source: Literal["progress", "history"] = Field(description=(
        "progress: the rate of its own progress reports; history: the runtime learnt from past runs"))
    report_at: str | None = Field(default=None, description="source progress: the time of the report read (UTC)")
    fraction: float | None = Field(default=None, ge=0, le=1, description="source progress: that report's share done, 0-1")
    runs: Literal["same", "other", "population", "population_gpus"] | None = Field(default=None, description=(
        "source history: what the runtime was learnt from — similar past runs, its owner's runs of other programs, "
        "everybody's runs of its size, or everybody's GPU runs of any size under time limits like its own"))
    share: float | None = Field(default=None, ge=0, le=1, description=(
        "source history, runs other, population or population_gpus: the learnt end as a share of its time limit, 0-1"))
    text: str = Field(default="", examples=["projected end ~Dec 5 05:10 UTC, from its progress report of "
                                            "Dec 5 05:08:30 UTC"], description=(
        "the projection in words, as the panel, the CLI and the magics say it before the time limit's end (they "
        "say the clock as of their own now, and how far off)"))


class PlannedTimeLimit(ResponseModel):
    """The time limit a pending job that gave none is planned with and stopped at (newuser28 N8, verify28 V9)."""

    seconds: float = Field(gt=0, description="the limit, in seconds")
    source: Literal["queue default", "queue max", "unlimited asked"] = Field(description=(
        "queue default: its queue's default_s (c.SchedApp.time_limits); queue max: its queue's max_s, there being "
        "no default; unlimited asked: time_limit 0, planned as unlimited but stopped at its queue's max_s once it "
        "starts"))
    max_s: float | None = Field(default=None, description=(
        "its queue's maximum: what its owner may lengthen it to while it pends (PATCH jobs/{id} time_limit, "
        "'+10m' moves this planned limit); null for none"))
    text: str = Field(examples=["time limit 30m (queue default; none given)"], description=(
        "the one phrase every surface shows on its line"))


class UnhealthyGpu(ResponseModel):
    """A GPU a job holds that turned unhealthy under it (hubadmin24 B14)."""

    uuid: str
    index: int = Field(description="its NVML index on the node")
    node: str
    reason: str = Field(description="why, as the evidence says (e.g. 'Xid 79', an admin's 'ECC errors, RMA'); may be empty")
    since: str | None = Field(description="when it turned unhealthy (UTC), when the evidence says")
    text: str = Field(description="the one sentence every surface shows")


class JobDrain(ResponseModel):
    """The drain of the node a job's work runs on (hubadmin26 B1)."""

    node: str
    by: str = Field(description="the admin who drains it")
    reason: str = Field(description="why, the admin's words")
    evict_at: str = Field(description="when the work still on it is stopped (UTC): requeued, a lease ended")
    text: str = Field(description="the one sentence every surface shows, e.g. 'node-a is being drained by boss (BIOS "
                                  "update): this job is stopped at 18:37 UTC and requeued — checkpoint before then'")


class JobHold(CodecView):
    """A person's hold on a pending job (hubadmin25 B18)."""

    by: str = Field(description="who held it")
    at: str = Field(description="when (UTC)")
    admin: bool = Field(description="an admin's hold: only an admin releases it")


class ReclaimCooldown(ResponseModel):
    """What ending work that took GPUs back by reclaim costs its team (newuser36 N6): its team's reclaims of
    other teams' borrowed GPUs wait until ``until`` (the reclaim cool-down, DESIGN.md *Reclaim*)."""

    team: str = Field(examples=["vision"])
    until: str = Field(examples=["2026-12-07T04:52:26+00:00"], description="UTC, ISO 8601")
    took_at: str = Field(examples=["2026-12-07T04:37:26+00:00"], description="when its reclaim was decided")
    held_s: float | None = Field(examples=[1.0], description="seconds the GPUs it took back were held (null: it never "
                                                             "started)")
    cooldown_s: float = Field(examples=[900.0])
    text: str = Field(examples=["team vision's reclaims of other teams' borrowed GPUs wait until 04:52 UTC (a reclaim "
                                "cool-down: the GPUs you took back were used for 1s)"])


class Job(CodecView):
    """A job or lease as the API shows it (:func:`~jupyter_sched.model.codec.job_to_dict`)."""

    id: str
    name: str
    user: str
    team: str
    kind: JobKindName
    priority: PriorityName
    state: JobStateName
    resources: Resources
    time_limit_s: float | None = None
    time_limit_source: Literal["queue default", "queue max", "unlimited asked"] | None = Field(default=None, description=(
        "where time_limit_s came from when the job gave none: its queue's default or maximum, written in at its "
        "admission (unlimited asked: time_limit 0, stopped at the queue's maximum); clients say 'its 30m time limit "
        "(queue default; none given)'; absent when the job gave its limit (newuser28 N8)"))
    planned_time_limit: PlannedTimeLimit | None = Field(default=None, description=(
        "a pending job that gave no time limit (time_limit_s null) in a queue with a default or maximum: the "
        "limit it is planned with and stopped at, written into time_limit_s at its admission (case 033); absent "
        "otherwise"))
    command: list[str] | None = None
    script: str | None = None
    notebook: str | None = None
    working_dir: str | None = None
    env: dict[str, str] | None = None
    not_kept: dict[str, int] | None = Field(default=None, description=(
        "a finished job whose stored row no longer keeps all of its request (red30 R4): env_bytes — its env's "
        "size, kept as names only (values empty); command_bytes — the bytes of its command cut off; absent while "
        "everything is kept. Resubmitting it needs them given again"))
    not_kept_text: str | None = Field(default=None, description=(
        "GET jobs/{id}: not_kept in words, e.g. 'env kept as names only after the job ended (60 KB of values not "
        "kept) — give --env again to run it again'"))
    ended_out_of_memory: bool | None = Field(default=None, description=(
        "GET jobs/{id} of a failed job: true when the out-of-memory killer ended it (certain, or likely: its memory "
        "cgroup counted a kill, or its peak reached its limit), as its message says; the panel's Resubmit then "
        "offers the Submit form with Memory to change; absent otherwise"))
    image: str | None = None
    port: int | None = None
    kernel_id: str | None = None
    kernel_notebook: str | None = None
    parent_job_id: str | None = None
    released_at_exit: bool | None = Field(default=None, description=(
        "a lease whose holding process (a kernel this server did not start) releases it at its exit; its owner's "
        "and admins' views only"))
    profile: str | None = None
    checkpointable: bool = False
    no_preempt: bool | None = Field(default=None, description=(
        "true: it never preempts nor reclaims, it waits for free GPUs (newuser36 N6); absent otherwise"))
    reclaim_cooldown: ReclaimCooldown | None = Field(default=None, description=(
        "cancel and release answers only (DELETE jobs/{id}, leases/{id}): this work took GPUs back from other teams "
        "by reclaim and ended before the reclaim cool-down, so its team's reclaims of other teams' borrowed GPUs "
        "wait until 'until' (c.SchedApp.reclaim_cooldown_s); 'text' says it in the words every client shows "
        "(newuser36 N6); absent otherwise"))
    submitted_at: str | None = None
    admitted_at: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    allocation: Allocation | None = None
    reason: PendingReason | None = None
    exit_code: int | None = None
    message: str | None = None
    attempts: int = 0
    false_starts: int = Field(default=0, description=(
        "runs of attempts stopped before or just after they started (new user 24, N1): no attempts — "
        "its starts are attempts - false_starts"))
    not_before: str | None = None
    preempted_by: str | None = Field(default=None, description="the job whose admission preempted this one last")
    preempted_by_name: str | None = Field(default=None, description=(
        "that job's name, when it says more than its id: the renderer's 'start 2, after preemption by mal3 (j-…)'"))
    nominated: Allocation | None = None
    stopping_since: str | None = Field(default=None, description="when a stop was asked for, while it runs on "
                                                                 "(see stop_requested)")
    idle_release: dict[str, Any] | None = Field(default=None, examples=[{"action": "release", "after_s": 3600}],
                                                description=(
        "a lease holding GPUs: what this server's idle policy does to it when idle — action release (after after_s "
        "seconds idle: window + grace), notify (reported as idle, never released) or off (no idle reclaim); on a "
        "kernel's released lease where the GPU's process list is read, kernel: shutdown or hold (what is done when "
        "the kernel still holds the GPU then: shut down, or the GPU kept out of use until it lets go); "
        "keepalive_until: while its keepalive lasts, the time before which it is not reclaimed as idle; on a "
        "kernel's lease, busy_after_s and busy_action: how long its GPUs may stay idle while its kernel is said to "
        "be busy (the busy-kernel bound: window + grace) and what happens then, release or notify (red39 R8)"))
    stop_requested: StopRequested | None = Field(default=None, description=(
        "set while the job is in the grace of a stop (a cancel, a preemption, its time limit, an idle reclaim): "
        "it still holds GPUs and its state still reads running; clients show it as stopping (new user 8, N13)"))
    already_stopping: bool | None = Field(default=None, description=(
        "cancel answers only (DELETE jobs/{id}): true when a stop was already requested before this cancel, "
        "which then changed nothing — the first request's grace and kill time stand; the CLI and the magics say "
        "'it is already stopping (…)' (new user 17, N12)"))
    preemption_planned: PreemptionPlanned | None = Field(default=None, description=(
        "running work only, from the server that schedules: the scheduler will preempt it at a known time for a "
        "waiting job (whose ETA that is), unless it ends first; absent when no preemption of it is planned "
        "(new user 21, N5)"))
    projected_end: ProjectedEnd | None = Field(default=None, description=(
        "running work only, from the server that schedules, to its owner and admins: when it is projected to end "
        "before its time limit — the end the ETAs of the jobs waiting on it read (its progress report's rate or a "
        "learnt runtime); absent when its time limit is what ends it (new user 22, N10)"))
    progress: JobProgress | None = Field(default=None, description=(
        "its latest progress report (POST jobs/{id}/progress), which the ETAs of the jobs waiting on it read while "
        "it runs: in GET jobs/{id} whenever it reported, in GET jobs and the caller's own queue entries while it "
        "runs; absent when it never reported"))
    simulated: bool = False
    gone_gpus: list[str] | None = Field(default=None, examples=[["GPU-sim-vm-3"]], description=(
        "work holding GPUs: the GPU (or MIG device) uuids of its allocation the inventory no longer lists — a node "
        "or GPUs gone under it (a restart with fewer GPUs, a node deleted from the inventory file or the cluster); "
        "it keeps them and runs on unless they went with it, and an admin may cancel it. Clients say 'GPU-… no "
        "longer in the inventory (it runs on unless its GPUs went with it; an admin can cancel it)' on its line "
        "(hubadmin 22, H3); absent when every GPU it holds is listed"))
    unhealthy_gpus: list[UnhealthyGpu] | None = Field(default=None, description=(
        "work holding GPUs, to its owner and admins: the GPUs it holds that turned unhealthy under it (an Xid, an "
        "admin's healthy: false) — it runs on there, but may fail or slow down; clients show each one's text on its "
        "line (hubadmin24 B14); absent when none"))
    drain: JobDrain | None = Field(default=None, description=(
        "work holding GPUs on a node an admin drains with a deadline (jupyter-sched nodes drain --evict-after): "
        "who, why, when its work is stopped, and text, the one sentence clients show on its line in place of its "
        "'ends by' when the stop comes first (hubadmin26 B1); absent when its node is not drained"))
    mine: bool = Field(default=False, description=(
        "the caller owns it (answers to a caller only): its reason's text then names what of the caller's own "
        "blocks it, e.g. 'your own kernel lease l-… holds 1 GPU'"))
    held: JobHold | None = Field(default=None, description=(
        "set while a person holds the pending job (PATCH jobs/{id} held: true): who, when, and whether it is an "
        "admin's hold (released by an admin only); absent when not held"))
    top_at: str | None = Field(default=None, description=(
        "when an admin put the pending job first in its class (PATCH jobs/{id} top: true); absent when not topped"))
    eligible_at: str | None = Field(default=None, description=(
        "when its hold was released (PATCH jobs/{id} held: false): its place in the queue and its age count from "
        "then, behind work submitted while it was held (Slurm's EligibleTime); submitted_at stays its submit time; "
        "absent when never released"))
    changed: list[str] | None = Field(default=None, examples=[["time limit 3h → 4h"]], description=(
        "PATCH jobs/{id} answers only: one line per change made, in words ('held', 'time limit 3h → 4h', "
        "'priority low → normal', 'put first in its class'), or what was already so"))
    warnings: list[str] | None = Field(default=None, description=(
        "submit answers only: what to know about the accepted request, e.g. 'time limit 0 = unlimited; this job "
        "can only start when nothing is reserved' (case 033), that cpu/memory are not reserved here, or that a "
        "notebook's parameters cell does not set a parameter given (\"… did you mean 'region'?\", newuser39 n3)"))

    @model_validator(mode="before")
    @classmethod
    def _lease_in_words(cls, data: Any, info: ValidationInfo) -> Any:
        """A lease's reason in a lease's words: it cannot be given a time limit, so its backfill
        clause says what it waits for (issue 20: "with no time limit it cannot start ahead of…").
        Work that ended keeps its last reason as history, without "queued #2" or an ETA. Read by
        its owner (validation context ``{"viewer": user}``, or a queue entry's ``mine``), what of
        the owner's own blocks it is named as theirs — to nobody else (issue 20). Other users' progress
        and idle state in it only to a reader who may see them (their owner; an admin, context
        ``{"admin": True}``): a line without a viewer whose ``mine`` is false is read by anyone
        (red team 22, R2)."""
        if not isinstance(data, dict):
            return data
        context = info.context if isinstance(info.context, dict) else {}
        viewer = context.get("viewer")
        if viewer is not None and "mine" not in data:
            data = {**data, "mine": viewer == data.get("user")}
        reader = viewer if viewer is not None else data.get("user") if data.get("mine") is True else None
        data = _for_reader(data, reader if isinstance(reader, str) else None, context.get("admin") is True)
        ended = data.get("state") in _ENDED
        reason = data.get("reason")
        mine = data.get("mine") is True and not ended and isinstance(reason, dict)  # as job_in_words (newuser25 N8)
        if data.get("kind") != "lease" and not ended and not mine:
            return data
        return _with_text(data, "reason", kind=str(data.get("kind") or ""), never=ended, mine=mine)


class KeepaliveLeaseResponse(Job):
    """The lease after a keepalive, with the time its GPUs are kept until."""

    keepalive_until: str | None = None
    notice: str | None = Field(default=None, description=(
        "set when nothing was extended because the lease's owner is no longer a member of the team it is charged "
        "to: the lease is outside that team's guarantee and not renewed; the sentence says so and how to ask again "
        "under a team the owner is in now (keepalive_until then stays what it was)"))


class LeaseHeartbeatResponse(ResponseModel):
    """``POST leases/{id}/heartbeat``: the lease's kernel still runs (newuser41 N1, the hub half). Not activity: no
    idle clock or keepalive moves."""

    id: str = Field(examples=["l-01hf3k2m9-x7q4za"])
    state: str = Field(description="the lease's state (pending, admitted, running)")
    needed: bool = Field(description=(
        "whether the server ends this lease when its heartbeats stop: true for a lease asked by a kernel the "
        "server did not start, from a process it cannot check itself (another host, container or pid namespace); "
        "false: the server watches the kernel's process (or its kernel) itself and the keeper may stop"))
    interval_s: float = Field(description="c.SchedApp.lease_heartbeat_interval_s: seconds between heartbeats")
    misses: int = Field(description=(
        "c.SchedApp.lease_heartbeat_misses: heartbeats missed before a pending lease is withdrawn; a granted one "
        "is released after twice that"))


class QueueEntry(Job):
    """One line of the queue; another user's entry leaves out command, environment and paths."""

    mine: bool
    position: int | None = Field(default=None, description=(
        "1-based place among the jobs waiting to start, in the order the queue will have when GPUs next free (#1 "
        "starts first); null for work holding GPUs, a held job (it waits for a person: released, it takes its place "
        "again) and a job above a quota ceiling"))
    eta: str | None = None
    eta_reason: str = Field(default="", description="reason.eta_reason (kept for older clients); for display, "
                                                    "reason.text.eta")


class _ListModel(RootModel[Any]):
    model_config = ConfigDict(frozen=True)

    to_wire = dump_set

    items_shared: ClassVar[bool] = False
    """True when the items are long-lived objects that many answers share (a queue line is kept
    while its job is unchanged, :meth:`~jupyter_sched.services.jobs.JobsService._entry`): the web
    layer then writes each item's JSON once and joins them, so a new page after one submit
    serialises only the lines that changed (issue 17)."""


class ListJobsResponse(_ListModel):
    """Jobs, newest first."""

    root: list[Job]

    items_shared: ClassVar[bool] = True  # rows kept per job while unchanged (JobsService._row)


class JobsPage(ResponseModel):
    """One page of jobs and the cursor of the next (None on the last page)."""

    jobs: ListJobsResponse
    next_cursor: str | None = None


class GetQueueResponse(_ListModel):
    """Pending work in queue order, then work holding GPUs."""

    root: list[QueueEntry]

    items_shared: ClassVar[bool] = True


class QueuePage(ResponseModel):
    """One page of the queue and the cursor of the next (None on the last page, and without
    ``limit`` or ``cursor``)."""

    entries: GetQueueResponse
    next_cursor: str | None = None
    waiting_total: int | None = None
    """Waiting (pending/preempted) work in the whole queue when more follow this page; sent as
    the ``X-Total-Count`` header."""


class JobLogNote(ResponseModel):
    """A line the scheduler has for a job's log readers, beside the job's own output (new user 21, N7)."""

    at: str = Field(description="when the scheduler said it (UTC)")
    text: str = Field(examples=["jupyter_sched: at this pace (10 % done after 40s) the job needs ~6m40s in all; its 2m "
                                "time limit stops it at 11:52 UTC"])


class GetJobLogsResponse(ResponseModel):
    """A chunk of a job's output (byte offsets)."""

    text: str
    offset: int = Field(description="byte offset of text")
    next_offset: int = Field(description="pass as offset to continue")
    finished: bool = Field(description="the job ended and text reached the end of its log")
    notes: list[JobLogNote] = Field(default_factory=list, description=(
        "the scheduler's lines for this job's log readers, oldest first, each said once per run (e.g. that its "
        "progress says its time limit stops it unfinished); kept out of the log file, which the job's account "
        "owns: a reader shows each once (jupyter-sched logs prints them on stderr)"))
    size: int | None = Field(default=None, examples=[7340032], description=(
        "the log's size in bytes at this read (null where the executor cannot say): a reader of a long log "
        "starts near its end, at offset size - N"))
    state: str | None = Field(default=None, examples=["pending"], description=(
        "the job's state at this read (its wire state, as GET jobs/{id} says it): an empty log of a pending, "
        "preempted or admitted job has no output yet, and a follow answers when it changes (newuser37 N2: a "
        "reader said nothing of a held job's wait)"))


class DryrunJobResponse(ResponseModel):
    """Would this request fit now, where, and otherwise why and when."""

    fits: bool = Field(description="admitted at the next cycle")
    never: bool = Field(description="can never run here")
    allocation: Allocation | None
    reason: PendingReason | None
    eta: str | None
    would_preempt: list[str]
    job: Job
    warnings: list[str] = Field(default_factory=list, description=(
        "what its submit would say about the request, the same sentences (newuser31 n13), e.g. 'memory 64 is read as "
        "64 MiB (a bare number is MiB)' or 'time_limit 90 is 90 seconds'; empty when there is nothing to know"))

    @model_validator(mode="before")
    @classmethod
    def _never_in_words(cls, data: Any) -> Any:
        """A dry run that can never fit is not "queued" with an "ETA unknown" (issue 20). Its reason is
        read by the asker, whose request it is: other users' progress and idle state withheld (red team 22, R2)."""
        if isinstance(data, dict) and isinstance(data.get("job"), Mapping):
            asker = data["job"].get("user")
            data = {**data, "reason": reason_for(data.get("reason"), owner=asker, reader=asker)}
        return _with_text(data, "reason", never=True) if isinstance(data, dict) and data.get("never") else data

    to_wire = dump_set
