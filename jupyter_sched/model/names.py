"""The names a lease gets when its request names none (pure; no imports: the CLI's wording reads
them, and each CLI call is a new process)."""

from __future__ import annotations

__all__ = ["ID_PREFIXES", "LEASE_NAMES", "default_lease_name", "file_name", "id_shaped", "kernel_named"]


LEASE_NAMES = ("notebook lease", "kernel lease", "lease")
"""The names a lease gets when its request names none (:func:`default_lease_name`). New user 10,
N11: ``%gpu request`` named its lease ``kernel-<first 8 hex digits of the kernel id>``, and the
shared queue, the inventory and other users' ETA lines showed that part of the owner's kernel id.
A lease's name is public; its kernel and notebook are not (``kernel_id``, ``kernel_notebook``), so
the default name says only what kind of lease it is, and the owner's own views name the notebook
(:func:`jupyter_sched.wording.jobs.work_name`)."""


def default_lease_name(kernel_id: str | None, kernel_notebook: str | None, *, released_at_exit: bool = False) -> str:
    """``notebook lease`` (its notebook is known), ``kernel lease`` (bound to a kernel, or held by a
    kernel this server did not start, which releases it at exit: new user 16, N1) or ``lease``."""
    if kernel_notebook:
        return LEASE_NAMES[0]
    return LEASE_NAMES[1] if kernel_id or released_at_exit else LEASE_NAMES[2]


def kernel_named(name: str, kernel_id: str | None) -> bool:
    """``kernel-<first 8 characters of kernel_id>``: the name ``%gpu request`` gave before N11."""
    return bool(kernel_id) and name == f"kernel-{(kernel_id or '')[:8]}"


ID_PREFIXES = {"j-": "job", "l-": "lease", "d-": "definition"}
"""The id prefixes (``j-1m991jn1y-gm4ndp``) and the kind each names. Every client takes a reference that starts
with ``j-`` or ``l-`` — in any case, with a listing's punctuation around it — as an id, never as a name (cli
``_is_id``, client ``_wire``, services ``context``; ``d-`` the same for definitions)."""

_EDGE = ":,;.'\"()[]<>` \t"
"""What the clients strip from a reference's ends before reading it (cli ``_ID_EDGE_JUNK``, plus tabs)."""


def id_shaped(name: str) -> tuple[str, str] | None:
    """``(prefix, kind)`` when ``name`` reads as a job, lease or definition id to every client (red41 R2: a job
    named ``j-…`` of another user's job is shown beside that id, and ``cancel <its name>`` cancels the other
    job), else None. ``jx-1``, ``job-1``, ``my j-1`` are names."""
    word = name.strip(_EDGE).lower()
    return next(((p, kind) for p, kind in ID_PREFIXES.items() if word.startswith(p)), None)


def file_name(stem: str) -> str:
    """The name a job gets from its file when none is given (``%schedule run train.py`` → ``train``): the file's
    stem, or ``run <stem>`` where the stem reads as an id (``l-bfgs.py``: :func:`id_shaped` names are refused) or as an
    option (``-x.py``: names starting with - are refused, red42 R3)."""
    return f"run {stem}" if id_shaped(stem) is not None or stem.startswith("-") else stem
