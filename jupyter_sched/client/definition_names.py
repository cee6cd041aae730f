"""A definition as a person names it: its id (``d-…``) or its name, for the CLI and the magics alike.

verify21 V5: ``%schedule define show dny`` said "no definition 'dny' visible to you" while
``jupyter-sched definitions show dny`` found it: the magic took ids only. Both now resolve here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import ValidationError
from ._routes import routes


def definition_id(call: Callable[[Any], Any], target: str) -> str:
    """The id of the definition ``target`` names: ``target`` itself when it is an id (``d-…``), else
    the id of the one definition of mine with that name, else ``target`` unchanged (the server then
    answers "no definition … visible to you", as for an unknown id).

    Args:
        call: sends one :class:`~jupyter_sched.client._wire.Req` and returns the decoded JSON.
        target: an id or a name as typed.

    Raises:
        ValidationError: several of my definitions have that name (field ``definition_id``; the hint
            lists their ids).
    """
    if target.startswith("d-"):
        return target
    mine = [d for d in call(routes.definitions(name=target)) if d.get("name") == target]  # one small page (red28 R6)
    if len(mine) > 1:
        raise ValidationError(f"{len(mine)} of your definitions are named {target!r}", field="definition_id",
                              hint="give the id of one: " + ", ".join(str(d["id"]) for d in mine))
    return str(mine[0]["id"]) if mine else target
