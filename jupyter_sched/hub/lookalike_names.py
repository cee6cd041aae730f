"""Hub user names that read as another user's are refused by the central service (red 29, R2).

Where users pick their hub names (OAuth or LDAP sign-up), a name can be drawn exactly as a colleague's: a Cyrillic
a (U+0430) or a fullwidth a (U+FF41) for a Latin ``a``, a trailing zero-width space (U+200B), or a
right-to-left override (U+202E) with the name written backwards. The service served and audited such users under
those names: the audit's actor, user and words read as the colleague's, and a filter on the colleague's name did not
find them. Now a hub user whose name is not in Unicode's compatibility form (NFKC) or that fails the check every
user-chosen name passes here (:func:`~jupyter_sched.admission.rules.visible_text`: invisible, bidirectional,
look-alike-alphabet and compatibility characters) is answered 403 naming the character and the fix, on every
request; the refusal is audited under the name escaped (``amy\\u200b``), at most once a minute per name
(:class:`LookalikeNames`).

Pure but for the clock passed in.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from functools import lru_cache

from ..admission.rules import visible_text
from ..admission.user_names import lookalike_of
from ..errors import AuthorizationError, ValidationError
from ..textsafe import escaped_controls

__all__ = ["AUDIT_EVERY_S", "MAX_HUB_NAME_CHARS", "LookalikeNames", "lookalike_refusal", "name_problem", "shown_name"]

MAX_HUB_NAME_CHARS = 255
"""JupyterHub's longest user name."""
AUDIT_EVERY_S = 60.0
"""A refused name is audited at most once per this many seconds."""


def shown_name(name: str) -> str:
    """``name`` with every character that is not drawn as itself escaped: controls, bidirectional and invisible
    format characters (:func:`~jupyter_sched.textsafe.escaped_controls`) and any other non-ASCII character that
    NFKC changes or that is not printable (``r2937\\uff41464``); a Cyrillic letter is kept (it is named in the
    refusal)."""
    out = []
    for char in escaped_controls(name):
        if ord(char) > 0x7F and (not char.isprintable() or unicodedata.normalize("NFKC", char) != char
                                 or unicodedata.category(char) == "Cf"):
            out.append(f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}")
        else:
            out.append(char)
    return "".join(out)


@lru_cache(maxsize=4096)
def name_problem(name: str) -> str | None:
    """Why hub user name ``name`` may read as another's (the words of the refusal), or None."""
    try:
        visible_text(name, "the name", limit=MAX_HUB_NAME_CHARS)
    except ValidationError as err:
        return str(err.message)
    plain = unicodedata.normalize("NFKC", name)
    if plain != name:
        return f"the name is not in Unicode's compatibility form (NFKC): it reads as {shown_name(plain)!r}"
    return None


def lookalike_refusal(name: str, known: Mapping[str, tuple[str, ...]] | None = None) -> AuthorizationError | None:
    """The 403 for hub user ``name`` (field ``user``; :func:`name_problem`; or, ``known`` being the
    :func:`~jupyter_sched.admission.user_names.skeletons` of the hub's user names, a name whose skeleton is another
    known user's: :func:`~jupyter_sched.admission.user_names.lookalike_of`), or None for a plain name. A look-alike
    of another user is said and audited with every non-ASCII character escaped (its letters pass every other rule:
    kept, ``\u0430\u0441\u0435`` would be audited as what reads ``ace``)."""
    problem = name_problem(name)
    other = lookalike_of(name, known) if problem is None and known else None
    if problem is None and other is None:
        return None
    shown = shown_name(name) if other is None else name.encode("ascii", "backslashreplace").decode("ascii")
    if other is not None:
        problem = (f"it reads as the name of another hub user, {shown_name(other)!r} (Unicode TR39 skeleton: the same "
                   "letters once look-alike letters of other alphabets are read as Latin ones)")
    return AuthorizationError(
        f"the hub user name '{shown}' may read as another user's, so this service refuses it: {problem}",
        field="user",
        hint="a hub admin renames the user to plain characters (letters of one alphabet, digits, - _ . @), or "
             "removes them; names that read as a colleague's would make the audit log and the queue misread",
        details={"user": shown, **({"lookalike_of": shown_name(other)} if other is not None else {})})


class LookalikeNames:
    """Which refused names are due an audit record (at most one per name per :data:`AUDIT_EVERY_S`)."""

    def __init__(self, every_s: float = AUDIT_EVERY_S, kept: int = 1024) -> None:
        self.every_s, self.kept = every_s, kept
        self._last: dict[str, float] = {}

    def due(self, name: str, now: float) -> bool:
        """Whether ``name``'s refusal at ``now`` (monotonic seconds) is audited (then its minute starts)."""
        last = self._last.get(name)
        if last is not None and now - last < self.every_s:
            return False
        if len(self._last) >= self.kept:
            self._last.clear()
        self._last[name] = now
        return True
