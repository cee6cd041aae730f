"""The submitter's own environment a job runs with (newuser27 N2): its ``PATH`` and the active
Python environment (``VIRTUAL_ENV``, ``CONDA_PREFIX``), as Slurm's ``sbatch`` exports the
submitting shell's environment by default.

A job ran with the *server's* PATH: after ``source .venv/bin/activate``, ``submit -- ./run.sh``
whose script calls ``python`` ran pyenv's (``No module named 'jupyter_sched'``). The CLI and the
magics send these variables with a job that runs on this machine (a server at a loopback address
with the local executor, not in hub mode, where the admins' job Python runs a job); a variable the
user gives (``--env PATH=…``) is kept, and one longer than the server takes is left out (said).
The server refuses none of them (:mod:`jupyter_sched.model.jobenv`: a PATH is the user's own; the
job runs as the user) and bounds each value (``MAX_ENV_VALUE_CHARS``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

__all__ = ["SUBMITTER_VARIABLES", "foreign_python_warning", "runs_here", "submitter_env", "submitter_note"]

SUBMITTER_VARIABLES = ("PATH", "VIRTUAL_ENV", "CONDA_PREFIX")
"""Sent with a job when set here and not given by the user: what chooses the programs and the
Python environment a launcher script's ``python`` / ``pip`` / ``torchrun`` run."""


def runs_here(client: Any) -> tuple[bool, str]:
    """``(here, mode)``: whether a job submitted through ``client`` runs on this machine (a server at
    a loopback address with the local executor), and the server's mode (``""`` when not asked or not
    known). Asks ``GET config`` only for a loopback server; any error there reads as not here (the
    submit itself says what is wrong with the server)."""
    from urllib.parse import urlsplit

    try:
        host = urlsplit(str(client.connection.url)).hostname or ""
        if host not in ("127.0.0.1", "localhost", "::1"):
            return False, ""  # another machine's server: its PATH is the one that means anything there
        config = client.config()
    except Exception:
        return False, ""
    return "local" in (config.get("executors") or []), str(config.get("mode") or "")


def submitter_env(environ: Mapping[str, str], given: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """``(variables to send, names left out as too long)``: of :data:`SUBMITTER_VARIABLES`, the ones
    set (non-empty) in ``environ`` that ``given`` (the user's ``--env``) does not set."""
    from ..model.validation import MAX_ENV_VALUE_CHARS  # the server's bound (lazy: the CLI's start stays lean)

    sent: dict[str, str] = {}
    too_long: list[str] = []
    for name in SUBMITTER_VARIABLES:
        value = environ.get(name)
        if not value or name in given:
            continue
        if len(value) > MAX_ENV_VALUE_CHARS:
            too_long.append(name)
        else:
            sent[name] = value
    return sent, too_long


def submitter_note(sent: Mapping[str, str], too_long: list[str], *, here: str = "your") -> str:
    """One sentence for the submit's answer, e.g. ``runs with your PATH (/p/.venv/bin first) and
    VIRTUAL_ENV; --env PATH=… gives it another``; ``""`` when nothing was sent or left out."""
    from ..model.validation import MAX_ENV_VALUE_CHARS

    words = []
    if "PATH" in sent:
        first = next((part for part in sent["PATH"].split(os.pathsep) if part), "")
        words.append(f"runs with {here} PATH ({first} first)" if first else f"runs with {here} PATH")
        others = [name for name in sent if name != "PATH"]
        if others:
            words[-1] += " and " + " and ".join(others)
        words[-1] += "; --env PATH=… gives it another"
    elif sent:
        words.append(f"runs with {here} " + " and ".join(sent))
    if too_long:
        words.append(f"{' and '.join(too_long)} not passed: longer than the server takes ({MAX_ENV_VALUE_CHARS} "
                     "characters)")
    return "; ".join(words)


def foreign_python_warning(argv: Any, resolved: str, working_dir: str, *, own: str) -> str | None:
    """Why a ``python …`` job will fail on ``import jupyter_sched`` (newuser28 N3), or None: its
    ``python`` resolved on the submitter's PATH to ``resolved``, another interpreter than this CLI's
    (``own``, ``sys.executable``: a CLI run by path, ``.venv/bin/jupyter-sched``, with the venv not
    active), the job uses jupyter_sched (a ``.py`` file it runs that names it, or ``-c``/``-m`` text
    that does) and ``resolved`` cannot import it (asked once: ``find_spec`` in ``working_dir``, where
    the job starts). Said even under ``-q``: each of 54 sweep jobs failed in 1 s with nothing said."""
    import subprocess

    args = [str(a) for a in (argv or [])[1:]]
    if os.path.dirname(os.path.abspath(resolved)) == os.path.dirname(os.path.abspath(own)):
        return None
    uses = any("jupyter_sched" in a for a in args)
    script = next((a for a in args if a.endswith(".py") and not a.startswith("-")), None)
    if not uses and script is not None:
        try:
            from ..userfiles import read_head

            uses = b"jupyter_sched" in read_head(os.path.join(os.path.expanduser(working_dir), script), 1 << 20)
        except OSError:
            return None
    if not uses:
        return None
    try:
        done = subprocess.run([resolved, "-c", "import importlib.util as u,sys;sys.exit(u.find_spec('jupyter_sched') is None)"],
                              cwd=os.path.expanduser(working_dir), capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if done.returncode != 1:
        return None
    run = " ".join([own, *args[:1]]) if args else own
    return (f"python here is {resolved}, not this jupyter-sched's {own}: the job cannot import jupyter_sched "
            f"(its code does) — activate that environment ({os.path.dirname(own)}/activate), or run -- {run} …")
