"""Names that differ from a known one only in letter case (verify21 V10: ``Vision`` for ``vision``).

Team names, like job ids, are case-sensitive: ``Vision`` is another team. A refusal or warning that
names an unknown one offers the known one it matches ignoring case ("did you mean vision?").
"""

from __future__ import annotations

from collections.abc import Iterable


def case_twin(name: str, known: Iterable[str]) -> str | None:
    """The one name of ``known`` equal to ``name`` ignoring case but not spelt the same; None when
    ``name`` is known as spelt, or no known name (or more than one) matches it so.

    Args:
        name: the name as given (a team, a GPU model, a queue).
        known: the names that exist.
    """
    names = set(known)
    if name in names:
        return None
    twins = sorted(k for k in names if k.casefold() == name.casefold())
    return twins[0] if len(twins) == 1 else None


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``did you mean 'vision'? (names are case-sensitive)`` for :func:`case_twin`'s match; "" when none."""
    twin = case_twin(name, known)
    return f"did you mean {twin!r}? (names are case-sensitive)" if twin else ""
