"""``jupyter-sched logs JOB --notebook [-o FILE]``: a notebook job's executed notebook (its outputs and
the error of the cell that failed), fetched through the server and saved where the user is.

The runner keeps it in the job's folder on the server — on a hub the service's, which its owner cannot
read (newuser39 N1: the log's last line gave that path, `Permission denied`); the server hands it only
to the job's owner (``GET jobs/{id}/notebook``), so this is the one way from a terminal."""

from __future__ import annotations

import argparse
import json
import os
import re
from typing import Any, NamedTuple

from ..wording.executed import executed_copy_name
from .main import EXIT_OK, EXIT_USAGE, PROG, Streams, job_of

__all__ = ["NOTEBOOK_HELP", "OUTPUT_HELP", "Saved", "notebook_hint", "save_executed_copy", "save_executed_notebook"]

NOTEBOOK_HELP = ("a notebook job's executed notebook (its outputs, the failed cell's error) instead of its log: saved "
                 "as \"NOTEBOOK (executed JOB).ipynb\" in this folder (or -o FILE; -o - prints it); yours only")
OUTPUT_HELP = "with --notebook: where to save it (an existing file is not overwritten; - for stdout)"


def notebook_hint(job: Any) -> str | None:
    """Under an ended notebook job's line (``wait``, ``submit --wait``, ``logs -f``): how to open its executed
    notebook — where a failed run's "cell 3 (In [4] in the executed notebook) raised …" sends the reader
    (newuser39 N1) — or None for any other job."""
    from ..wording.executed import executed_notebook_hint  # the magics' words too (session 40)

    return executed_notebook_hint(job, save=f"{PROG} logs {job.get('id')} --notebook")


_PRINTED_RAW = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
"""Characters ``json.dumps(ensure_ascii=False)`` leaves raw that a terminal or notebook stream may obey; in JSON
text they can stand only inside strings, where ``\\uXXXX`` is the same string."""


class Saved(NamedTuple):
    """What :func:`save_executed_copy` did: ``ok`` (saved, or already saved the same) and ``said``, the line to
    print — on a refusal, the sentence after its surface's prefix (``jupyter-sched logs: …``, ``%schedule logs:
    …``); ``text``: the notebook itself for ``-o -`` (printed, not saved; ``said`` is then "")."""

    ok: bool
    said: str
    text: str | None = None


def save_executed_copy(client: Any, job_id: str, output: str | None) -> Saved:
    """Fetch the executed notebook of ``job_id`` (an id) and save it as ``output`` — None: in this folder as
    :func:`~..wording.executed.executed_copy_name` names it (bounded by NAME_MAX); ``-``: not saved, handed back
    to print — never over an existing file. One code path for ``jupyter-sched logs JOB --notebook`` and
    ``%schedule logs JOB --notebook`` (newuser41 n11: a hub kernel has no ``jupyter-sched`` on its PATH), so the
    name, the bound and the refusals are the same wherever it is saved from.

    Raises:
        SchedError: the server's refusals (not a notebook job, another user's: said as every refusal is)."""
    notebook = client.executed_notebook(job_id)
    text = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
    target = output
    if target == "-":  # printed on a terminal or in a cell: C1, DEL, bidi and line-separator characters as JSON
        # escapes (json escapes C0 itself), so the job's strings cannot command the reader's screen (newuser42 N2)
        return Saved(True, "", _PRINTED_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text))
    if target is None:
        target = executed_copy_name(client.job(job_id).get("notebook"), job_id)  # the panel's name (newuser40 N1)
    said = "-o: " if output is not None else ""  # the option the user typed, never one they did not
    try:
        with open(target, "x", encoding="utf-8") as fh:
            fh.write(text)
    except FileExistsError:
        if _holds(target, text):  # newuser40 n13: a second save of the same notebook is done, not a mistake
            return Saved(True, f"{job_id}'s executed notebook is already saved, the same, in {os.path.abspath(target)}")
        return Saved(False, f"{said}{target} already exists and holds something else; not overwritten — remove it "
                            "or name another file with -o FILE")
    except OSError as exc:  # newuser41 N4: "-o:" blamed for a name the tool chose
        return Saved(False, f"{said}cannot write {os.path.abspath(target)}: {exc.strerror or exc} — name another "
                            "file with -o FILE (- prints it)")
    return Saved(True, f"{job_id}'s executed notebook saved to {os.path.abspath(target)} — open it in Jupyter (or "
                       "the panel: My work → the job → Open notebook)")


def save_executed_notebook(client: Any, args: argparse.Namespace, io: Streams) -> int:
    """``logs JOB --notebook [-o FILE]``: :func:`save_executed_copy` of the job ``args.job_id`` names.

    Returns:
        0 when saved (or printed, ``-o -``); 2 when the file to write exists or cannot be written (the server's
        refusals — not a notebook job, another user's — are raised as :class:`~..errors.SchedError` and said
        by the CLI as every refusal is)."""
    done = save_executed_copy(client, job_of(client, args.job_id, "logs", io), args.output)
    if done.text is not None:
        io.out.write(done.text)
        return EXIT_OK
    if not done.ok:
        print(f"{PROG} logs: {done.said} [usage_error]", file=io.err)
        return EXIT_USAGE
    print(done.said, file=io.out)
    return EXIT_OK


def _holds(path: str, text: str) -> bool:
    """Whether the file at ``path`` is a regular file holding exactly ``text`` (read at most its length + 1)."""
    try:
        if not os.path.isfile(path):
            return False
        with open(path, encoding="utf-8") as fh:
            return fh.read(len(text) + 1) == text
    except (OSError, UnicodeDecodeError):
        return False
