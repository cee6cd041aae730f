"""A file the user named that cannot run, said one way on the CLI, the magics and the panel.

``script 'nope.py' does not exist in /home/ann/work`` is the head on every surface, with the thing
named as that surface names it (the CLI's ``--script``, the magics' plain ``script`` — never a
usage-line placeholder such as ``SCRIPT`` — the panel's field label), followed by the fix that
surface can act on: a path to give, or, in the panel, the file browser's "Run on GPUs" (newuser31
n15: one missing script read three ways, ``SCRIPT 'missing.py': no such file in …`` in a notebook).

The problem phrase comes from whoever looked at the file (:func:`jupyter_sched.userfiles.file_problem`
in the client, the executor's check in the service) and reads after the path: ``does not exist in
FOLDER``, ``does not exist on this server``, ``is a directory, not a file``, ``cannot be read by ann
(permission denied on /x)``. Pure: no I/O.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["FileSurface", "PANEL_NOT_EXECUTABLE_FIX", "PANEL_PATH_FIX", "panel_program_fix", "path_fix", "path_fixes",
           "path_refusal"]

FileSurface = Literal["cli", "magics", "panel"]
"""Who says it: ``jupyter-sched`` at a terminal, ``%schedule`` in a notebook, the GPUs sidebar's form."""

PANEL_PATH_FIX = "give the path of a file the server can read (right-click it in the file browser → Run on GPUs)"
"""The panel's fix of any bad path: its form takes a path, which the file browser fills in."""

PANEL_NOT_EXECUTABLE_FIX = "choose a .py or .ipynb, or make the file executable (chmod +x)"
"""The panel's fix of a program file that cannot be run: its form has no interpreter field (Arguments come
after the path), so not the CLI's "-- python FILE" (new user 17, N10); a .py or .ipynb runs with the job's
Python."""


def panel_program_fix(problem: str) -> str:
    """The panel's fix of a program (a ``command`` job's first word) with ``problem``: the service sends it as
    ``details["fixes"]["panel"]`` beside its own hint, which speaks the CLI's ``--`` (newuser31 n15)."""
    return PANEL_NOT_EXECUTABLE_FIX if "execut" in problem else PANEL_PATH_FIX


def _kind(problem: str) -> str:
    """``unreadable``, ``not_a_file`` or ``missing``: which fix a problem phrase calls for."""
    if problem.startswith("cannot be read") or "permission denied" in problem:
        return "unreadable"
    if "is a folder" in problem or "is a directory" in problem or "is not a regular file" in problem:
        return "not_a_file"
    return "missing"


def path_fix(what: str, problem: str, surface: FileSurface) -> str:
    """What to do about a ``what`` (``script``, ``notebook``) file with ``problem``, on ``surface``.

    The panel's is one sentence for every problem (:data:`PANEL_PATH_FIX`); the CLI and the magics say
    the same words, which name no option of either (the message before it says where it was looked for).
    """
    if surface == "panel":
        return PANEL_PATH_FIX
    kind = _kind(problem)
    if kind == "unreadable":
        return f"give a {what} this account can read, or ask its owner to share it"
    if kind == "not_a_file":
        return f"give the path of the {what} file itself"
    return f"give the path of the {what} to run, or check the spelling"


def path_fixes(what: str, problem: str) -> dict[str, str]:
    """Each surface's fix (:func:`path_fix`), sent by the service as a refusal's ``details["fixes"]`` so
    a client says its own — the panel's form has no path syntax of the CLI's to offer."""
    return {surface: path_fix(what, problem, surface) for surface in ("cli", "magics", "panel")}


def path_refusal(named: str, path: str, problem: str, what: str, surface: FileSurface) -> tuple[str, str]:
    """``(message, fix)`` of a file that cannot run: ``("script 'nope.py' does not exist in /w", "give the
    path of the script to run, or check the spelling")``.

    Args:
        named: how ``surface`` names the thing — ``--script`` (CLI), ``script`` (magics, REST).
        path: the path as the user gave it (cut at 300 characters, quoted).
        problem: what is wrong, read after the path (``does not exist in /w``).
        what: ``script`` or ``notebook`` — the word the fix uses.
        surface: who says it.
    """
    return f"{named} {path[:300]!r} {problem}", path_fix(what, problem, surface)
