"""Tab completion of ``%gpu``, ``%schedule`` and the ``%%schedule`` header (newuser41 n1).

Before it, ``%gpu re<Tab>`` offered IPython's own magics (``%recall``, ``%reset`` …) and ``%schedule
logs j-<Tab>`` Python's builtins. One IPython matcher (the Matcher API v2 of IPython ≥ 8.6, appended to
``IPCompleter.custom_matchers`` as IPython's completer documentation says) offers, on a line of these
magics only:

* the subcommands (:data:`~.parsing.GPU_SUBCOMMANDS`, :data:`~.parsing.SCHEDULE_SUBCOMMANDS`);
* the options of the subcommand, read from the parser the magic itself parses the line with
  (:func:`~.parsing.command_parser`: one source, never a second list);
* the values of an enumerated option: its parser's ``choices``, the priority classes, the job states,
  and for ``--model`` the GPU models of the server's inventory;
* at a ``JOB`` place, the caller's own job ids and names (``GET jobs`` without ``all``/``user``: the
  server answers the caller's own, and a row marked ``mine: false`` is left out all the same).

The server is asked only when a completion needs it (a kernel that never completes sends nothing), one
request at a time, from a thread the completion waits for at most :data:`WAIT_S`: a server that is down
or hangs costs a Tab that long and gives nothing of its own; an answer that comes later is kept for the
next Tab (:data:`KEPT_S`). A place of these magics with nothing to offer is answered by the word as typed,
alone: IPython lets a matcher silence the others only with a completion, and Python's names are never
right after ``%gpu`` or ``%schedule``. Where the words are paths (``run``/``notebook``/``serve``'s target, the
script's own words after it, ``-o FILE``, ``--workdir DIR``) the other matchers (files) answer.
"""

from __future__ import annotations

import argparse
import shlex
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from IPython.core.completer import SimpleCompletion, context_matcher

from ..model.job import JobState
from .parsing import GPU_SUBCOMMANDS, PRIORITIES, SCHEDULE_SUBCOMMANDS, command_parser, comment_start

__all__ = ["IDENTIFIER", "KEPT_S", "WAIT_S", "MagicCompleter", "register"]

IDENTIFIER = "jupyter_sched.magics"
"""The matcher's identifier (IPython's ``IPCompleter.disable_matchers`` and ``suppress_competing_matchers`` name it)."""
WAIT_S = 0.4
"""Longest a completion waits for the server, seconds (a Tab must never hang the kernel)."""
KEPT_S = 5.0
"""How long an answer of the server is offered again without asking anew, seconds."""
JOBS_ASKED = 50
"""The newest jobs asked for (``GET jobs?limit=``)."""

_SUBCOMMANDS = {"%gpu": GPU_SUBCOMMANDS, "%schedule": SCHEDULE_SUBCOMMANDS, "%%schedule": ()}
_TARGETS = ("run", "notebook", "serve")
_OPEN = ("pending", "admitted", "running")
_PATHS = ("output", "workdir")
"""Options (by ``dest``) whose value is a file or folder: completed as paths by IPython, not here."""
_VALUES: dict[str, Sequence[str]] = {"priority": PRIORITIES, "state": tuple(s.value for s in JobState)}
"""Values of options whose parser has no ``choices``, by ``dest``: the words the server takes."""


def register(shell: Any) -> None:
    """Add the matcher to ``shell``'s completer, once (``%reload_ext`` adds no second); nothing is sent."""
    completer = getattr(shell, "Completer", None)
    matchers = getattr(completer, "custom_matchers", None)
    if not isinstance(matchers, list):  # IPython < 8.6: no Matcher API v2
        return
    if not any(getattr(m, "matcher_identifier", None) == IDENTIFIER for m in matchers):
        matchers.append(MagicCompleter().matcher)


class MagicCompleter:
    """The matcher and what it remembers of the server.

    Args:
        connect: returns the API client (default :func:`jupyter_sched.client.connect` with a
            :data:`WAIT_S` timeout); called in the asking thread, never before a completion needs it.
    """

    def __init__(self, connect: Callable[[], Any] | None = None) -> None:
        self._connect = connect or _connect
        self._client: Any = None
        self._kept: dict[str, tuple[float, list[Any]]] = {}
        self._asking: threading.Thread | None = None
        self._lock = threading.Lock()

    # before IPython's own matchers (priority 1): it silences them
    @context_matcher(identifier=IDENTIFIER, priority=1)  # type: ignore[untyped-decorator]
    def matcher(self, context: Any) -> dict[str, Any]:
        """IPython's Matcher API v2: ``context`` is its ``CompletionContext``; never raises."""
        try:
            found = self.complete(context.line_with_cursor, context.cursor_position, first=context.cursor_line == 0)
        except Exception:  # a Tab never fails a kernel
            found = None
        if found is None:
            return {"completions": [], "suppress": False}
        fragment, words = found
        return {"completions": [SimpleCompletion(w, type="param") for w in words or [fragment]],
                "matched_fragment": fragment, "suppress": True, "ordered": True}

    def complete(self, line: str, cursor: int, *, first: bool = True) -> tuple[str, list[str]] | None:
        """``(fragment, words)``: the typed part before ``cursor`` that a word of ``words`` replaces; None when
        ``line`` is no line of these magics up to there (or the word is a script's)."""
        text = line[:cursor]
        magic = text.lstrip().split(" ", 1)[0]
        if magic not in _SUBCOMMANDS or " " not in text.lstrip() or (magic == "%%schedule" and not first):
            return None
        said = text.lstrip()[len(magic):]
        if comment_start(said) < len(said):
            return None
        words = said.split()
        current = "" if said[-1:].isspace() else words.pop()
        if magic == "%gpu" and words and words[0][:1].isdigit():
            words.insert(0, "request")  # `%gpu 2 …` is `%gpu request 2 …`, as parse_gpu_line reads it
        head = "" if magic == "%%schedule" else (words[0] if words else None)
        if head is None:
            return current, [s for s in _SUBCOMMANDS[magic] if s.startswith(current)]
        parser = command_parser(magic, head)
        if parser is None:
            return current, []
        return self._in(parser, head, words[0 if magic == "%%schedule" else 1:], current)

    def _in(self, parser: argparse.ArgumentParser, head: str, before: list[str],
            current: str) -> tuple[str, list[str]] | None:
        """What fits ``current`` after ``before`` (the words after the subcommand)."""
        options = {o: a for a in parser._actions for o in a.option_strings if a.help != argparse.SUPPRESS}
        if current.startswith("-") and "=" in current:
            option, value = current.split("=", 1)
            return self._values(_option(parser, option, options), value)
        if current.startswith("-"):
            return current, sorted(o for o in options if o.startswith(current) and (len(current) > 1 or o[:2] == "--"))
        if before and before[-1].startswith("-") and "=" not in before[-1]:
            action = _option(parser, before[-1], options)
            if action is not None and action.dest in _PATHS:
                return None  # a file or folder: IPython's file matcher answers
            if action is not None and action.nargs != 0:
                return self._values(action, current)
        if head in _TARGETS:
            return None  # the script, notebook or app, then its own words: files, as IPython completes them
        if not any(a.metavar == "JOB" for a in parser._actions):
            return current, []
        typed = current.lstrip("'\"")
        return current, [_quoted(w) for w in self._jobs(head) if w.startswith(typed) and w not in before]

    def _values(self, action: argparse.Action | None, typed: str) -> tuple[str, list[str]]:
        """``(fragment, values)`` of option ``action`` for ``typed``: ``--model`` as the magic checks it (a
        case-insensitive part of a model of the inventory, ``A100,H100`` any of several: the last one completed),
        others by their first letters."""
        if action is None:
            return typed, []
        if action.dest == "model":
            fragment = typed.rsplit(",", 1)[-1]
            models = self._asked("models") or ()
            return fragment, [_quoted(m) for m in models if fragment.lower() in m.lower()]
        values = [str(c) for c in action.choices or ()] or _VALUES.get(action.dest, ())
        return typed, [v for v in values if v.lower().startswith(typed.lower())]

    def _jobs(self, head: str) -> list[str]:
        """The caller's job ids and names that ``head`` takes: open ones to cancel, hold, update or put on top,
        held ones to release, any for logs, status and wait; newest first."""
        words: list[str] = []
        for job in self._asked("jobs") or ():
            if head == "release" and not job.get("held"):
                continue
            if head in ("cancel", "hold", "update", "top") and job.get("state") not in _OPEN:
                continue
            words += [str(w) for w in (job.get("id"), job.get("name")) if w and str(w) not in words]
        return words

    def _asked(self, what: str) -> list[Any] | None:
        """The server's answer for ``what`` (``jobs``, ``models``) kept from at most :data:`KEPT_S` ago, else
        asked for in a thread waited for at most :data:`WAIT_S`; then an older answer, if any, or None."""
        with self._lock:
            kept = self._kept.get(what)
            if kept is not None and time.monotonic() - kept[0] < KEPT_S:
                return kept[1]
            if self._asking is None or not self._asking.is_alive():
                self._asking = threading.Thread(target=self._ask, args=(what,), daemon=True,
                                                name="jupyter_sched completion")
                self._asking.start()
            asking = self._asking
        asking.join(WAIT_S)
        kept = self._kept.get(what)  # fresh, or the last one when the server is slow or down now
        return kept[1] if kept is not None else None

    def _ask(self, what: str) -> None:
        """One request for ``what``; a failure forgets the client (the next Tab finds the server anew)."""
        try:
            if self._client is None:
                self._client = self._connect()
            if what == "models":
                gpus = self._client.inventory().get("gpus") or ()
                found: list[Any] = sorted({str(g["model"]) for g in gpus if isinstance(g, dict) and g.get("model")})
            else:
                found = [j for j in self._client.jobs(limit=JOBS_ASKED) if isinstance(j, dict) and j.get("mine", True)]
        except Exception:  # down, hanging, refusing: nothing to offer, never a word in the cell
            self._client = None
            return
        self._kept[what] = (time.monotonic(), found)


def _connect() -> Any:
    from ..client import connect

    return connect(timeout_s=WAIT_S)


def _option(parser: argparse.ArgumentParser, typed: str,
            options: dict[str, argparse.Action]) -> argparse.Action | None:
    """The action of option ``typed``; a prefix of exactly one where the parser takes prefixes (``--mod``)."""
    if typed in options:
        return options[typed]
    meant = {a for o, a in options.items() if o.startswith(typed)} if parser.allow_abbrev and typed[:2] == "--" else ()
    return next(iter(meant)) if len(meant) == 1 else None


def _quoted(word: str) -> str:
    """``word`` as the magic's line reads it back (``shlex`` splits the line): quoted when it has a space."""
    return shlex.quote(word)
