"""A script's parameters against the options it declares (newuser42 n4: ``-p fial=yes`` on a script
definition was accepted silently, and each firing failed ``unrecognized arguments: --fial yes``, while the
notebook case warned "did you mean").

A script gets each parameter as ``--NAME VALUE`` (:func:`.parameters.script_arguments`). Its options are known
only where the text declares them with argparse's ``add_argument`` and literal names, read here as text (a
pattern, never compiled or run: the service reads every user's scripts in its shared process). Where they
cannot be known (another parser, ``sys.argv``, a name built at run time, ``parse_known_args``), a definition's
save says so once, and a run that fails on an unknown option says which parameter and how to fix it
(:func:`unknown_option_hint`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["declared_options", "script_note", "script_parameters_note", "unknowable_note", "unknown_option_hint"]

_CALL = re.compile(r"\.add_argument\(")
_LITERALS = re.compile(r"""\.add_argument\(\s*((?:[rRuU]?(?:"[^"\\\n]*"|'[^'\\\n]*')\s*,\s*)*[rRuU]?(?:"[^"\\\n]*"|'[^'\\\n]*'))""")
_STRING = re.compile(r"""["']([^"'\\\n]*)["']""")
SCANNED_CHARS = 256 << 10
"""Longest script text read for its options: the service scans every user's scripts in its shared process, and a
hostile 8 MiB of ``.add_argument("a", `` held it for 0.8 s; 256 KiB is ~25 ms at worst. A longer script's options
are not known (its save says so)."""
_NAMED = 5
"""Most unknown parameters a note names."""
_LISTED = 30
"""Most of the script's own options a note lists."""


def declared_options(text: bytes | str) -> tuple[str, ...] | None:
    """The long options (``--epochs``) a script's text declares with argparse, in its order; None when they
    cannot be known from the text: no ``add_argument`` at all, one whose names are not literal strings, a
    script that tolerates unknown options (``parse_known_args``), or one longer than :data:`SCANNED_CHARS`."""
    if len(text) > SCANNED_CHARS:
        return None
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    calls = len(_CALL.findall(text))
    if not calls or "parse_known_args" in text or "parse_known_intermixed_args" in text:
        return None
    found = _LITERALS.findall(text)
    if len(found) != calls:  # a name built at run time: add_argument(f"--{x}"), add_argument(*names)
        return None
    options: list[str] = []
    for names in found:
        options += [n for n in _STRING.findall(names) if n.startswith("--")]
    if "add_help=False" not in text:
        options.append("--help")
    return tuple(dict.fromkeys(options))


def _accepted(name: str, options: tuple[str, ...], abbrev: bool) -> bool:
    """Whether argparse takes ``--name`` (a unique prefix too, unless the parser says allow_abbrev=False)."""
    flag = f"--{name}"
    if flag in options:
        return True
    return abbrev and len([o for o in options if o.startswith(flag)]) == 1


def script_parameters_note(text: bytes | str, parameters: Mapping[str, Any], script: str) -> str:
    """``parameter 'fial' is not an option of train.py (--fail, --epochs) — did you mean 'fail'? Its runs get
    --fial yes, which train.py refuses: each would fail (unrecognized arguments).`` — "" when every
    parameter is an option the text declares, or its options cannot be known (:func:`declared_options`)."""
    if not parameters:
        return ""
    options = declared_options(text)
    if options is None:
        return ""
    shown = text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text
    abbrev = "allow_abbrev=False" not in shown
    unknown = [str(p) for p in parameters if not _accepted(str(p), options, abbrev)]
    if not unknown:
        return ""
    names = [o[2:] for o in options if o != "--help"]
    guesses = [g for p in unknown[:_NAMED] for g in difflib.get_close_matches(p[:100], names, n=1)]
    one = len(unknown) == 1
    which = ", ".join(f"'{p[:100]}'" for p in unknown[:_NAMED]) + \
        (f" and {len(unknown) - _NAMED} more" if len(unknown) > _NAMED else "")
    listed = ", ".join(f"--{n}" for n in names[:_LISTED]) + (f", … ({len(names)} in all)" if len(names) > _LISTED else "")
    said = (f"parameter{'' if one else 's'} {which} {'is' if one else 'are'} not {'an option' if one else 'options'} "
            f"of {script} ({listed or 'it declares none'})")
    said += f" — did you mean {' or '.join(repr(g) for g in dict.fromkeys(guesses))}?" if guesses else "."
    first = unknown[0]
    return (said + f" Its runs get --{first[:100]} {_value(parameters[first])}, which {script} refuses: each run would "
            "fail (unrecognized arguments).")


def unknowable_note(parameters: Mapping[str, Any], script: str) -> str:
    """The note a script definition's save gives when its options cannot be read from its text: what its runs
    get, and that a run failing on an unknown one will say which."""
    if not parameters:
        return ""
    given = " ".join(f"--{str(p)[:100]} {_value(v)}" for p, v in list(parameters.items())[:_NAMED])
    return (f"{script}'s options cannot be read without running it (they are not declared by argparse's "
            f"add_argument with literal names): its runs get {given}; check they are options it takes — a run that "
            "fails on an unknown one says which parameter to fix.")


def script_note(text: bytes | str, parameters: Mapping[str, Any], script: str, *, saved: bool) -> str:
    """The note on ``parameters`` given to the script whose ``text`` this is: :func:`script_parameters_note`; on
    a definition's save (``saved``) whose script's options cannot be known, :func:`unknowable_note`."""
    if not parameters:
        return ""
    if saved and declared_options(text) is None:
        return unknowable_note(parameters, script)
    return script_parameters_note(text, parameters, script)


_UNRECOGNIZED = re.compile(r"unrecognized arguments: ([^\n;]*)")


def unknown_option_hint(message: str, parameters: Mapping[str, Any], definition: str) -> str:
    """What a failed run's ``message`` (its last log lines: argparse's ``error: unrecognized arguments: --fial
    yes``) says about the definition's own parameters, and how to fix the definition: ``parameter 'fial' of
    nightly is no option of train.py's: remove it (jupyter-sched definitions edit nightly --unset-parameter
    fial) or give the script's own name (-p NAME=VALUE)``; "" when no parameter is among them."""
    found = _UNRECOGNIZED.search(message or "")
    if not found or not parameters:
        return ""
    words = [w.split("=", 1)[0] for w in found.group(1).split() if w.startswith("--")]
    named = [p for p in map(str, parameters) if f"--{p}" in words]
    if not named:
        return ""
    import shlex

    quoted = ", ".join(f"'{p[:100]}'" for p in named[:_NAMED])
    unset = " ".join(f"--unset-parameter {p[:100]}" for p in named[:_NAMED])
    one = len(named) == 1
    return (f"parameter{'' if one else 's'} {quoted} of {definition[:100]} {'is' if one else 'are'} not among the "
            f"script's options: remove {'it' if one else 'them'} (jupyter-sched definitions edit "
            f"{shlex.quote(definition[:100])} "
            f"{unset}) or give the script's own option name (-p NAME=VALUE)")


def _value(value: Any) -> str:
    """A parameter's value as its run's argument word (:func:`.parameters.script_arguments`), bounded."""
    import json

    return (value if isinstance(value, str) else json.dumps(value))[:40]
