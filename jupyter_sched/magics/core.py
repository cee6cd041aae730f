"""The ``%gpu`` and ``%schedule`` / ``%%schedule`` magics.

Both are thin clients of the REST API (:mod:`jupyter_sched.client`): every action is one or a
few API calls, so a job submitted here shows in the panel and the CLI at once, and vice versa.

Errors never show a traceback: every refusal — a bad argument (one line naming it) or the server's
answer — raises :class:`MagicError`, which IPython renders as one line, ``jupyter_sched: …``.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class

from ..client import NoServerError, SchedClient, connect
from ..client._wire import new_notes
from ..client.heartbeat import LeaseKeeper, keep_lease
from ..client.ride_out import ARRIVED, SENT_AGAIN, SUBMIT_RIDE_OUT_S, RideOut, never_sent, submit_through_restart
from ..client.submitter_env import SUBMITTER_VARIABLES
from ..definitions.parameters import NO_PARAMETERS_CELL, parameters_file_note, unsaid_note
from ..errors import (
    AuthorizationError,
    ConflictError,
    NotFoundError,
    QuotaError,
    SchedError,
    UnschedulableError,
    ValidationError,
)
from ..model.names import file_name
from ..model.units import clock_text
from ..textsafe import FollowedLine, printable_log
from ..userfiles import CHECKED_BYTES, content_problem, content_refusal, file_problem, start_folder_argv
from ..wording import cancel_outcome, refusal_line, refusal_text, state_word, wait_progress
from ..wording.files import path_refusal
from ..wording.flags import CELL, GPU_REQUEST, GPU_REQUEST_N, Surface, in_surface_terms, where_listed
from ..wording.jobs import (
    BULK_STATES,
    GPU_MILLI_ENV,
    KERNEL_TOLD,
    SHARED_GPU_NOTE,
    TERMINAL_STATES,
    bulk_cancel_answers,
    bulk_cancel_plan,
    busy_bound_words,
    changed_line,
    dryrun_line,
    granted_milli,
    granted_words,
    idle_note,
    in_bulk_cancel,
    job_head,
    keepalive_line,
    lease_end_words,
    lease_given_back,
    limit_end,
    never_here,
    nothing_to_cancel,
    state_filter,
    still_going,
)
from ..wording.log_clocks import log_clocks_said, log_note_said
from ..wording.progress import within_timeout
from ..wording.quota import ask_for_gpus, full_team_limit, quota_lines
from ..wording.reasons import wire_time
from ..wording.status import budget_lines
from .carry import carried_notebook, carried_script, home_working_dir
from .cuda import CudaState, cuda_state
from .display import LiveFigure, Progress, wait_outcome
from .parsing import (
    HELP_FLAGS,
    GpuCommand,
    JobOptions,
    ScheduleCommand,
    _split,
    check_model,
    help_text,
    job_body,
    lease_body,
    parse_gpu_line,
    parse_schedule_line,
    passed_on_note,
)
from .render import (
    draining_line,
    gpu_frame,
    granted_uuids,
    is_granted,
    is_terminal,
    job_line,
    jobs_frame,
    no_gpus_message,
    profiles_frame,
    queue_frame,
    samples_from,
)

__all__ = ["CUDA_ALREADY_INITIALISED", "MagicError", "SchedMagics"]

CUDA_ALREADY_INITIALISED = (
    "CUDA is already initialised in this kernel; GPU selection cannot take effect. "
    "Restart the kernel and run %gpu before importing torch/tensorflow/cupy."
)
CELLS_DIR = os.path.join(".jupyter_sched", "cells")
_LIVE_STATES = "pending,admitted,running,preempted"
_FIRST_WAIT_S = 0.5

LOG_TAIL_BYTES = 65536
"""A log longer than this shows only its end in a notebook (at most :data:`LOG_TAIL_LINES` lines of its
last 64 KiB): megabytes of output in a cell freeze the browser, and a finished job's traceback is last."""
LOG_TAIL_LINES = 200


def format_bytes(count: int) -> str:
    """``812 bytes``, ``64 KB``, ``3.9 MB`` (decimal units, as a file manager says them)."""
    if count < 1000:
        return f"{count} bytes"
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if count >= size:
            value = count / size
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{count} bytes"
"""``%gpu request``: how long ``POST leases`` waits for the decision before progress is shown."""
_POLL_WAIT_S = 1.0
"""Then each ``GET leases/{id}`` long poll: at most this long, so the progress line refreshes."""
RELEASED_CUDA = (
    "CUDA_VISIBLE_DEVICES is now '' (empty) in this kernel: empty hides every GPU from CUDA, while unset would "
    "show it all of this host's GPUs. If CUDA was initialised, restart the kernel to free GPU memory.")


class MagicError(UsageError):
    """A failure the user must see, shown by IPython as one line (no traceback): ``jupyter_sched: …``.

    The one class of every refusal, whether the magic's own parser or the server said it (new user
    14, N4/N25: ``%gpu request -1`` was a ``UsageError: …`` on stderr, ``%gpu request 99`` an error
    ``MagicError N: …`` — two looks for one kind of mistake). A ``UsageError``, so what catches
    IPython's usage errors catches these, yet drawn by :meth:`_render_traceback_` (IPython prints
    exactly ``UsageError`` instances as ``UsageError: …``)."""

    def _render_traceback_(self) -> list[str]:
        return [f"jupyter_sched: {self}"]


SAVE_EXECUTED = "%schedule logs {job} --notebook"
"""What saves a notebook job's executed notebook in this kernel's folder, said in a notebook (newuser41 n11: the
hints said ``!jupyter-sched logs … --notebook``, which a hub kernel, with no ``jupyter-sched`` on its PATH, cannot
run)."""

_LOG_SAVE_STEP = re.compile(r"^(\[jupyter_sched\] executed notebook kept .*save it here with: )jupyter-sched logs "
                            r"([jl]-[\w-]+|JOB) --notebook$", re.MULTILINE)
"""The runner's last log line (:func:`~jupyter_sched.executors.run_notebook.executed_notebook_line`): its CLI
command, said as the magic in a notebook."""


def log_in_magic_words(text: str) -> str:
    """A job's log as a notebook shows it: the scheduler's executed-notebook line names
    :data:`SAVE_EXECUTED`, not the CLI (the job's own lines are left as written)."""
    return _LOG_SAVE_STEP.sub(lambda m: m.group(1) + SAVE_EXECUTED.format(job=m.group(2)), text) \
        if "--notebook" in text else text


def log_shown(text: str, *, line_start: bool = True) -> str:
    """A job's log text as ``%schedule logs`` prints it: the scheduler's lines' clocks in this zone, terminal
    controls dropped or shown by the CLI's one escaping (:func:`~jupyter_sched.textsafe.printable_log`), the
    executed-notebook step as the magic. newuser42 N2: the magic wrote a job's ESC, BEL, NUL and OSC title/clipboard
    sequences into the kernel's stream as written, which ``jupyter console`` obeys and a notebook ANSI-renders —
    for an admin reading another user's log too. ``line_start``: ``text`` begins a line of the log."""
    return log_in_magic_words(printable_log(log_clocks_said(text, line_start=line_start), line_start=line_start))


_CLI_STEP = re.compile(r"\bjupyter-sched (release|cancel) (?=[jl]-)")
"""A step the server's line names as a CLI command that the magics also take (``release``, ``cancel`` of a job id)."""


def in_magic_words(line: str) -> str:
    """A server line's steps as the notebook's reader types them (newuser31 n7: ``%schedule hold m-next`` answered
    ``held (release with: jupyter-sched release j-…)`` in a notebook): ``%schedule release j-…``, ``%schedule
    cancel j-…``; other commands as they are (no magic does them)."""
    return _CLI_STEP.sub(lambda m: f"%schedule {m.group(1)} ", line)


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _at_once(fetch: Callable[[], Any]) -> Any:
    """``fetch()``: a request that is not ridden out (a command that does not wait)."""
    return fetch()


INTERRUPT = "interrupt the kernel to stop"
"""How a cell's wait is stopped, in a restart's notice (:class:`~jupyter_sched.client.ride_out.RideOut`)."""


def _capital(text: str) -> str:
    """A notebook prints sentences: ``released lease l-1 …`` → ``Released lease l-1 …``."""
    return text[:1].upper() + text[1:]


_BULK_PAGE = 1000
"""Jobs per listing of a bulk cancel: the largest page ``GET jobs`` gives."""

_MAGIC_HINTS = {"list your jobs to see their ids": "%schedule jobs lists your jobs with their ids"}
"""The server's hints that name no command, said with the magic that does it (issue 20)."""


def stopped_by_interrupt(doing: str, job_id: str) -> str:
    """The one line of a wait or log follow the user interrupted (raised, so the cell and a Run All stop there);
    ``doing``: ``"waiting for"`` or ``"following"``."""
    return (f"stopped {doing} {job_id} (interrupted); the job keeps running — %schedule cancel {job_id} stops it, "
            f"%schedule wait {job_id} waits again")


def _one_line(err: SchedError, *, surface: Surface = CELL) -> str:
    """``--mem-per-gpu: <what blocks it>. <What to change>.``: the field as the magic's option
    (:func:`~jupyter_sched.wording.flags.in_surface_terms`, as the CLI says it; ``surface``:
    ``%gpu request``'s own), a refused request's
    reason in the words the queue uses (one renderer), and no Python class name (issue 20:
    "UnschedulableError: …", "NotFoundError: JOB_ID: …")."""
    message, hint = refusal_text(err.message, err.hint, err.details, err.field)
    message, hint = in_surface_terms(message, hint, err.field, surface, err.details)
    hint = where_listed(err.code, err.field, message, hint, surface)  # as the CLI names its command (N25)
    if err.field == "working_dir" and hint:  # --workdir is read, and jobs start, here: not the server's rule (n5)
        from ..wording.workdir import caller_workdir_hint

        here = f"this notebook's folder, {os.getcwd()}"
        hint = caller_workdir_hint(hint, relative_in=here, starts_in=f"{here}; a notebook job's in its own folder")
    for said, magic in _MAGIC_HINTS.items():  # the server's words may go on after it (new user 12, N10)
        if hint and hint.startswith(said):
            hint = magic + hint[len(said):]
    if hint:  # a REST request in a hint is said as the magic that sends it (new user 7, F16)
        hint = re.sub(r"PATCH definitions/([\w-]+)", r"%schedule define edit \1 …", hint)
    if hint and isinstance((err.details or {}).get("reason"), Mapping):
        # it can never run here: the sentence the CLI, the dry runs and the panel say (newuser32 n1)
        return _full_stop(refusal_line(message, hint))
    if hint:  # a second sentence, not "…has 4. (Ask for …)"
        message = _full_stop(message) + " " + _full_stop(_capital(hint.strip()))
    return message


def _timed_out(lease: Mapping[str, Any], lease_id: str, timeout_s: float) -> str:
    """``no GPUs granted within 8s; lease request l-… withdrawn. It was #2 in the queue: ml would use 4
    GPUs, above its limit of 3 GPUs · ETA 22:45 UTC (in 1m01s), when fill3 (j-…) ends``: what happened
    first, then the queue line's reason and ETA once, in the words the queue uses — never the whole
    line wrapped in brackets around brackets (new user 20, N6: "(queued #2 · ETA … (in 1m01s), when
    fill3 (j-…) ends (if …))" dropped the reason; new user 15, N12: said once, not twice)."""
    frame = wait_progress(lease, _now())
    said = f"no GPUs granted within {timeout_s:g}s; lease request {lease_id} withdrawn"
    line = frame.wide or frame.label
    head, _, rest = line.partition(" · ")
    where = f"It was #{head[len('queued #'):]} in the queue" if head.startswith("queued #") else "It was queued"
    return f"{said}. {where}: {rest}" if rest else f"{said}. {where}."


def _full_stop(text: str) -> str:
    text = text.rstrip()
    return text if not text or text[-1] in ".!?" else text + "."


def _usage_line(err: ValidationError) -> str:
    """A usage error's one line: the message, then the hint as a second sentence."""
    return err.message if not err.hint else _full_stop(err.message) + " " + _full_stop(_capital(err.hint.strip()))


@contextmanager
def _parsing() -> Iterator[None]:
    """Whatever the magic line's parser refuses is a usage error, whichever word it names (issue 20:
    ``%gpu keepalive 10m`` and ``%schedule cancel j-a j-b`` came out as server-style errors)."""
    try:
        yield
    except ValidationError as err:
        raise MagicError(_usage_line(err)) from None


@contextmanager
def _errors() -> Iterator[None]:
    """Turn parse errors and server errors into :class:`MagicError` (one line each, one look); the times
    said meanwhile are in the kernel's time zone (TZ, else /etc/localtime), named after each (newuser26
    n14: ``ends by 20:47 CET``), UTC where it is UTC — as the CLI says them."""
    from ..client.local_zone import caller_zone
    from ..model.units import shown_in

    try:
        with shown_in(caller_zone()):
            yield
    except ValidationError as err:
        if err.field and (err.field.startswith("-") or err.field.isupper() or err.field in (
                "subcommand", "arguments", "cell")):
            # our own parsing: the argument is named; the hint a second sentence, not "(got 0) (ask…)"
            raise MagicError(_usage_line(err)) from None
        raise MagicError(_one_line(err)) from None
    except SchedError as err:
        raise MagicError(_one_line(err)) from None
    except ModuleNotFoundError as err:  # an extra this install lacks (render.pandas says which)
        raise MagicError(str(err)) from None



def _hub_folder(working_dir: Any) -> str:
    """Where a cell's job runs on a hub, as its body says (newuser31 N7: "in your home directory there" while it
    ran in the notebook's folder, ``~/proj``): ``in ~/proj there (this notebook's folder)``; ``in your home
    folder there`` for ``~``, or when the notebook's folder is outside the home (no folder is sent then)."""
    if isinstance(working_dir, str) and working_dir not in ("", "~"):
        return f"in {working_dir} there (this notebook's folder)"
    if working_dir == "~":
        return "in your home folder there (this notebook's folder)"
    return "in your home folder there (this notebook's folder is outside your home)"

@magics_class
class SchedMagics(Magics):
    """``%gpu`` (interactive GPUs for this kernel) and ``%schedule`` / ``%%schedule`` (jobs).

    Args:
        shell: the IPython shell.
        client_factory: returns the API client; default :func:`jupyter_sched.client.connect`
            (discovery order documented in :mod:`jupyter_sched.client.discovery`).
    """

    def __init__(self, shell: Any, client_factory: Callable[[], SchedClient] | None = None) -> None:
        super().__init__(shell)
        self._client_factory = client_factory or connect
        self._client: SchedClient | None = None
        self.lease: dict[str, Any] | None = None
        self._applied: tuple[str, ...] = ()
        self._atexit_registered = False
        self._through_hub: bool | None = None
        self._sends_mine: bool | None = None  # whether a job gets this kernel's PATH (newuser27 N2): see _mine
        self._gpus_seen: dict[str, Any] | None = None  # see _gpu_inventory
        self._kernel_holds_none = False  # see _my_lease
        self._ended: dict[str, Any] | None = None  # the lease whose GPUs _apply set, ended from outside
        self._released: str | None = None  # the lease %gpu release gave back, while it may still drain
        self._keeper: LeaseKeeper | None = None  # a kernelless lease's heartbeats (newuser41 N1, hub: client.heartbeat)
        self._checked_at = 0.0  # time.monotonic() of the last before-a-cell look at the lease (_before_cell)
        self._watching = False
        self._environ_at_load = dict(os.environ)  # what %env / os.environ change after it: _unshared_env

    # ---- plumbing ------------------------------------------------------------------------
    @property
    def client(self) -> SchedClient:
        """The API client, found on first use."""
        if self._client is None:
            try:
                self._client = self._client_factory()
            except NoServerError as err:
                raise MagicError(f"{err.message} Fix: {err.hint}.") from None
            except SchedError as err:  # the hub token's mint, a squatted address: one line (red31 N1)
                raise MagicError(_one_line(err)) from None
        return self._client

    def _print(self, text: str) -> None:
        print(text, flush=True)

    def _hub(self) -> bool:
        """True when jobs run through a hub's central service (content is carried, see :mod:`.carry`)."""
        if self._through_hub is None:
            self._through_hub = self.client.config().get("mode") == "hub"
        return self._through_hub

    def _hub_body(self, cmd: ScheduleCommand, fields: dict[str, Any], start: Path | None = None,
                  **extra: Any) -> dict[str, Any]:
        """A hub's body: ``fields`` carried, started in ``start`` (default: this kernel's folder) as the
        same place in the owner's home there."""
        body = job_body(cmd.options, working_dir=home_working_dir(start or Path.cwd(), Path.home()), **extra)
        body.update(fields)
        return body

    def _job_of(self, ref: str, command: str = "") -> str:
        """The id of the job ``ref`` names (``client.job_named``, as the CLI's ``wait``/``logs``/``cancel``):
        of several of that name (a rerun), the live one, else the newest — said in a line before the answer
        (newuser22 N4: "2 of your jobs are named 'waiter2'" when one of them had ended). Several live: refused,
        the hint ``%schedule COMMAND j-…`` for each (``command``; newuser28 n13)."""
        from ..client._wire import name_refusal

        typed = f"%schedule {command}" if command else ""  # the server refuses another user's in its words (n6)
        try:
            found = self.client.job_named(ref, typed)
        except (ValidationError, AuthorizationError) as err:  # only another user's has it: whose (newuser32 n3)
            raise name_refusal(err, typed) from None
        if found.note:
            self._print(f"Note: {found.note}.")
        return str(found.id)

    def _warn(self, text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    # ---- %gpu ----------------------------------------------------------------------------
    @line_magic
    def gpu(self, line: str = "") -> Any:
        """Interactive GPUs for this kernel.

        Usage::

          %gpu                      show the GPUs (model, memory, who holds them, live utilization,
          %gpu status               simulated flag), your team's quota and this kernel's lease,
                                    as a DataFrame
          %gpu request N [--model M] [--mem-per-gpu 20GiB] [--cpu C] [--memory 64GiB] [--nvlink]
                         [--no-preempt] [--priority high|normal|low]
                         [--name NAME] [--team TEAM] [--profile NAME] [--wait | --no-wait] [--timeout 10m]
                                    lease N GPUs for this kernel (charged to --team, default
                                    your first team); while queued, shows position,
                                    reason and ETA; when granted sets CUDA_VISIBLE_DEVICES (GPU
                                    UUIDs) and CUDA_DEVICE_ORDER=PCI_BUS_ID in this kernel;
                                    --no-preempt: free GPUs only, it waits rather than stop
                                    anyone's running job (another team's borrowed GPUs included)
          %gpu N                    shorthand for %gpu request N
          %gpu release              give the GPUs back (also happens when the kernel shuts down)
          %gpu watch [--seconds 30] [--interval 1]
                                    live plotly chart of this kernel's GPUs (utilization %, MiB)
          %gpu keepalive            keep the lease's GPUs while idle (once per lease, up to the admin's limit)

        As in a shell, a word starting with ``#`` begins a comment (``%gpu release   # give them back``).

        Run ``%gpu request`` before importing torch / tensorflow / jax / cupy: CUDA reads
        CUDA_VISIBLE_DEVICES once, when it initialises. If CUDA is already initialised in this
        kernel, the request is refused (and nothing is charged); restart the kernel first.

        Examples::

          %gpu request 1
          %gpu request 2 --model A100 --mem-per-gpu 40GiB --timeout 10m
          %gpu request 1 --no-wait      # queue and return; %gpu status applies it once granted
          %gpu request 1 --no-preempt   # on a shared hub: wait for a free GPU, stop nobody's job
          %gpu watch --seconds 20
          %gpu release

        Load with ``%load_ext jupyter_sched``; to load it in every kernel, add
        ``c.InteractiveShellApp.extensions = ["jupyter_sched"]`` to ``ipython_config.py``.
        """
        with _errors():
            with _parsing():
                cmd = parse_gpu_line(line)
            if cmd.action == "help":
                self._help("gpu", cmd.topic)
                return None
            if cmd.action == "status":
                return self._gpu_status()
            if cmd.action == "request":
                self._gpu_request(cmd)
            elif cmd.action == "release":
                self._gpu_release()
            elif cmd.action == "watch":
                self._gpu_watch(cmd)
            elif cmd.action == "keepalive":
                self._gpu_keepalive()
        return None

    def _my_lease(self, *, trust_none: bool = False) -> dict[str, Any] | None:
        """This kernel's live lease: the remembered one refreshed, else found by kernel id.

        ``trust_none`` (``%gpu request``): when this magic already looked and found none, or
        released the last one itself, believe it without a ``GET leases`` round trip (issue 17:
        lease p50 <= 20 ms). Leases of a kernel are made by its own magic; a restarted kernel (the
        server re-attaches its GPUs, case 029) is a new process whose magic looks again."""
        if self.lease is not None:
            try:
                self.lease = self.client.lease(str(self.lease["id"]))
            except SchedError:
                self.lease = None
        if self.lease is not None and not is_terminal(self.lease) and not self.lease.get("stop_requested"):
            return self.lease  # (a released lease draining its GPU is not this kernel's any more: R6)
        if self.lease is not None and self._applied:
            self._ended = self.lease  # it ended elsewhere (cancel, idle reclaim): see _forget_ended
            if not is_terminal(self.lease):  # revoked, its GPU held while this kernel's context is on it (s20)
                self._released = str(self.lease["id"])  # %gpu says it, as after %gpu release (_draining)
        self.lease = None
        if trust_none and self._kernel_holds_none:
            return None
        kernel_id = self.client.kernel_id
        if kernel_id:
            for lease in self.client.leases(state=_LIVE_STATES):  # not the finished ones: they only grow
                if lease.get("kernel_id") == kernel_id and not is_terminal(lease) and not lease.get("stop_requested"):
                    self.lease = lease
                    self._kernel_holds_none = False
                    return lease
        self._kernel_holds_none = True
        return None

    def _gpu_status(self) -> Any:
        client = self.client
        inventory = client.inventory()
        lease = self._my_lease()
        if lease is not None and is_granted(lease) and granted_uuids(lease) != self._applied:
            if os.environ.get("CUDA_VISIBLE_DEVICES") == ",".join(granted_uuids(lease)):
                # the server set them before this kernel started (a restart kept the lease) and said
                # "re-attached": not a second "Allocated" of the same lease (new user 4)
                self._applied, self.lease = granted_uuids(lease), lease
            else:
                self._apply(lease)
        work = client.queue()
        samples = self._samples(None)
        mine = granted_uuids(lease) if lease else ()
        message = no_gpus_message(inventory)
        if message:
            self._print(message)
        elif inventory.get("simulated"):
            self._print("Simulated GPUs (no NVIDIA driver on this host): utilization comes from the CPU activity "
                        "of the work placed on them.")
        me = client.me()
        self._print("Quota: " + "\n       ".join(quota_lines(me)))  # as `jupyter-sched status` says it (new user 11, N21)
        if budgets := budget_lines(me, _now()):  # a spent budget holds every GPU request: said as `status` does (N6)
            self._print("Budget: " + "\n        ".join(budgets))
        waiting = me.get("waiting_on_you")
        if isinstance(waiting, Mapping) and waiting.get("text"):  # as `status` says it (newuser31 n14)
            self._print(f"Waiting on you: {waiting['text']}.")
        if lease is None:
            self._forget_ended()
            draining = self._draining()
            self._print(f"This kernel holds no lease; {draining}." if draining else
                        f"This kernel holds no GPUs. {ask_for_gpus(me, '%gpu request 1', room=self._room_elsewhere(me))}")
        else:
            self._print("This kernel: " + job_line(lease, _now()))
            if kept := keepalive_line(lease, _now()):  # newuser39 n11: the keepalive was said nowhere
                self._print(f"Keepalive: {kept}.")
            if busy := busy_bound_words(lease.get("idle_release")):  # red39 R8: "busy" keeps idle GPUs only so long
                self._print(f"Busy kernel: {busy}.")
            idle, warned = self._idle_warning(str(lease.get("id")), limit_end(lease))
            if idle:  # a warned lease loses its GPUs and CUDA state: say so here (new user 4); "Warning:" only once
                # warned — before, right at grant, it is the rule's information (newuser40 n7)
                self._print(f"{'Warning' if warned else 'Idle rule'}: {idle}.")
            if is_granted(lease):
                self._print(f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', '')}")
        if message:  # no GPUs: said above, not also as pandas' "Empty DataFrame" (new user 22, small items)
            return None
        # the lease first: the queue's copy of it (read after it) is the newer one (N3: listed twice)
        return gpu_frame(inventory, ([lease] if lease else []) + work, samples, mine, now=_now())

    def _room_elsewhere(self, me: Mapping[str, Any]) -> str | None:
        """Another team of the caller where one GPU would be granted now, asked (dry runs, at most
        three) only when the default team holds all its quota allows; None otherwise (new user 22:
        ``%gpu`` offered ``%gpu request 1`` in a full team while the caller's other team had room)."""
        if full_team_limit(me) is None:
            return None
        default = str(me.get("team") or "")
        for team in [str(t) for t in me.get("teams") or () if str(t) != default][:3]:
            try:
                answer = self.client.dryrun({"gpus": 1, "team": team, "command": [sys.executable, "-c", "pass"]})
            except SchedError:  # a team the caller may not use now, a budget spent: not a suggestion
                continue
            if answer.get("fits"):
                return team
        return None

    LEASE_CHECK_S = 5.0
    """Before a cell, the lease whose GPUs this kernel names is looked at no more often than this."""

    def _before_cell(self, *_: Any) -> None:
        """Before each cell (at most every :attr:`LEASE_CHECK_S`): has the lease whose GPUs
        CUDA_VISIBLE_DEVICES names ended from outside (panel Release, ``jupyter-sched cancel``,
        idle reclaim)? Then :meth:`_forget_ended` says so and hides them before the cell runs — the
        next cell, not the next ``%gpu``, is where a GPU handed to someone else would be used (new
        user 6, F18). Never raises: a failed look leaves things as they were."""
        if not self._applied or self.lease is None or time.monotonic() - self._checked_at < self.LEASE_CHECK_S:
            return
        self._checked_at = time.monotonic()
        try:
            lease = self.client.lease(str(self.lease["id"]))
        except Exception:  # a hook before every cell must not fail the cell (unreachable server, 404)
            return
        if is_terminal(lease):
            self._ended, self.lease = lease, None
            self._forget_ended()

    def _forget_ended(self) -> None:
        """The lease whose GPUs this kernel's CUDA_VISIBLE_DEVICES names ended from outside (``jupyter-sched
        cancel``, an admin, idle reclaim): say so, and hide the GPUs it no longer holds — set
        ``CUDA_VISIBLE_DEVICES`` to '' when nothing here initialised CUDA yet, else tell the user
        to restart (CUDA keeps the devices it opened). New user 6, F18: after a cancel from a
        terminal the kernel still named GPU-sim-vm-0 while ``%gpu status`` said it held none."""
        ended, self._ended = self._ended, None
        named = os.environ.get("CUDA_VISIBLE_DEVICES", "")
        if ended is None or not self._applied or named != ",".join(self._applied):
            return
        # who, as its reader reads it: "released by you", not the account's name (newuser33 n4: "released by root")
        why = lease_end_words(ended) or str(ended.get("state") or "ended")
        head = f"This kernel's lease {ended.get('id')} ended ({why}); CUDA_VISIBLE_DEVICES named {named}"
        self._applied = ()
        state = cuda_state()
        if state.initialized:  # a revoked lease still draining keeps them from others until this kernel lets go
            given = ("no other work is given them until it lets go" if not is_terminal(ended)
                     else "which other work can now be given")
            self._warn(f"warning: {head}, and CUDA is already initialised here ({'; '.join(state.initialized_by)}): "
                       f"it may still use those GPUs, {given}. Restart the kernel, then %gpu request.")
            return
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        os.environ[GPU_MILLI_ENV] = "0"
        self._print(f"{head}; it is now '' (no GPU) so nothing here uses GPUs it no longer holds.")

    def _idle_warning(self, lease_id: str, ends_at: datetime | None = None) -> tuple[str, bool]:
        """The idle note of ``lease_id`` in words (``GET idle``), or "" — also when its idle deadline is at or
        after ``ends_at``, its time-limit end (the rule of every surface, new user 24, N2) — and whether it is
        a warning: the lease is in its warning window (stage ``warned``) or reported idle, not merely idle
        since its grant (newuser40 n7: "Warning: idle since …" right at grant, before anything was done)."""
        try:
            entries = self.client.idle_candidates()
        except SchedError:
            return "", False
        return next(((note, e.get("stage") != "idle") for e in entries if str(e.get("job_id")) == lease_id
                     and (note := idle_note(e, _now(), magic=True, ends_at=ends_at))), ("", False))

    def _samples(self, job_id: str | None) -> list[dict[str, Any]]:
        """Latest telemetry samples, or [] when this server offers no telemetry route."""
        try:
            return samples_from(self.client.telemetry(job=job_id))
        except SchedError:
            return []

    def _gpu_inventory(self, cmd: GpuCommand, *, fresh: bool) -> bool:
        """Case 015 and the ``--model`` check before a request: False (after printing the case 015
        message) when there are no GPUs; raises ValidationError for a model that exists nowhere.

        The GPU models seen are remembered (not the whole inventory: megabytes on a large cluster)
        and a later request checks against them without a ``GET inventory`` round trip (issue 17:
        lease p50 <= 20 ms). A remembered answer only ever lets a request through: a model missing
        from it, or a request the server refuses, is checked again against a fresh inventory."""
        if fresh or self._gpus_seen is None:
            inventory = self.client.inventory()
            message = no_gpus_message(inventory)
            models = {str(g.get("model", "")) for g in inventory.get("gpus", ()) if isinstance(g, Mapping)}
            self._gpus_seen = None if message else {"gpus": [{"model": model} for model in sorted(models)]}
            if message:  # case 015: say so and allocate nothing
                self._print(message)
                return False
        try:
            check_model(cmd.options.model, self._gpus_seen or {})
        except ValidationError:
            if fresh:
                raise
            return self._gpu_inventory(cmd, fresh=True)
        return True

    def _gpu_request(self, cmd: GpuCommand) -> None:
        client = self.client
        remembered = self._gpus_seen is not None
        # a wait for GPUs rides a restart of the server out from its first request on (the CLI's waits since
        # 005cc37d): the looks before the request, and the request itself while it surely never arrived
        poll = RideOut(self._print, doing="still asking for GPUs", stop=f"{INTERRUPT}; nothing is requested yet") \
            if cmd.wait else None
        try:
            if not (poll or _at_once)(lambda: self._gpu_inventory(cmd, fresh=False)):
                return
            current = (poll or _at_once)(lambda: self._my_lease(trust_none=True))
        except KeyboardInterrupt:
            raise MagicError(self._interrupted([])) from None
        if current is not None:
            raise MagicError(f"this kernel already has lease {current['id']} ({current['state']}); "
                             "run %gpu release first")
        state = cuda_state()
        if state.initialized:  # case 017: refuse before anything is charged
            raise MagicError(self._cuda_refusal(state, None))
        # the server answers once the engine decided (usually within milliseconds), or after a
        # short wait with the lease still pending: then _wait_for_grant shows its progress
        first_wait_s = min(_FIRST_WAIT_S, cmd.options.timeout_s or _FIRST_WAIT_S) if cmd.wait else 0.0
        asked = time.monotonic()
        self._kernel_holds_none = False  # from here on it may hold one, whatever the answer says
        try:
            # JPY_SESSION_NAME: the notebook's path, which jupyter_server gives the kernels it starts
            body = lease_body(cmd.options, kernel_id=client.kernel_id, notebook=os.environ.get("JPY_SESSION_NAME"),
                              parent_job_id=os.environ.get("JUPYTER_SCHED_JOB_ID"))
            try:
                lease = self._send_lease(poll, lambda: client.request_lease(body, wait_s=first_wait_s))
            except ValidationError as exc:
                if exc.field not in ("parent_job_id", "released_at_exit", "asking_process"):
                    raise
                # parent_job_id: a job of another scheduler (its id in our environment), which this one
                # cannot end the lease with; released_at_exit / asking_process: a server older than new user 16's
                # N1 fix / newuser41's N1 fix.
                # Either way the at-exit release below still gives the GPUs back
                drop = {exc.field, "asking_process"} if exc.field == "released_at_exit" else {exc.field}
                lease = client.request_lease({k: v for k, v in body.items() if k not in drop}, wait_s=first_wait_s)
        except SchedError as err:
            if remembered and not self._gpu_inventory(cmd, fresh=True):  # the GPUs went away meanwhile
                return
            # `%gpu request 2`: N, no --gpus (new user 11, N3)
            raise MagicError(_one_line(err, surface=GPU_REQUEST_N if cmd.count_given else GPU_REQUEST)) from None
        except KeyboardInterrupt:
            raise MagicError(self._interrupted(self._withdraw_unanswered())) from None
        self.lease = lease
        self._say_warnings(lease)
        if not client.kernel_id and not self._atexit_registered:
            # a kernel the server did not start (runtime-file discovery, a notebook job's headless
            # kernel): the server cannot see it exit, so give the GPUs back ourselves — at exit,
            # and when stopped (cancel, time limit, preemption: SIGTERM, which skips atexit)
            atexit.register(self._release_at_exit)
            self._release_on_sigterm()
            self._atexit_registered = True
        if not client.kernel_id and not is_terminal(lease):  # heard from while it runs, wherever it runs
            self._stop_keeper()
            self._keeper = keep_lease(client, str(lease["id"]))
        if not is_granted(lease) and not is_terminal(lease):
            if not cmd.wait:
                self._print(job_line(lease, _now()))
                self._print("Not waiting. Run %gpu status later: it sets CUDA_VISIBLE_DEVICES once granted.")
                return
            lease = self._wait_for_grant(lease, cmd.options.timeout_s, started=asked, poll=poll)
        if is_terminal(lease):
            self.lease = None
            raise MagicError(job_line(lease, _now()))
        self._apply(lease)

    def _send_lease(self, poll: RideOut | None, send: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """``POST leases`` through ``poll``'s restart (None: sent once): sent again only while the failure proves it
        never reached the scheduler (:func:`~jupyter_sched.client.ride_out.never_sent`: its own ``stopping``, a
        refused connection, the hub proxy's 503), for at most ``SUBMIT_RIDE_OUT_S`` — never twice."""
        if poll is None:
            return send()
        kept = poll.retry_if, poll.limit_s, poll.stop
        poll.retry_if, poll.limit_s, poll.stop = never_sent, SUBMIT_RIDE_OUT_S, f"{INTERRUPT} and withdraw the request"
        try:
            return poll(send)
        finally:
            poll.retry_if, poll.limit_s, poll.stop = kept

    def _wait_for_grant(self, lease: dict[str, Any], timeout_s: float | None, *, started: float,
                        poll: RideOut | None = None) -> dict[str, Any]:
        """Wait (``timeout_s`` counted from ``started``, a ``time.monotonic()``) until ``lease`` is
        granted or ended; show its progress meanwhile; withdraw it on timeout or interrupt. ``poll``: the
        request's own ride-out (its notice said once per request), else a new one."""
        lease_id = str(lease["id"])
        progress: Progress | None = None
        delay = 0.025
        # a restart of the server is ridden out, said once (hubadmin23 A18); up to the request's own timeout
        poll = poll or RideOut(self._print, doing="", stop="")
        poll.doing = f"still waiting for GPUs for lease request {lease_id}"
        poll.stop = f"{INTERRUPT} waiting and withdraw the request"
        deadline = None if timeout_s is None else started + timeout_s
        try:
            while not is_granted(lease) and not is_terminal(lease):
                waited = time.monotonic() - started
                if timeout_s is not None and waited >= timeout_s:
                    self._withdraw(lease_id, why="timeout", timeout_s=timeout_s)
                    if progress is not None:  # the bar ends at the time-out, not at its last frame's second
                        progress.finish(timeout_s, "warning")  # as far as it got (newuser33 n3)
                    raise MagicError(_timed_out(lease, lease_id, timeout_s))
                frame = within_timeout(wait_progress(lease, _now()), waited, timeout_s)  # newuser26 n1
                if progress is None:
                    progress = Progress(f"lease {lease_id}")
                progress.show(frame, waited)
                # long poll: the server answers once it is decided, or after a second (the
                # progress line's refresh) with it still pending
                step = _POLL_WAIT_S if timeout_s is None else max(0.01, min(_POLL_WAIT_S, timeout_s - waited))
                asked = time.monotonic()
                try:
                    lease = poll(partial(self.client.lease, lease_id, wait_s=step), deadline=deadline)
                except SchedError:
                    if deadline is not None and time.monotonic() >= deadline:  # the timeout passed while it was down
                        self._withdraw(lease_id, why="timeout", timeout_s=timeout_s)
                    raise
                if not is_granted(lease) and not is_terminal(lease) and time.monotonic() - asked < step / 2:
                    time.sleep(delay)  # a server without long polls answered at once: poll, backing off
                    delay = min(delay * 1.5, 1.0)
        except KeyboardInterrupt:
            raise MagicError(self._interrupted([lease_id] if self._withdraw(lease_id, why="interrupt") else None)) \
                from None
        if progress is not None:
            progress.finish(time.monotonic() - started, wait_outcome(is_granted(lease)))
        return lease

    def _withdraw_unanswered(self) -> list[str] | None:
        """Interrupted while ``POST leases`` waited: withdraw the lease it may have created (this
        kernel's live one; without a kernel id, the newest pending one), since its id never came.
        Returns the ids withdrawn, None when they could not be looked up."""
        try:
            live = [lease for lease in self.client.leases(state=_LIVE_STATES) if not is_terminal(lease)]
        except SchedError as err:
            self._warn(f"could not look up the lease request to withdraw it: {_one_line(err)}")
            return None
        kernel_id = self.client.kernel_id
        mine = ([lease for lease in live if lease.get("kernel_id") == kernel_id] if kernel_id else
                sorted((lease for lease in live if lease.get("state") == "pending"),
                       key=lambda lease: str(lease.get("submitted_at") or ""))[-1:])
        withdrawn = [str(lease["id"]) for lease in mine if self._withdraw(str(lease["id"]), why="interrupt")]
        return withdrawn if len(withdrawn) == len(mine) else None

    @staticmethod
    def _interrupted(withdrawn: list[str] | None) -> str:
        """What an interrupted ``%gpu request`` left behind, said only once it is so (issue 20: it
        said "withdrawn" while the request stayed pending)."""
        if withdrawn:
            return f"interrupted: lease request {', '.join(withdrawn)} withdrawn; nothing stays pending"
        if withdrawn is not None:
            return "interrupted before a lease request was made; nothing is pending"
        return "interrupted; a lease request may still be pending: %gpu status shows it, %gpu release withdraws it"

    def _withdraw(self, lease_id: str, *, why: str, timeout_s: float | None = None) -> bool:
        """Release or withdraw ``lease_id`` (``why``: what its record says ended it, see
        :meth:`SchedClient.release_lease`); False (and a warning) when the server refused."""
        try:
            self.client.release_lease(lease_id, why=why, timeout_s=timeout_s)
        except ConflictError:
            pass  # it ended meanwhile: nothing left to withdraw
        except SchedError as err:
            self._warn(f"could not withdraw lease {lease_id}: {_one_line(err)}. %gpu release tries again.")
            return False
        self.lease = None
        self._stop_keeper()
        return True

    @staticmethod
    def _cuda_refusal(state: CudaState, lease_id: str | None) -> str:
        tail = f" Lease {lease_id} was released, nothing stays charged." if lease_id else " Nothing was requested."
        # case 017's sentence whole, then the evidence as a sentence of its own (new user 20, N27: "(evidence …)"
        # after the full stop)
        return f"{CUDA_ALREADY_INITIALISED} Evidence: {'; '.join(state.initialized_by)}.{tail}"

    def _apply(self, lease: dict[str, Any]) -> None:
        """Set CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER for the granted GPUs (cases 016, 017)."""
        uuids = granted_uuids(lease)
        state = cuda_state()
        if state.initialized:
            self._withdraw(str(lease["id"]), why="release")
            raise MagicError(self._cuda_refusal(state, str(lease["id"])))
        # UUIDs (not indices) with PCI_BUS_ID order: nvidia-smi and CUDA disagree on index order (case 016)
        os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
        os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(uuids)
        milli = granted_milli(lease)
        os.environ[GPU_MILLI_ENV] = str(milli)  # as a job reads its share (executors.local; new user 19, N18)
        self._applied = uuids
        self.lease = lease
        self._checked_at = time.monotonic()
        events = getattr(self.shell, "events", None)
        if not self._watching and events is not None:
            events.register("pre_run_cell", self._before_cell)
            self._watching = True
        share = f" — {SHARED_GPU_NOTE}" if milli < 1000 else ""
        self._print(f"Allocated {granted_words(lease)} (lease {lease['id']}){share}; "
                    f"CUDA_VISIBLE_DEVICES={os.environ['CUDA_VISIBLE_DEVICES']} and {GPU_MILLI_ENV}={milli} in this kernel")
        simulated = bool(lease.get("simulated")) or any(u.startswith("GPU-sim") for u in uuids)
        if simulated:
            self._print("These GPUs are simulated (no NVIDIA driver here): the UUIDs label the allocation; "
                        "CUDA sees no device.")
        if state.imported:
            self._verify(lease, state, simulated=simulated)

    def _verify(self, lease: dict[str, Any], state: CudaState, *, simulated: bool) -> None:
        """A framework was imported before %gpu (case 017 nb2): warn, then check what torch sees."""
        frameworks = ", ".join(state.imported)
        self._warn(f"warning: {frameworks} was imported before %gpu; some versions read CUDA_VISIBLE_DEVICES "
                   "at import (pytorch#80876), so the selection may not take effect.")
        if simulated:
            self._warn("warning: simulated GPUs cannot be verified; on a GPU host run %gpu before the import.")
            return
        torch = sys.modules.get("torch")
        if torch is None:
            self._warn("warning: cannot verify without torch; restart the kernel and run %gpu first to be sure.")
            return
        uuids = granted_uuids(lease)
        try:
            seen = int(torch.cuda.device_count())
        except Exception as exc:
            seen, why = -1, f"{type(exc).__name__}: {exc}"
        else:
            why = f"torch sees {seen} device(s)"
        if seen != len(uuids):
            self._withdraw(str(lease["id"]), why="release")
            raise MagicError(f"GPU selection did not take effect: {why}, expected {len(uuids)}. "
                             f"Lease {lease['id']} released. Restart the kernel and run %gpu before importing "
                             f"{frameworks}.")
        self._print(f"verified: {', '.join(uuids)} (torch sees {seen} device(s))")

    def _gpu_release(self) -> None:
        lease = self._my_lease()
        if lease is None:
            self._print("This kernel holds no lease; nothing to release.")
            self._forget_ended()
            return
        released = self.client.release_lease(str(lease["id"]))
        self._stop_keeper()
        self._released = str(lease["id"])  # %gpu says it while a process of this kernel still holds its GPU
        self.lease = None
        self._kernel_holds_none = True  # it held this one (found above) and gave it back
        self._print(_capital(cancel_outcome(lease, released if released else {**lease, "state": "cancelled"},
                                            now=_now())) + ".")
        visible = [part.strip() for part in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if part.strip()]
        names_its_gpus = bool(set(visible) & set(granted_uuids(lease)))
        if self._applied or names_its_gpus:
            # hide all GPUs rather than unset: unset, CUDA would see every GPU of the host. Also when the
            # server set them at a kernel restart (new user 7, F19: they stayed, and the GPU went to the
            # next job while this kernel still pointed at it)
            os.environ["CUDA_VISIBLE_DEVICES"] = ""
            os.environ[GPU_MILLI_ENV] = "0"  # no GPU, no share (as a job's, new user 11, N8)
            self._applied = ()
            self._print(RELEASED_CUDA)
        else:
            self._print(f"CUDA_VISIBLE_DEVICES is {os.environ.get('CUDA_VISIBLE_DEVICES', '(unset)')!r} in this "
                        "kernel, as before: this lease had not set it.")

    def _draining(self) -> str:
        """:func:`~.render.draining_line` of the lease this kernel released, while the engine still
        holds its GPU for a process of it (red team 18, R6: its context outlived ``%gpu release``); ""
        (and forgotten) once it ended or cannot be read."""
        if self._released is None:
            return ""
        try:
            line = draining_line(self.client.lease(self._released))
        except SchedError:
            line = ""
        if not line:
            self._released = None
        return line

    def _help(self, magic: str, topic: str) -> None:
        """Print the help ``--help`` asked for (:func:`~.parsing.help_text` of the magic's docstring)."""
        doc = getattr(type(self), magic).__doc__ or ""
        self._print(help_text(doc, f"%{magic}", topic))

    def _stop_keeper(self) -> None:
        if self._keeper is not None:
            self._keeper.stop()
            self._keeper = None

    def _release_at_exit(self) -> None:
        self._stop_keeper()
        if self.lease is not None and self._client is not None:
            lease, self.lease = self.lease, None
            try:
                self._client.release_lease(str(lease["id"]), why="kernel_exit")
            except SchedError:
                pass

    def _release_on_sigterm(self) -> None:
        """Release this kernel's lease when the process is told to stop (SIGTERM), then stop as the
        signal would have (the handler found there runs next). New user 5: a cancelled notebook
        job's kernel was stopped without running atexit, and its lease stayed "held for no kernel"
        until idle reclaim; a failed one (a normal exit) released it. Main thread only (Python
        delivers signals there; the magics run there)."""
        import signal
        import threading

        if threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(signal.SIGTERM)

        def on_sigterm(signum: int, frame: Any) -> None:
            self._release_at_exit()
            if callable(previous):
                previous(signum, frame)
            elif previous != signal.SIG_IGN:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                os.kill(os.getpid(), signal.SIGTERM)

        signal.signal(signal.SIGTERM, on_sigterm)

    def _gpu_keepalive(self) -> None:
        lease = self._my_lease()
        if lease is None:
            raise MagicError("this kernel holds no lease; nothing to keep alive (%gpu request 1 first)")
        answer = self.client.keepalive(str(lease["id"]))
        notice = answer.get("notice")
        if isinstance(notice, str) and notice:  # its owner left the lease's team: nothing extended (red team 24, R6)
            from ..model.periods import said_to_reader

            self._print(f"Lease {lease['id']}: not kept alive — {said_to_reader(notice)}.")  # its clocks: this zone (n30)
            return
        # what it bought, not the lease's own message ("GPUs bound to the kernel" read as the answer)
        until = wire_time(answer.get("keepalive_until"))
        when = f" until {clock_text(until, datetime.now(timezone.utc))}" if until is not None else ""
        self._print(f"Lease {lease['id']}: keepalive recorded; its GPUs are kept{when} even while idle "
                    "(its one keepalive: after that, using the GPUs keeps them).")

    def _gpu_watch(self, cmd: GpuCommand) -> None:
        features = self.client.config().get("features") or {}
        if not features.get("telemetry"):
            self._print("This server offers no live GPU telemetry yet (features.telemetry is false in "
                        "GET api/sched/config), so there is nothing to chart.")
            return
        lease = self._my_lease()
        uuids = list(granted_uuids(lease)) if lease else [str(g["uuid"]) for g in self.client.inventory()["gpus"]]
        if not uuids:
            self._print(no_gpus_message(self.client.inventory()) or "No GPUs to watch.")
            return
        title = f"lease {lease['id']}" if lease else "all GPUs"
        figure = LiveFigure(uuids, f"{title} — updating every {cmd.interval_s:g}s for {cmd.seconds:g}s")
        history: dict[str, list[dict[str, Any]]] = {u: [] for u in uuids}
        deadline = time.monotonic() + cmd.seconds
        got_any = False
        try:
            while True:
                samples = self._samples(str(lease["id"]) if lease else None)
                t = _now()
                for sample in samples:
                    if sample["gpu_uuid"] in history:
                        got_any = True
                        history[sample["gpu_uuid"]].append({"t": t, **sample})
                figure.update(history)
                if time.monotonic() + cmd.interval_s > deadline:
                    break
                time.sleep(cmd.interval_s)
        except KeyboardInterrupt:
            pass
        if not got_any:
            self._print("No telemetry samples arrived for these GPUs during the watch.")

    # ---- %schedule -----------------------------------------------------------------------
    @line_cell_magic
    def schedule(self, line: str = "", cell: str | None = None) -> Any:
        """Submit and manage jobs: a cell, a script, a notebook or an inference service.

        Usage::

          %%schedule [--gpus N] [--model M] [--mem-per-gpu 20GiB] [--cpu C] [--memory 64GiB] [--nvlink]
                     [--no-preempt] [--workdir DIR] [--name NAME]
                     [--priority high|normal|low] [--time-limit 2h] [--team TEAM] [--profile NAME]
                     [--env NAME[=VALUE] ...] (an environment variable of the job; NAME alone: this kernel's; repeatable)
              <cell body>           run the cell body as a job with this kernel's Python
                                    (sys.executable) in the current directory (the notebook's),
                                    which is first on its sys.path as in the kernel (import a
                                    module beside the notebook); the body is saved as
                                    .jupyter_sched/cells/<hash>.py there. Variables of this
                                    kernel are NOT shared with the job: pass data through files.
          %schedule run SCRIPT [ARGS...] [options]     run a script (use -- before script
                                                       arguments that clash with the options)
          %schedule notebook NOTEBOOK.ipynb [-p NAME=VALUE ...] [options]
                                    run a notebook headless, in its own folder (unless --workdir);
                                    the executed copy is kept. -p gives
                                    the cell tagged "parameters" new values (papermill's convention;
                                    JSON where it parses: -p days=3 -p region=eu); repeatable
          %schedule serve APP [ARGS...] --port P [options]
                                    an inference service: runs until cancelled, restarted on
                                    failure; the app gets its port as $PORT (listen there);
                                    shows its URL (direct and through the Jupyter proxy)
          %schedule queue [--mine] [--all | --limit N]   the queue as a DataFrame (position, user,
                                               GPUs, reason, ETA; --all: every pending job;
                                               --limit: the first N pending)
          %schedule queue --summary  one line per team: GPUs running of its guarantee and
                                               limit, borrowed, pending, oldest wait
          %schedule jobs [--state S] [--limit N] my jobs as a DataFrame, newest first
          %schedule status          server, you, GPUs, your work and quota (as jupyter-sched status)
          %schedule status JOB      one status line
          %schedule logs JOB [-f] [-n N]   print the log (-n: its last N lines); -f follows it
                                    until the job ends (interrupt to stop)
          %schedule logs JOB --notebook [-o FILE]
                                    a notebook job's executed notebook (outputs, the failed
                                    cell's error), saved here as "NOTEBOOK (executed JOB).ipynb"
                                    (or -o FILE; -o - prints it); never over another file
          %schedule wait JOB [--for 30m] [--no-raise-error]
                                    wait with a progress line until the job ends; one that
                                    ends other than succeeded raises, so a Run All stops
                                    there (--no-raise-error: only print it); --for: at most
                                    that long, then print "still running after 30m: …"
                                    ("still pending …" if not started) and go on
                                    (--timeout: the same)
          %schedule cancel JOB [JOB ...]
          %schedule cancel --mine|--all [--state pending|running] [--yes]
                                    all my jobs (--all: everyone's, admins); lists them and
                                    cancels only with --yes (leases: %gpu release)
          %schedule hold JOB [JOB ...]         a pending job stays queued but never starts
          %schedule release JOB [JOB ...]      until released (an admin's hold: by an admin)
          %schedule update JOB [--time-limit 4h|+1h|-30m] [--priority low]
                                    a new time limit (yours: shorter, or longer while it waits)
                                    or class (while it waits)
          %schedule top JOB [--undo]           admins: first in its class
          %schedule dryrun [options]           would it fit, where and when — without enqueuing
          %schedule profiles        the admin-defined request templates (use with --profile NAME)
          %schedule usage           my GPU-hours of the last 7 days, as `jupyter-sched usage` (a DataFrame)
          %schedule define NOTEBOOK.ipynb|SCRIPT.py --cron "0 12 * * 1-5" [--tz Europe/Berlin]
                    [-p NAME=VALUE ...] [--missed run_once|skip] [--paused] [options]
                    [--overlap skip_waiting|skip_unfinished|allow]
                                    save a job definition: each firing of the cron schedule (in
                                    that time zone) runs it as a job, with these parameters; a
                                    firing while its previous run still waits is skipped (--overlap)
          %schedule define list | show DEF | runs DEF | run DEF [-p N=V] | edit DEF [...]
          %schedule define pause DEF | resume DEF | delete DEF [--cancel-runs]

        Submissions return the job id, so ``job = %schedule run train.py --gpus 1`` then
        ``%schedule logs {job} -f`` works. As in a shell, a word starting with ``#`` begins a comment
        (``%schedule queue   # why it waits``); quote it to pass it (``--name '#3'``).

        Examples::

          %%schedule --gpus 2 --model A100 --name bert-ft --priority low --time-limit 2h
          import train; train.main()

          job = %schedule run train.py --epochs 3 --gpus 1
          %schedule logs {job} -f
          %schedule notebook analysis.ipynb --gpus 1 -p days=3
          %schedule serve app.py --gpus 1 --port 8000
          %schedule dryrun --gpus 8 --model H100
          %schedule cancel --mine
          %schedule define report.ipynb --cron "0 12 * * 1-5" --tz Europe/Berlin -p region=eu --gpus 1
        """
        with _errors():
            if cell is not None:
                with _parsing():
                    cmd = parse_schedule_line(line, cell=True)
                if cmd.action == "help":  # %%schedule --help: the help, not a job
                    self._help("schedule", cmd.topic)
                    return None
                return self._submit_cell(cmd, cell)
            words = line.split(None, 1)
            if words and words[0] == "define":
                from .define import run_define

                tokens = _split(words[1] if len(words) > 1 else "", "%schedule define")
                if any(t in HELP_FLAGS for t in tokens):  # no script arguments here: --help is ours
                    self._help("schedule", "define")
                    return None
                return run_define(lambda req: self.client.call(req), tokens, resolve=self._existing, say=self._print,
                                  definitions=lambda all_users: self.client.definitions(all_users=all_users))
            with _parsing():
                cmd = parse_schedule_line(line)
            if cmd.action == "help":
                self._help("schedule", cmd.topic)
                return None
            handler = getattr(self, f"_schedule_{cmd.action}")
            return handler(cmd)

    def _mine(self) -> bool:
        """Whether a job submitted here runs on this machine (not through a hub), so it gets this kernel's
        PATH and Python environment (:mod:`..client.submitter_env`; newuser27 N2). Asked once."""
        if self._sends_mine is None:
            from ..client.submitter_env import runs_here

            here, mode = runs_here(self.client)
            self._sends_mine = here and mode != "hub"
        return self._sends_mine

    def _submit(self, options: JobOptions, body: Mapping[str, Any],
                note: str | Callable[[Mapping[str, Any]], str | None] | None = None) -> str:
        """Submit ``body``; its line, the server's notes and ``note`` (or what it makes of the answer: a note
        the server's ``warnings`` may already hold, said once — newuser39 n3) under it. The job's id."""
        env_note = None
        if self._mine():
            from ..client.submitter_env import submitter_env, submitter_note

            sent, too_long = submitter_env(os.environ, body.get("env") or {})
            body = {**body, "env": {**sent, **(body.get("env") or {})}} if sent else body
            if said := submitter_note(sent, too_long, here="this kernel's"):
                env_note = f"{said[:1].upper()}{said[1:]}."
        # a restart is ridden out only while the submit surely never arrived: never sent twice (hubadmin24 B18)
        # and a send whose answer was lost is looked for once the service answers, sent again only if absent (N8)
        job, how = submit_through_restart(lambda key: self.client.submit_keyed(body, key),
                                          lambda n: self.client.jobs(limit=n), body, self._print,
                                          stop=f"{INTERRUPT}, nothing is submitted", look="%schedule jobs",
                                          keys_honoured=self.client.submit_keys_honoured)
        self._print("Submitted " + job_line(job, _now()))
        if how == ARRIVED:
            self._print("Submitted after the service restarted (its answer was lost in the restart; the job had "
                        "arrived, so it was not sent twice).")
        elif how == SENT_AGAIN:
            self._print("The scheduler did not get it before the restart; sent again once it answered.")
        if options.time_limit_note:  # `--time-limit 5` is 5 seconds, as the CLI says (verify22 V3)
            self._print(f"Note: {options.time_limit_note}")
        self._say_warnings(job)
        for line in (note(job) if callable(note) else note, env_note):
            if line:
                self._print(line)
        return str(job["id"])

    def _say_warnings(self, answer: Mapping[str, Any]) -> None:
        """The server's notes on an accepted request, one line each, as the CLI prints them (new user 8,
        N1: ``--env CUDA_VISIBLE_DEVICES=0`` is not used, and only the CLI and REST said so)."""
        from ..model.periods import said_to_reader

        for warning in answer.get("warnings") or ():  # a day budget's "this UTC day": "today" on UTC (newuser30 n11)
            self._print(f"Note: {said_to_reader(str(warning))}")

    def _submit_cell(self, cmd: ScheduleCommand, cell: str) -> str:
        if not any(line.strip() and not line.lstrip().startswith("#") for line in cell.splitlines()):
            # an empty script ran and held a GPU for a cycle (new user 4)
            raise ValidationError("%%schedule: the cell is empty: nothing to run", field="cell",
                                  hint="write the code to run below the %%schedule line")
        source = cell if cell.endswith("\n") else cell + "\n"
        if wrong := content_problem("script", source.encode("utf-8", errors="replace"), "the cell"):
            # it runs with Python, not IPython: a `!ls` or `%time` line failed at its start (new user 14, N23)
            raise ValidationError(f"%%schedule: the cell is not a Python script: {wrong}", field="cell",
                                  hint="the cell runs as a Python file, not in IPython: shell (!…) and magic (%…) "
                                       "lines do not run there; use subprocess for a shell command")
        digest = hashlib.sha256(source.encode()).hexdigest()[:10]
        self._warn_kernel_names(source)
        if self._hub():
            body = self._hub_body(cmd, carried_script(f"cell-{digest}", source))
            body.setdefault("name", cmd.options.name or f"cell-{digest}")
            return self._submit(cmd.options, body, f"Runs this cell through the hub's scheduler with its job Python "
                                f"(where the hub's admins install packages), {_hub_folder(body.get('working_dir'))}; "
                                f"{self._unshared(cmd)}")
        cells = Path.cwd() / CELLS_DIR
        cells.mkdir(parents=True, exist_ok=True)
        ignore = cells.parent / ".gitignore"
        if not ignore.exists():  # as pytest's and mypy's caches do: no untracked folder in a checkout's git status
            ignore.write_text("# the scripts of %%schedule cells (jupyter_sched); not for version control\n*\n",
                              encoding="utf-8")
        self._warn_missing_imports(source)  # here only: through a hub the job runs the hub's job Python
        name = cmd.options.name or f"cell-{digest}"
        path = cells / f"{digest}.py"
        path.write_text(source, encoding="utf-8")
        # the kernel's folder first on the job's sys.path, not .jupyter_sched/cells (new user 26, N9)
        body = job_body(cmd.options, command=start_folder_argv(sys.executable, str(path)), working_dir=str(Path.cwd()))
        body.setdefault("name", name)
        return self._submit(cmd.options, body, f"Runs {path.name} with {sys.executable} in {body['working_dir']}; "
                            + self._unshared(cmd))

    def _warn_kernel_names(self, source: str) -> None:
        """Before the submit (and so before the GPU wait): the names the cell reads, never binds, and this kernel
        defines — the job will not have them (newuser34 N6: ``print(lr * 2)`` ended in NameError after the wait).
        Only a warning: a module the job imports may define them."""
        from .cellnames import kernel_names_warning, kernel_only_names

        shell = self.shell
        kernel = getattr(shell, "user_ns", None)
        if not isinstance(kernel, Mapping):
            return
        hidden = getattr(shell, "user_ns_hidden", None) or {}
        if said := kernel_names_warning(kernel_only_names(source, kernel, hidden)):
            self._warn(said)

    def _warn_missing_imports(self, source: str) -> None:
        """Before the submit: the modules the cell imports that this kernel cannot find — the job runs this kernel's
        Python in this folder, first on its ``sys.path`` as in the kernel, so it will not either (newuser36 n3).
        Looked up with :func:`importlib.util.find_spec` of top-level names only (nothing imported, at most
        :data:`~.cellnames.MAX_IMPORTS`); a name that cannot be looked up is not warned of."""
        from importlib.util import find_spec

        from .cellnames import cell_imports, missing_imports_warning

        here = Path.cwd()

        def missing(name: str) -> bool:
            if name in sys.modules or (here / f"{name}.py").exists() or (here / name).is_dir():
                return False  # the folder is the job's first on sys.path, whether or not this kernel has it on its own
            try:
                return find_spec(name) is None
            except (ImportError, ValueError):  # a finder's own trouble: no guess
                return False

        names = [name for name in cell_imports(source) if missing(name)]
        if said := missing_imports_warning(names, str(here), sys.executable):
            self._warn(said)

    _LEASE_ENV = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")
    """Set in the kernel by ``%gpu request``: the job gets its own GPUs' (never the kernel's)."""

    def _unshared(self, cmd: ScheduleCommand) -> str:
        """What of this kernel a cell's job does not get: its variables, and its environment as set since the
        magics loaded (``%env FOO=bar``, ``os.environ[...]``), by name — newuser26 N11: a ``%env`` key did
        not reach the job and the note named only the variables. Their values are never printed."""
        given = {name for name, _ in cmd.options.env}
        passed = SUBMITTER_VARIABLES if self._mine() else ()  # sent with the job (newuser27 N2)
        # the magics' own (JUPYTER_SCHED_GPU_MILLI of %gpu request) are not the user's (newuser27 n1)
        changed = sorted(name for name, value in os.environ.items() if self._environ_at_load.get(name) != value
                         and name not in given and name not in self._LEASE_ENV and name not in passed
                         and not name.startswith("JUPYTER_SCHED_"))
        said = ("this kernel's variables are not shared with it, nor its environment (%env): --env NAME passes one "
                "as set here, --env NAME=VALUE another value")
        if changed:
            shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
            said += f" (set in this kernel, not passed: {shown})"
        return said + "."

    @staticmethod
    def _existing(path: str, what: str) -> Path:
        resolved = Path(path).expanduser()
        if not resolved.is_absolute():
            resolved = Path.cwd() / resolved
        problem = file_problem(path, str(Path.cwd()))  # not a PermissionError traceback (new user 8, N7)
        if problem:  # the CLI's and the panel's words, "script", not the usage line's SCRIPT (newuser31 n15)
            message, hint = path_refusal(what, path, problem, what, "magics")
            raise MagicError(_usage_line(ValidationError(message, hint=hint)))
        if what in ("script", "notebook"):  # what it holds, by REST's and the CLI's rule (new user 14, N23)
            with open(resolved, "rb") as fh:
                head = fh.read(CHECKED_BYTES + 1)
            wrong = content_problem(what, head, str(resolved)) if len(head) <= CHECKED_BYTES else None
            if wrong is not None:
                message, hint = content_refusal(what, path, wrong)
                raise MagicError(_usage_line(ValidationError(message, hint=hint)))
        return resolved

    def _schedule_run(self, cmd: ScheduleCommand) -> str:
        script = self._existing(str(cmd.target), "script")
        if self._hub():
            body = self._hub_body(cmd, carried_script(script.name, _carried_text(script, "script"), cmd.args))
        else:
            body = job_body(cmd.options, command=[sys.executable, str(script), *cmd.args], working_dir=str(Path.cwd()))
        body.setdefault("name", file_name(script.stem))  # an id-shaped stem is no name (red41 R2)
        # which words behind our options went to the script, not to us (newuser37 n6: `--after J`, unsaid)
        return self._submit(cmd.options, body, passed_on_note("%schedule run", str(cmd.target), cmd.passed_on))

    def _schedule_notebook(self, cmd: ScheduleCommand) -> str:
        notebook = self._existing(str(cmd.target), "notebook")
        # it starts in its own folder, as its kernel would and a definition's run does (newuser26 N10)
        if self._hub():
            body = self._hub_body(cmd, carried_notebook(notebook, _carried_text(notebook, "notebook")),
                                  start=notebook.parent)
        else:
            body = job_body(cmd.options, notebook=str(notebook), working_dir=str(notebook.parent))
        body.setdefault("name", file_name(notebook.stem))  # an id-shaped stem is no name (red41 R2)
        if cmd.parameters:  # as a definition's run gets them (new user 14, N27)
            body["parameters"] = dict(cmd.parameters)
        job_id = self._submit(cmd.options, body, lambda job: _parameters_said(str(notebook), cmd.parameters,
                                                                              job.get("warnings")))
        self._print(f"The executed copy (with outputs) is kept: once it ends, open it from the panel (My work → "
                    f"{job_id} → Open notebook) or save it here with {SAVE_EXECUTED.format(job=job_id)}.")
        return job_id

    def _answered_by_another(self, port: int | None, job_id: str) -> bool:
        """Whether what ``http://127.0.0.1:PORT/`` reaches from this kernel now is not the job
        ``job_id``: the port is bound on this host (a real bind, as the server checks it) while the
        job has not started (the scheduler starts a service only once its port is free)."""
        from ..executors.bound_ports import port_bound  # psutil: only when a service is submitted

        return port is not None and port_bound(port) and self.client.job(job_id).get("state") != "running"

    def _port_holder(self, port: int | None, job_id: str) -> dict[str, Any] | None:
        """The caller's other job holding GPUs (or starting) that declares ``port``: what answers there now
        when it is not ``job_id`` (None: none of mine, so a process outside the scheduler, or another's)."""
        if port is None:
            return None
        mine = self.client.jobs(state="admitted,running", kind="inference")
        return next((job for job in mine if job.get("port") == port and job.get("id") != job_id), None)

    def _schedule_serve(self, cmd: ScheduleCommand) -> str:
        app = self._existing(str(cmd.target), "script")
        if self._hub():
            body = self._hub_body(cmd, carried_script(app.name, _carried_text(app, "script"), cmd.args),
                                  kind="inference", port=cmd.port)
        else:
            body = job_body(cmd.options, command=[sys.executable, str(app), *cmd.args], working_dir=str(Path.cwd()),
                            kind="inference", port=cmd.port)
        body.setdefault("name", file_name(app.stem))  # an id-shaped stem is no name (red41 R2)
        job_id = self._submit(cmd.options, body, passed_on_note("%schedule serve", str(cmd.target), cmd.passed_on))
        if self._answered_by_another(cmd.port, job_id):  # new user 19, N9: a link to someone else's server
            holder = self._port_holder(cmd.port, job_id)
            if holder is not None:  # my own service has it: no "outside the scheduler" (new user 24, N12)
                self._print(f"No URL yet: {holder.get('name') or holder['id']} ({holder['id']}) holds port {cmd.port}; "
                            f"this service starts when it ends — %schedule status {job_id} says when it is ready there.")
            else:
                self._print(f"No URL yet: port {cmd.port} answers now from a process outside the scheduler, not your "
                            f"app; %schedule status {job_id} says when the job has the port and is ready there.")
        else:
            self._print(f"URL from this kernel: http://127.0.0.1:{cmd.port}/")
            base = self.client.connection.url
            if importlib.util.find_spec("jupyter_server_proxy") is not None:
                self._print(f"URL from the browser (jupyter-server-proxy): {base}proxy/{cmd.port}/")
            else:
                self._print("No jupyter-server-proxy on this server: use the URL above from this machine "
                            "(pip install jupyter-server-proxy for a browser URL through Jupyter).")
        self._print(f"The app is given the port as $PORT (it must listen there); it is reported ready when the port "
                    f"answers: %schedule status {job_id}")
        return job_id

    def _schedule_queue(self, cmd: ScheduleCommand) -> Any:
        if cmd.summary:  # the CLI's table, from the same function (new user 25, n3)
            import argparse
            import types

            from ..cli.queue_summary import summary

            summary(self.client, argparse.Namespace(mine=cmd.mine, json=False, team=None, user=None),
                    types.SimpleNamespace(out=sys.stdout), None)
            return None
        rows = self.client.queue_all() if cmd.scope == "all" else self.client.queue(limit=cmd.limit)
        if cmd.mine:
            me = str(self.client.me().get("user") or "")
            rows = [row for row in rows if row.get("user") == me]
        if not rows:
            self._print("You have nothing pending or running." if cmd.mine else
                        "The queue is empty: nothing pending or running.")
            return None
        return queue_frame(rows, _now(), self._idle_notes(rows, lambda row: row.get("mine") is True))

    def _idle_notes(self, rows: list[dict[str, Any]], mine: Callable[[Mapping[str, Any]], bool]) -> dict[str, str]:
        """The idle clause of the reader's running work, as the CLI's ``queue`` and ``jobs`` say it (one ``GET
        idle``, only when some row of ``mine`` holds GPUs; race41: ``%schedule queue`` said none)."""
        from ..client.status import idle_notes

        holding = [row for row in rows if mine(row) and not is_terminal(row) and row.get("state") in (
            "admitted", "running")]
        return idle_notes(self.client, rows) if holding else {}

    def _schedule_jobs(self, cmd: ScheduleCommand) -> Any:
        query, keep = state_filter(cmd.state)  # "stopping": the lists' word; "released": ended leases (new user 9, N12; 17, N23)
        rows = [row for row in self.client.jobs(state=query) if keep(row)]
        if cmd.limit is not None:
            rows = rows[:cmd.limit]  # newest first, as the server lists them
        if not rows:
            self._print(f"You have no {cmd.state} jobs." if cmd.state else
                        "You have no jobs yet. Submit one with %%schedule or %schedule run SCRIPT.")
            return None
        return jobs_frame(rows, _now(), self._idle_notes(rows, lambda row: True))

    def _schedule_status(self, cmd: ScheduleCommand) -> None:
        if cmd.job_id is None:  # the summary, as `jupyter-sched status` prints it (new user 12, N4)
            from ..client.status import status_lines_of

            self._print("\n".join(status_lines_of(self.client)))
            return
        job = self.client.job(self._job_of(str(cmd.job_id), "status"))
        self._print(in_magic_words(job_line(job, _now())))
        self._say_notebook(job)

    def _say_notebook(self, job: Mapping[str, Any]) -> None:
        """Under an ended notebook job's line, how to open its executed notebook — where "cell 3 (In [4] in the
        executed notebook) raised …" sends the reader — in the CLI's words (session 40: the CLI's ``wait`` said
        it, ``%schedule wait`` / ``%schedule status JOB`` did not)."""
        from ..wording.executed import executed_notebook_hint

        if hint := executed_notebook_hint(job, save=SAVE_EXECUTED.format(job=job.get("id"))):
            self._print(f"{hint[:1].upper()}{hint[1:]}.")

    def _schedule_logs(self, cmd: ScheduleCommand) -> None:
        if cmd.notebook:  # the executed notebook, saved here (newuser41 n11): the CLI's code path
            return self._save_executed(cmd)
        said: set[tuple[str, str]] = set()  # the scheduler's notes for the log's readers, each shown once (N7)
        last = [""]  # the log's last text shown: a note starts on a line of its own

        def note(found: Mapping[str, Any]) -> None:
            said = printable_log(log_note_said(found))  # its clocks in this zone, as the log's (newuser41); as the CLI
            self._print(f"\n[{said}]" if last[0] and not last[0].endswith("\n") else f"[{said}]")
            last[0] = ""

        # -f: a restart of the server is ridden out from the first request on — the name lookup, the first read, the
        # look at a job with no output — the log read on from the last offset (hubadmin23 A18; the CLI's since 005cc37d)
        poll: Callable[[Callable[[], Any]], Any] = RideOut(
            lambda line: note({"text": line}), doing=f"still following {cmd.job_id}'s log",
            stop=f"{INTERRUPT} following; the job goes on") if cmd.follow else _at_once
        job_id = str(cmd.job_id)
        try:
            job_id = poll(lambda: self._job_of(job_id, "logs"))  # a name of mine is taken for its id
            self._show_log(job_id, cmd, poll, note, last, said)
        except KeyboardInterrupt:  # the cell stops here, as the user asked (newuser33 N5: the next cells ran)
            if not cmd.follow:
                raise
            self._print("")
            raise MagicError(stopped_by_interrupt("following", job_id)) from None

    def _save_executed(self, cmd: ScheduleCommand) -> None:
        """``%schedule logs JOB --notebook [-o FILE]``: :func:`~jupyter_sched.cli.executed.save_executed_copy`,
        the one code path of ``jupyter-sched logs JOB --notebook`` (its name, NAME_MAX bound and refusals), saved
        in this kernel's folder."""
        from ..cli.executed import save_executed_copy

        done = save_executed_copy(self.client, self._job_of(str(cmd.job_id), "logs"), cmd.output)
        if done.text is not None:
            sys.stdout.write(done.text)
        elif not done.ok:
            raise MagicError(f"%schedule logs: {done.said}")
        else:
            self._print(done.said)

    def _show_log(self, job_id: str, cmd: ScheduleCommand, poll: Callable[[Callable[[], Any]], Any],
                  note: Callable[[Mapping[str, Any]], None], last: list[str], said: set[tuple[str, str]]) -> None:
        """``%schedule logs``' reads of ``job_id``'s log, each through ``poll`` (``-f``: a restart ridden out)."""
        try:
            chunk = poll(lambda: self.client.logs(job_id))
        except NotFoundError as refused:
            try:
                poll(lambda: self.client.job(job_id))
            except NotFoundError:
                # not the caller's: the logs route's refusal ("you may read only your own jobs' logs", audited as
                # "read logs"), not the job read's "you may look into only your own jobs" (new user 14, N15)
                raise refused from None
            chunk = {"text": "", "finished": False, "next_offset": 0}  # nothing written yet (or a lease): said below
        text = str(chunk.get("text") or "")
        start = 0
        # a long log: its end is what matters (the traceback of a finished job), and megabytes in a
        # cell freeze the browser (new user 7, F14: the first 64 KB only, cut mid-line, said nowhere)
        long = bool(text) and int(chunk.get("next_offset") or 0) >= LOG_TAIL_BYTES - 3  # (a character is not split)
        last[0] = text
        if not cmd.follow or chunk.get("finished"):
            written = bool(text)
            if long or cmd.tail is not None:
                text, _ = poll(lambda: self._log_tail(job_id, chunk, cmd.tail))
            # the scheduler's lines' clocks: this zone (newuser41 n2); its steps: the magic's (n11)
            sys.stdout.write(log_shown(text))
            last[0] = text
            if not written:
                poll(lambda: self._no_output(job_id, following=False))
            elif not chunk.get("finished"):
                self._print(f"[log continues: %schedule logs {job_id} -f to follow]")
                last[0] = ""
            for found in new_notes(chunk, said):
                note(found)
            return
        if poll(lambda: self._no_output(job_id, following=True)) == "lease":
            return
        last[0] = ""
        if long or cmd.tail is not None:
            tail, start = poll(lambda: self._log_tail(job_id, chunk, cmd.tail))
            sys.stdout.write(log_shown(tail))
            last[0] = tail
        followed = FollowedLine(terminal=False)  # the CLI's followed escaping; a cell is no terminal: no redraws
        for text in self.client.follow_logs(job_id, offset=start, on_note=note, noted=said, through=poll):
            shown = log_clocks_said(text, line_start=not last[0] or last[0].endswith("\n"))
            sys.stdout.write(log_in_magic_words(followed.shown(shown)))
            sys.stdout.flush()
            last[0] = text
        ended = poll(lambda: self.client.job(job_id))
        self._print(job_line(ended, _now(), log_shown=True))  # its lines were just shown (N20)

    def _log_end(self, job_id: str, known: int) -> int:
        """The log's size in bytes now, found with one-byte reads (the log route has no size): double
        past ``known`` (a byte offset the log reaches) until a read comes back empty, then halve."""
        def there(offset: int) -> bool:
            return bool(self.client.logs(job_id, offset=offset, limit=1).get("text"))

        low, step = known, LOG_TAIL_BYTES
        while there(low + step - 1):
            low, step = low + step, step * 2
        high = low + step - 1  # low <= size <= high: there(low - 1) held (or low == known), there(high) did not
        while low < high:
            middle = (low + high) // 2
            if there(middle):
                low = middle + 1
            else:
                high = middle
        return low

    def _log_tail(self, job_id: str, first: Mapping[str, Any], asked: int | None = None) -> tuple[str, int]:
        """The log's last :data:`LOG_TAIL_LINES` lines — ``asked`` lines (``-n N``), when given — within its last
        :data:`LOG_TAIL_BYTES` (after a line saying what was left out and where the whole log is, when
        something was: of ``asked`` lines, only when the bytes bound left some of them out), and the byte
        offset after them. The server reads them back from the log's end (``tail``, newuser35 N2: one request,
        where the log's end was found by ~2 log2(size) one-byte reads); from a server without ``tail``,
        the end is read from the size ``first`` (the answer of the read from byte 0) says."""
        count = LOG_TAIL_LINES if asked is None else asked
        try:
            chunk = self.client.logs(job_id, tail=count, limit=LOG_TAIL_BYTES)
            kept, skipped = str(chunk.get("text") or ""), int(chunk.get("offset") or 0)
        except ValidationError as refused:
            if refused.field != "tail":
                raise
            end = first.get("size") or self._log_end(job_id, int(first.get("next_offset") or 0))
            start = max(0, int(end) - LOG_TAIL_BYTES)
            chunk = self.client.logs(job_id, offset=start, limit=LOG_TAIL_BYTES)
            text = str(chunk.get("text") or "")
            whole_lines = text.partition("\n")[2] if start else text
            kept = "".join(whole_lines.splitlines(keepends=True)[-count:]) if count else ""
            skipped = start + len(text.encode()) - len(kept.encode())
        if asked is not None:
            shown = len(kept.splitlines())
            if skipped and shown < asked:  # the bytes bound cut them (a shorter log is shown whole)
                self._print(f"[… the last {asked} lines are more than a notebook shows: only the last {shown} "
                            f"({format_bytes(len(kept.encode()))}) are shown here: `jupyter-sched logs {job_id} -n "
                            f"{asked}` in a terminal prints them all]")
        elif skipped:
            # what is shown, said exactly ("the first 50 MB of the log are not shown" of a 50 MB log: new user 30, n7)
            self._print(f"[… only the last {format_bytes(len(kept.encode()))} of the "
                        f"{format_bytes(skipped + len(kept.encode()))} log are shown here: `jupyter-sched logs "
                        f"{job_id}` in a terminal prints it all (| less, > file)]")
        return kept, int(chunk.get("next_offset") or skipped + len(kept.encode()))

    def _no_output(self, job_id: str, *, following: bool) -> str:
        """Say why ``job_id``'s log is empty, as ``jupyter-sched logs`` does (issue 20: the magic
        printed nothing for a pending or a cancelled job); returns the job's kind or state word.
        While following, only what is worth saying before output arrives (not yet started, a lease)."""
        job = self.client.job(job_id)
        state, word = str(job.get("state") or ""), state_word(job)
        if job.get("kind") == "lease":
            self._print(f"{job_id} is a lease (GPUs held for a kernel): leases have no log; the kernel's output is "
                        "in its notebook.")
            return "lease"
        if state in ("pending", "preempted", "admitted"):
            then = "its output follows once it starts (interrupt to stop following)" if following else \
                f"%schedule logs {job_id} -f follows it once it starts"
            self._print(f"{job_id} is {word}: no output yet; {then}.")
        elif state == "running":
            if not following:
                self._print(f"{job_id} is running: no output yet; %schedule logs {job_id} -f follows it.")
        elif not following:
            self._print(f"{job_id} {word} with no output.")
        return word

    def _schedule_wait(self, cmd: ScheduleCommand) -> None:
        """Bar while it waits (the CLI's ``wait`` draws the same frames), then its final line, once:
        the bar ends as a short "waited" note, not as a copy of that line (issue 20). A ``--for`` that
        runs out prints ``still running after 3s: …`` (or ``still pending …``) and returns, as the CLI prints it (exit 5; new user 17,
        N12: a MagicError stopped a Run-All). A job that ended otherwise than succeeded (failed, cancelled…)
        raises :class:`MagicError` after its line, so a Run All stops there as the CLI's ``wait`` exits 4
        (new user 30, n6), unless ``--no-raise-error``."""
        started = time.monotonic()
        progress: Progress | None = None
        # a restart of the server is ridden out, said once (hubadmin23 A18: the CLI's wait did, this did not), from
        # the first request on: the name lookup and the first look (as the CLI's wait since 005cc37d)
        poll = RideOut(self._print, doing=f"still waiting for {cmd.job_id}",
                       stop=f"{INTERRUPT} waiting; the job goes on")
        deadline = None if cmd.timeout_s is None else started + cmd.timeout_s
        job_id = str(cmd.job_id)
        try:
            job_id = poll(lambda: self._job_of(job_id, "wait"), deadline=deadline)  # a name of mine (new user 11, N2)
            job = poll(lambda: self.client.job(job_id), deadline=deadline)
            while not is_terminal(job):
                waited = time.monotonic() - started
                if cmd.timeout_s is not None and waited >= cmd.timeout_s:
                    if progress is not None:  # its last frame's fill, orange: it goes on (newuser33 n3)
                        progress.finish(cmd.timeout_s, "warning")
                    self._print(still_going(job, cmd.timeout_s, _now()))
                    return
                if progress is None:
                    progress = Progress(job_head(job))  # "job j-7 (daily_report)", as its lines (new user 12, N1)
                progress.show(wait_progress(job, _now()), waited)
                time.sleep(0.5)
                job = poll(lambda: self.client.job(job_id), deadline=deadline)
        except KeyboardInterrupt:  # the cell stops here: a Run All never goes on past a wait the user stopped
            # (newuser33 N5: the rest of the cell and the next cells ran as if the job had succeeded)
            if progress is not None:
                progress.finish(time.monotonic() - started, "warning")
            raise MagicError(stopped_by_interrupt("waiting for", job_id)) from None
        if progress is not None:
            progress.finish(time.monotonic() - started, wait_outcome(job.get("state") == "succeeded" or lease_given_back(job)))
        self._print(job_line(job, _now()))
        self._say_notebook(job)
        if cmd.raise_error and job.get("state") != "succeeded" and not lease_given_back(job):
            # a notebook pipeline stops where its job failed, as `jupyter-sched wait` exits 4 (new user 30, n6);
            # a --for that runs out still returns (new user 17, N12): the job goes on
            raise MagicError(f"{job_id} ended {job.get('state')}, not succeeded (said above): the cells after this one "
                             f"do not run — `%schedule wait {cmd.job_id} --no-raise-error` only says it")

    def _schedule_hold(self, cmd: ScheduleCommand) -> None:
        """``%schedule hold|release|update|top JOB…`` (hubadmin25 B18): ``PATCH jobs/{id}`` with ``cmd.changes``
        for each job, one line each saying what changed, as the CLI says it; a refusal of one of several is one
        warning line and the others go on (as ``%schedule cancel``)."""
        ids = cmd.job_ids or (str(cmd.job_id),)
        for ref in ids:
            try:
                job = self.client.update_job(self._job_of(ref, cmd.action), **cmd.changes)
            except SchedError as err:
                if len(ids) == 1:
                    raise
                self._warn(f"{ref}: {_one_line(err)}")
                continue
            self._print(in_magic_words(changed_line(job, _now())))

    _schedule_release = _schedule_update = _schedule_top = _schedule_hold

    def _schedule_cancel(self, cmd: ScheduleCommand) -> None:
        if cmd.scope:
            self._cancel_many(cmd)
            return
        ids = cmd.job_ids or (str(cmd.job_id),)
        for job_id in ids:
            if len(ids) == 1:
                self._cancel_one(job_id)
                continue
            try:  # several ids: one line each, a refusal does not stop the others (as the CLI does)
                self._cancel_one(job_id)
            except SchedError as err:
                self._warn(f"{job_id}: {_one_line(err)}")

    def _cancel_one(self, ref: str) -> None:
        job_id = self._job_of(ref, "cancel")  # a name of mine, as logs (new user 11, N2): the live one
        if self.lease is not None and self.lease.get("id") == job_id:
            self._gpu_release()  # this kernel's own lease: also hide its GPUs from CUDA here, as %gpu release does
            return
        # one request, one audit record, named as what it is (new user 15, N8): no read first (another's id
        # wrote a "read job" refusal before the cancel's), and a lease id goes to DELETE leases/{id}, so an
        # attempt on another's lease is "cancel lease", field lease_id, as the same attempt by REST is
        lease = job_id.startswith("l-")
        try:
            after = self.client.release_lease(job_id) if lease else self.client.cancel(job_id)
        except ConflictError:  # it had ended: the news, not an error (new user 22: "is already released")
            ended = self.client.job(job_id)
            if str(ended.get("state")) not in TERMINAL_STATES:
                raise
            self._print(_capital(nothing_to_cancel(ended, _now())) + ".")
            return
        before = _was(after)
        grace = self.client.config().get("stop_grace_s") if after.get("state") in ("admitted", "running") else None
        self._print(_capital(cancel_outcome(before, after, grace_s=float(grace) if isinstance(grace, (int, float)) else None,
                                            now=_now())) + ".")
        if lease and after.get("kernel_id") and granted_uuids(after):  # another kernel's: what it is told, when (N17)
            self._print(_capital(KERNEL_TOLD) + ".")

    def _cancel_many(self, cmd: ScheduleCommand) -> None:
        """``--mine`` / ``--all`` (admins), as ``jupyter-sched cancel`` does them: the jobs (and leases
        bound to no kernel; never a kernel's) that are pending or running, or only ``--state`` ones. A cell cannot ask "are you
        sure?" (headless runs have no stdin), so without ``--yes`` it lists what it would cancel and
        cancels nothing — what the CLI does without a terminal. ``--yes`` is one ``POST jobs/cancel``
        (it sent one ``DELETE`` per job, page after page)."""
        everyone = cmd.scope == "all"
        if everyone:
            me = self.client.me()
            if not me.get("is_admin"):
                raise MagicError(f"only admins may cancel everyone's jobs ({me.get('user') or 'you'} is not an "
                                 "admin). %schedule cancel --mine cancels your own.")
        states = BULK_STATES.get(cmd.state or "", "pending,preempted,admitted,running")
        nothing = f"no {cmd.state or 'pending or running'} jobs"
        nothing = f"Nothing to cancel: {nothing}." if everyone else f"Nothing to cancel: you have {nothing}."
        if cmd.yes:  # one POST jobs/cancel: the server selects the jobs (kernels' leases left alone), as `cancel --yes`
            answer = self.client.cancel_jobs(mine=not everyone, all_users=everyone, states=states.split(","))
            self._print(_capital(bulk_cancel_answers([answer], _now())) + "." if answer.get("jobs") else nothing)
            return
        # one page (the server's largest); a kernel's lease is left out, one bound to no kernel is not (N4)
        jobs = [j for j in self.client.jobs(state=states, all_users=everyone, limit=_BULK_PAGE) if in_bulk_cancel(j)]
        if not jobs:
            self._print(nothing)
            return
        head, *listed = bulk_cancel_plan(jobs, everyone=everyone)
        flags = " ".join(f for f in ("--all" if everyone else "--mine",
                                     f"--state {cmd.state}" if cmd.state else "", "--yes") if f)
        leases = " Kernel leases are not included: %gpu release gives a kernel's GPUs back." if not everyone else ""
        if len(jobs) >= _BULK_PAGE:
            head = f"at least {head} (the first {_BULK_PAGE} listed)"
        self._print(f"Would cancel {head}:\n" + "\n".join(f"  {line}" for line in listed)
                    + f"\nNothing cancelled yet: run %schedule cancel {flags} to go ahead.{leases}")

    def _schedule_dryrun(self, cmd: ScheduleCommand) -> None:
        inventory = self.client.inventory()
        check_model(cmd.options.model, inventory)
        body = job_body(cmd.options, command=[sys.executable, "-c", "pass"], working_dir=str(Path.cwd()))
        try:
            answer = self.client.dryrun(body)
        except (QuotaError, UnschedulableError) as err:
            # "never, because of the quota" answers the question a dry run asks: not an error (issue 20)
            self._print(never_here(refusal_line(*refusal_text(err.message, err.hint, err.details, err.field))))
            return
        # the sentence only: returning the answer showed the whole wire dict as Out[] (issue 20);
        # the numbers stay a call away (jupyter_sched.client.connect().dryrun(...))
        self._print(dryrun_line(answer, _now()))
        if cmd.options.time_limit_note:  # the notes its submit would print, in the same words (newuser31 n13)
            self._print(f"Note: {cmd.options.time_limit_note}")
        self._say_warnings(answer)

    def _schedule_usage(self, cmd: ScheduleCommand) -> Any:
        """``%schedule usage``: ``jupyter-sched usage``'s report as a DataFrame, one row per user (admins:
        everyone's), with the period said above it (newuser27 N6: "unknown subcommand 'usage'"; the GPU-hours
        were only a line of ``%schedule status``)."""
        from ..client._wire import Req, unwrap_list
        from ..wording.usage import last_days
        from .render import usage_frame

        me = self.client.me()
        params = {"by": "user", **({"all": "true"} if me.get("is_admin") else {})}
        rows = unwrap_list(self.client.call(Req("GET", "usage/report", params=params)), "usage")
        whose = "everyone's usage" if me.get("is_admin") else f"{me.get('user')}'s usage"
        period = last_days(rows[0].get("since") if rows else me.get("gpu_hours_since"), _now())
        if not rows:  # one sentence, not also an "Empty DataFrame" (issue 20)
            self._print(f"No usage recorded: {whose}, {period}.")  # as `jupyter-sched usage` says it
            return None
        self._print(f"{whose}, {period}; GPU-hours allocated and utilized (efficiency: "
                    "utilized / allocated).")
        return usage_frame(rows)

    def _schedule_profiles(self, cmd: ScheduleCommand) -> Any:
        rows = self.client.profiles()
        if not rows:  # one sentence, not also an "Empty DataFrame" (issue 20)
            self._print("No profiles defined (admins set c.SchedApp.profiles).")
            return None
        return profiles_frame(rows)


def _parameters_said(path: str, parameters: Mapping[str, Any], said: Any = None) -> str | None:
    """What a notebook job's ``-p`` values become, and the note ``definitions run -p`` prints when the
    notebook's parameters cell sets no such name or holds another type (new user 14, N27) — unless the
    server's answer said it among its ``warnings`` (``said``; newuser39 n3: said once)."""
    if not parameters:
        return None
    note = parameters_file_note(path, parameters)
    where = "in a new first cell" if NO_PARAMETERS_CELL in note else \
        "after the notebook's cell tagged \"parameters\""  # new user 25, N10: not when it has none
    note = unsaid_note(note, said)
    return f"With parameters {json.dumps(dict(parameters))}, assigned {where}." + (f"\nNote: {note}" if note else "")


def _was(after: dict[str, Any]) -> dict[str, Any] | None:
    """What a cancelled job was, from the cancel's own answer (its start times): the "was" of the
    outcome line without reading the job first (new user 15, N8). None while it still runs (it is
    stopping: the answer's own state says so)."""
    if after.get("state") != "cancelled":
        return None
    return {**after, "state": "running" if after.get("started_at") else "admitted" if after.get("admitted_at")
            else "pending"}


def _carried_text(path: Path, kind: str) -> str:
    """The text of the ``kind`` file at ``path`` a hub job carries — a regular file within what a job carries
    (``source`` 1 MiB, ``notebook_json`` 8 MiB), read no further: a FIFO hung the kernel, a 20 GB file filled it
    before the server refused it (red39 R4's kind).

    Raises:
        MagicError: naming the path, what it is or its size and the bound, with the fix.
    """
    from ..model.validation import MAX_NOTEBOOK_JSON_BYTES, MAX_SOURCE_BYTES
    from ..userfiles import NotRunnable, read_run_file

    try:
        data = read_run_file(path, kind=kind, limit=MAX_NOTEBOOK_JSON_BYTES if kind == "notebook" else MAX_SOURCE_BYTES)
    except NotRunnable as exc:
        raise MagicError(f"{exc.message} — {exc.hint}") from None
    return data.decode("utf-8", errors="replace")
