"""Progress bars for the CLI's long waits (tqdm, on stderr so stdout stays the result).

:class:`TerminalProgress` draws a :class:`~jupyter_sched.wording.WaitProgress` — the same frames
the magics draw as an ipywidgets bar: the longest of its lines that fits the terminal, the bar, and
beside the bar what its fill is (``|████▎    | 12 % done``: newuser23 N18, never a bare percentage) — and :class:`CountingProgress` counts the items of a bulk
action. On a terminal they redraw in place; elsewhere (a pipe, a CI log) they print a line only
when the wait changes phase, or when the job's own reported progress reaches a new tenth, so logs
stay short. tqdm is imported only when a bar is drawn.
"""

from __future__ import annotations

import math
import os
import shutil
from types import TracebackType
from typing import Any, TextIO

from ..wording import WaitProgress

__all__ = ["BAR_MIN_CELLS", "CountingProgress", "TerminalProgress", "bar_percent", "cells", "fitted"]

_BAR = "{desc} |{bar}| "
"""A known fraction: the line, the bar, then the frame's gauge (added as text: ``12 % done``)."""
_NO_BAR = "{desc} [{elapsed}]"
"""An unknown fraction: the line and the time it has been watched."""
_TEXT_ONLY = "{desc}"
"""A known fraction on a terminal too narrow for a bar beside its facts: the line ending in its gauge."""


def _size(stream: TextIO | None = None) -> dict[str, int]:
    """tqdm's ``ncols``/``nrows``: the terminal's, 80 x 24 where it reports none (a pty without a
    size reads as 0 x 0, and tqdm then hides its bar as "below the screen"). The size of ``stream``'s
    own terminal when it has one — what the line is drawn on — else the environment's (``COLUMNS``)."""
    try:
        size = os.get_terminal_size(stream.fileno()) if stream is not None else shutil.get_terminal_size((80, 24))
    except (AttributeError, OSError, ValueError):  # not a file, or not a terminal
        size = shutil.get_terminal_size((80, 24))
    return {"ncols": size.columns or 80, "nrows": size.lines or 24}


BAR_MIN_CELLS = 10
"""Fewest cells of a bar worth drawing: a line that leaves fewer is said in a shorter form, and without a
bar when even its shortest leaves fewer (the facts before the bar: newuser23 N4)."""
_ELAPSED = len(" [00:00:00]")
"""What :data:`_NO_BAR` takes beside the line."""


def bar_percent(fraction: float) -> int:
    """The bar's whole percentage of ``fraction`` (0..1), rounded down as the words' ``77 % done`` are
    (:func:`~jupyter_sched.wording.estimates.done_text`; newuser22 N9: the words said 77 %, the bar 78%)."""
    return math.floor(max(0.0, min(fraction, 1.0)) * 100)


def fitted(frame: WaitProgress, columns: int) -> tuple[str, bool]:
    """What to draw for ``frame`` on a terminal ``columns`` wide: ``(line, with_bar)``.

    With a known fraction: the longest of ``frame.bar_lines`` that leaves :data:`BAR_MIN_CELLS` cells
    for the bar and its gauge (``line |███| 12 % done``); where none does, the longest that fits with
    the gauge said after it (``line · 12 % done``, no bar: the facts before the bar). Without one: the
    longest that fits beside ``[00:00]``. Where even the shortest is too long, its last parts are left
    out whole (`` · …``), never a clock cut in two (newuser23 N4: at 120 columns the first frame was cut
    mid-clock, the next ones dropped the pace and the planned preemption)."""
    lines = frame.bar_lines
    if frame.fraction is None or not frame.gauge:
        room = columns - _ELAPSED - 1
        return next((line for line in lines if cells(line) <= room), _cut(lines[-1], room)), False
    beside = columns - cells(f" || {frame.gauge}") - BAR_MIN_CELLS
    for line in lines:
        if cells(line) <= beside:
            return line, True
    gauge = f" · {frame.gauge}"
    room = columns - 1 - cells(gauge)  # tqdm's last column stays free (a line as wide as the terminal wraps)
    return next((line for line in lines if cells(line) <= room), _cut(lines[-1], room)) + gauge, False


def _cut(line: str, room: int) -> str:
    """``line`` in ``room`` cells: its last `` · `` parts left out whole (`` · …`` said for them); its
    first part cut only when it alone is wider than ``room``."""
    if cells(line) <= room:
        return line
    parts = line.split(" · ")
    while len(parts) > 1:
        parts.pop()
        shorter = " · ".join(parts) + " · …"
        if cells(shorter) <= room:
            return shorter
    text = parts[0]
    while text and cells(text) > max(room - 1, 0):
        text = text[:-1]
    return text + "…" if room > 0 else ""


def cells(text: str) -> int:
    """The terminal columns ``text`` takes: 2 for a wide (East Asian) character, 1 for others, as
    tqdm measures its line (a name in CJK took twice its ``len``)."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "FW" else 1 for ch in text)


def _format(frame: WaitProgress, with_bar: bool) -> str:
    """tqdm's ``bar_format`` for ``frame`` (:func:`fitted`'s choice): the bar and the gauge after it, the
    line alone (the gauge in it), or the line and the time watched (an unknown fraction)."""
    if frame.fraction is None or not frame.gauge:
        return _NO_BAR
    if not with_bar:
        return _TEXT_ONLY
    return _BAR + frame.gauge.replace("{", "{{").replace("}", "}}")


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class TerminalProgress:
    """One bar per phase of a wait (queued, then running); see the module docstring.

    Args:
        stream: where to draw (stderr).
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.live = _is_terminal(stream)
        self._bar: Any = None
        self._phase = ""
        self._step = ""
        """What the last log line said (not live): the phase, and the tenth of a reported fraction."""

    def show(self, frame: WaitProgress) -> None:
        """Draw ``frame``: a new bar when the phase changed, else move the current one; not on a terminal,
        a line when the phase changes, the job's reported progress reaches a new tenth, or its planned
        preemption (``frame.news``) comes, changes or goes."""
        if not self.live:  # a log line per phase: room for the reason (a bar on a terminal has none)
            # and per tenth of the job's own reported progress (new user 21, N6: a log said "running"
            # once, never how far the job said it was): at most 11 lines more
            step = f"{frame.phase}:{int(frame.fraction * 10)}" if frame.reported and frame.fraction is not None \
                else frame.phase
            step += f":{frame.news}"  # and when a preemption is planned, or its plan changes (newuser23 N4)
            if step != self._step:
                print(frame.long_label, file=self.stream, flush=True)
                self._step = step
            self._phase = frame.phase
            return
        if frame.phase != self._phase or (self._bar is not None and (self._bar.total is None) != (frame.fraction is None)):
            self.close()
            from tqdm import tqdm

            fraction = frame.fraction
            known = fraction is not None
            # drawn first with what fits (newuser23 N4: the first frame, drawn as the bar was made, had the
            # whole label, cut at the edge mid-clock)
            size = _size(self.stream)
            line, with_bar = fitted(frame, size["ncols"])
            self._bar = tqdm(total=100 if known else None, desc=line, file=self.stream, leave=False, **size,
                             bar_format=_format(frame, with_bar), initial=bar_percent(fraction) if fraction is not None else 0)
            self._phase = frame.phase
        bar = self._bar
        # the room left now: the terminal's width as it is at each frame, for the line's choice and for
        # the bar alike (verify22 V3: a bar sized at its start, on a terminal narrowed since, was cut at
        # the right edge — its number and time lost while the long label was kept)
        columns = _size(self.stream)["ncols"]
        line, with_bar = fitted(frame, columns)
        bar.ncols = columns
        bar.bar_format = _format(frame, with_bar)
        bar.set_description_str(line, refresh=False)
        if frame.fraction is not None:
            bar.n = bar_percent(frame.fraction)
        bar.refresh()

    def close(self) -> None:
        """Remove the bar (the caller prints the final line, or a notice: the next :meth:`show`
        draws a new one)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
            self._phase = ""

    def __enter__(self) -> TerminalProgress:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class CountingProgress:
    """``cancelling |█████     | 61/122`` while a bulk action works through its items.

    Args:
        stream: where to draw (stderr).
        total: number of items.
        label: what is being done.
    """

    def __init__(self, stream: TextIO, *, total: int, label: str) -> None:
        self._bar: Any = None
        if _is_terminal(stream) and total > 1:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=label, file=stream, leave=False, **_size(), unit="job")

    def advance(self, n: int = 1) -> None:
        """``n`` more items done."""
        if self._bar is not None:
            self._bar.update(n)

    def __enter__(self) -> CountingProgress:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.close()
