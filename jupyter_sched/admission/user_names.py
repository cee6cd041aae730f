"""Hub user names that read as ANOTHER known user's (red team 29, R2): TR39's skeleton, pure, standard library only.

:mod:`jupyter_sched.hub.lookalike_names` refuses a hub name that reads as another whatever other names exist
(invisible, bidirectional, styled or mixed-alphabet characters, not NFKC). A name that passes all of that can
still read as a colleague's: a whole-script look-alike, every letter Cyrillic (``\\u0430\\u0441\\u0435`` for
``ace``), or a dotless i (U+0131) for i. :func:`lookalike_of` finds the known user whose name has the same
:func:`skeleton` — TR39's skeleton (*Unicode Security Mechanisms* section 4: NFKC, case folded, default-ignorables
dropped, each look-alike letter mapped to its prototype). TR39's confusables data is not in Python's database and no
library carrying it is a dependency, so :data:`PROTOTYPES` holds the Cyrillic, Greek, Armenian and Latin letters
confusables.txt maps to a single plain Latin letter: a pair of ASCII names TR39 calls confusable (``rn`` / ``m``,
``l`` / ``1``) is not caught. An ASCII name is never the one refused (admin-made names are ASCII; the look-alike is
the other one); of two non-ASCII look-alikes the one with more non-ASCII characters is (both when they hold as many).
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable, Mapping

from .rules import BIDI_CONTROLS, BLANK_LOOKING, DEFAULT_IGNORABLE_RANGES, INVISIBLE_CATEGORIES

__all__ = ["PROTOTYPES", "lookalike_of", "skeleton", "skeletons"]

PROTOTYPES: Mapping[str, str] = {
    # Cyrillic (lower case; skeleton() folds case first)
    "\u0430": "a", "\u0435": "e", "\u043e": "o", "\u0440": "p", "\u0441": "c", "\u0443": "y", "\u0445": "x",
    "\u0456": "i", "\u0458": "j", "\u0455": "s", "\u0501": "d", "\u051b": "q", "\u051d": "w", "\u04bb": "h",
    "\u04cf": "l", "\u0475": "v", "\u0461": "w", "\u044c": "b",
    # Greek
    "\u03b1": "a", "\u03bf": "o", "\u03bd": "v", "\u03c1": "p", "\u03b9": "i", "\u03ba": "k", "\u03c7": "x",
    "\u03c5": "u", "\u03f2": "c", "\u03f3": "j", "\u03b3": "y",
    # Armenian
    "\u0585": "o", "\u057d": "u", "\u0570": "h", "\u0578": "n", "\u0581": "g", "\u0566": "q", "\u0575": "j",
    # Latin letters drawn as plain ones
    "\u0131": "i", "\u0237": "j", "\u0251": "a", "\u0261": "g", "\u0269": "i", "\u028b": "u", "\u0299": "b",
}
"""Letters Unicode's confusables.txt (TR39) gives a single plain Latin letter as prototype: the part of its
data this module carries (module docstring)."""


def _ignorable(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in DEFAULT_IGNORABLE_RANGES)


def _invisible(char: str) -> bool:
    return (char in BIDI_CONTROLS or char in BLANK_LOOKING or unicodedata.category(char) in INVISIBLE_CATEGORIES
            or _ignorable(char))


@functools.lru_cache(maxsize=4096)
def skeleton(name: str) -> str:
    """``name`` as TR39's skeleton reads it (module docstring): equal skeletons read as the same name."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return "".join(PROTOTYPES.get(char, char) for char in folded if not _invisible(char))


def skeletons(names: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """``{skeleton: the names that have it, sorted}`` of ``names`` (the known users)."""
    found: dict[str, set[str]] = {}
    for name in names:
        found.setdefault(skeleton(name), set()).add(name)
    return {key: tuple(sorted(group)) for key, group in found.items()}


def _foreign(name: str) -> int:
    return sum(1 for char in name if ord(char) >= 0x80)


def lookalike_of(name: str, known: Mapping[str, tuple[str, ...]]) -> str | None:
    """The known user (``known``: :func:`skeletons` of the known names) whose name ``name`` reads as and
    should yield to (module docstring: never for an ASCII ``name``), or None."""
    foreign = _foreign(name)
    if not foreign:
        return None
    return next((other for other in known.get(skeleton(name), ()) if other != name and _foreign(other) <= foreign),
                None)
