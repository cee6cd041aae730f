"""The route a mistyped path under ``api/sched/`` most likely meant, for the 404 of an unknown route
(new user 20, N27: ``POST definitions/d-1/run`` got "no route … see GET api/sched/config" while the
route is ``…/runs`` — an unknown body field already gets a "did you mean")."""

from __future__ import annotations

import difflib
import re

from ..textsafe import escaped_controls

__all__ = ["guess_route", "unknown_route_hint"]

_GROUP = re.compile(r"\(\?P<[a-z_]+>(\[\^/\]\+|[a-z|-]+)\)")


def guess_route(path: str, patterns: list[str]) -> str | None:
    """``path`` rewritten onto the route pattern it is one typo away from (``definitions/d-1/runs``
    for ``definitions/d-1/run``), or None: same number of segments, every id segment kept as sent,
    every literal segment equal but one, and that one close (difflib ratio >= 0.75)."""
    sent = path.strip("/").split("/")
    best: tuple[float, str] | None = None
    for pattern in patterns:
        groups = _GROUP.findall(pattern)  # an id group holds a "/" ([^/]+): split around the groups
        parts = [f"\0{groups.pop(0)}" if part == "\0" else part for part in _GROUP.sub("\0", pattern).split("/")]
        if len(parts) != len(sent):
            continue
        out: list[str] = []
        misses: list[float] = []
        for part, word in zip(parts, sent, strict=True):
            group = part[1:] if part.startswith("\0") else None
            if group is None:
                if part != word:
                    misses.append(difflib.SequenceMatcher(None, part, word).ratio())
                out.append(part)
            elif group == "[^/]+":
                out.append(word)
            else:  # an alternation such as pause|resume: the closest choice
                choices = group.split("|")
                close = difflib.get_close_matches(word, choices, n=1, cutoff=0.75)
                if word not in choices:
                    misses.append(difflib.SequenceMatcher(None, close[0], word).ratio() if close else 0.0)
                out.append(word if word in choices else close[0] if close else choices[0])
        if len(misses) == 1 and misses[0] >= 0.75 and (best is None or misses[0] > best[0]):
            best = (misses[0], "/".join(out))
    return best[1] if best else None


def unknown_route_hint(path: str) -> str:
    """The hint of the 404 for ``path``: the route it most likely meant, else where the routes are listed."""
    from .routes import ROUTES  # here: the routes import the handler that calls this

    meant = guess_route(path[:400], [pattern for pattern, _ in ROUTES])
    # the guess keeps the id segments as sent: escaped as the message's quote of the path is (red27 R3)
    return (f"did you mean {escaped_controls(meant[:120])}? (openapi.yaml lists the routes)" if meant
            else "see GET api/sched/config and openapi.yaml for the routes")
