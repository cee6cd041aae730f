"""Hub user names that read as another user's (red team 29, R2): pure, standard library only.

Where users pick their own hub names (OAuth or LDAP sign-up), a name can be made to read as a colleague's:
``amy`` with a Cyrillic a (U+0430), with a fullwidth a (U+FF41), with a zero-width space after it (U+200B),
or U+202E (right-to-left override) followed by the name reversed. Every act of such a user was served and
audited under a name an admin reads as amy's. The central service refuses such a caller (403, audited under
:func:`escaped_name`) by :func:`name_problem` — what makes a name unsafe whatever other names exist — and
:func:`lookalike_of` — the other known user it reads as:

* :func:`name_problem`: a control, format (Cf: zero-width, bidirectional, the BOM), line-separator or other
  default-ignorable character; a name that Unicode's compatibility normalization (NFKC) changes (fullwidth,
  mathematical, ligature letters, a no-break space); a space at either end; letters of two look-alike
  alphabets in one word (:func:`~.lookalikes.mixed_word`, Unicode TR39's mixed-script test).
* :func:`lookalike_of`: another known name with the same :func:`skeleton` — TR39's skeleton (§4: NFKC, case
  folded, default-ignorables dropped, each look-alike letter mapped to its Latin prototype). TR39's
  confusables data is not in Python's database and no library carrying it is a dependency, so
  :data:`PROTOTYPES` holds the Cyrillic, Greek, Armenian and Latin letters confusables.txt maps to a
  single Latin letter: a whole-script look-alike (``\\u0430\\u0441\\u0435``, all Cyrillic, for ``ace``) is caught, a pair
  of ASCII names TR39 calls confusable (``rn`` / ``m``, ``l`` / ``1``) is not. An ASCII name is never
  refused for its look-alike (admin-made names are ASCII; the look-alike is the other one), and of two
  non-ASCII look-alikes the one with more non-ASCII characters is refused (both when they hold as many).
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable, Mapping

from .lookalikes import mixed_word
from .rules import BIDI_CONTROLS, BLANK_LOOKING, DEFAULT_IGNORABLE_RANGES, INVISIBLE_CATEGORIES

__all__ = ["PROTOTYPES", "REFUSED_NAME", "escaped_name", "lookalike_of", "name_problem", "skeleton", "skeletons"]

REFUSED_NAME = "refused_name"
"""The key of a look-alike name's refusal ``details`` holding the name escaped (:func:`escaped_name`): the user
its audit row is written under (the web layer's refusal audit), never the name as it reads."""

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


def _named(char: str) -> str:
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" ({name.lower()})" if name else "")


@functools.lru_cache(maxsize=4096)
def name_problem(name: str) -> str | None:
    """What makes hub user name ``name`` read as another one (module docstring), said as the end of a
    sentence (``holds U+200B (zero width space), an invisible character``); None for a safe name."""
    for char in name:
        if _invisible(char):
            return f"holds {_named(char)}, an invisible or reordering character"
    plain = unicodedata.normalize("NFKC", name)
    if plain != name:
        at = next(i for i, char in enumerate(name) if unicodedata.normalize("NFKC", char) != char)
        return (f"holds {_named(name[at])}, a styled form of {unicodedata.normalize('NFKC', name[at])!r} "
                "(the name is not in Unicode's NFKC form)")
    if name != name.strip():
        return "starts or ends with a space"
    if (mixed := mixed_word(name)) is not None:
        scripts = [s.title() for s in mixed[1]]
        return f"mixes {' and '.join(scripts)} letters in one word"
    return None


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


def escaped_name(name: str) -> str:
    """``name`` with every non-ASCII character written as its escape (``r2937\\u0430464``,
    ``amy\\u200b``): how a refused name is audited and said, so it never reads as the user it imitates."""
    return name.encode("ascii", "backslashreplace").decode("ascii")
