"""The one way an admin command of the CLI asks before it acts (``cancel --mine/--all``, ``teams move``,
``nodes cordon|drain``): a question on stderr answered ``y``/``yes`` on a terminal; without a terminal
it does not ask (the caller says so and names ``--yes``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .main import Streams

__all__ = ["confirmed", "go_on", "interactive"]


def interactive(io: Streams) -> bool:
    """Whether ``io``'s stdin is a terminal someone can answer on."""
    isatty = getattr(io.stdin, "isatty", None)
    return bool(isatty and isatty())


def confirmed(io: Streams, question: str) -> bool:
    """Ask ``question`` (``"Drain node n3?"``) on stderr with ``[y/N]``; True when the answer is y or yes."""
    io.err.write(f"{question} [y/N] ")
    io.err.flush()
    return io.stdin.readline().strip().lower() in ("y", "yes")


def go_on(io: Streams, command: str, question: str, *, declined: str) -> int | None:
    """Ask ``question`` before ``command`` (``teams move``) acts: None to go on; else its exit code — 2
    without a terminal (said on stderr, naming ``--yes``), 0 when the answer is no (``declined`` said:
    ``nothing moved``)."""
    if not interactive(io):
        print(f"jupyter-sched {command}: not asking without a terminal — add --yes to go ahead", file=io.err)
        return 2
    if not confirmed(io, question):
        print(declined, file=io.out)
        return 0
    return None
