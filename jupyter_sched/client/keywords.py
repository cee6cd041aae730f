"""A request given as keywords beside the wire body: ``submit(command=[...], gpus=1)`` as well as
``submit({"command": [...], "gpus": 1})`` (newuser42 N1: the keywords were a TypeError from Python's internals,
a string body "dictionary update sequence element #0 …"). One function per request, checked at the call:
nothing is sent for a wrong shape."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ._routes import LEASE_EXAMPLE, SUBMIT_EXAMPLE, _body

__all__ = ["lease_body", "submit_body"]


def _one_form(call: str, body: Mapping[str, Any] | None, given: dict[str, Any], example: str) -> dict[str, Any] | None:
    """``body`` as a dict, or None where the request is given as keywords (``given``, those not None).

    Raises:
        TypeError: both a body and keywords (naming both), neither, or a body that is no mapping."""
    if body is not None and given:
        named = ", ".join(f"{key}=" for key in given)
        raise TypeError(f"{call}() takes the request as a body or as keywords, not both: a body and {named} were "
                        f"given — put them in the body, or give every field as a keyword")
    if body is None and not given:
        raise TypeError(f"{call}() needs the request: e.g. {call}({example})")
    return _body(body, example) if body is not None else None


def _command(command: Any) -> list[str]:
    """A ``command=`` keyword as the wire's list of strings.

    Raises: TypeError: a single string (a command line) or anything else, saying the list it takes."""
    if isinstance(command, str):
        raise TypeError(f"command must be a list of the program and its arguments, e.g. command=['python', "
                        f"'train.py'] (got the str {command!r:.80}: shlex.split(text) splits a command line)")
    if not isinstance(command, Sequence) or not all(isinstance(part, str) for part in command):
        raise TypeError(f"command must be a list of str, e.g. command=['python', 'train.py'] (got {command!r:.80})")
    return list(command)


def submit_body(body: Mapping[str, Any] | None, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The ``POST jobs`` body of ``submit(body)`` or ``submit(command=…, gpus=…, name=…, time_limit=…, **fields)``:
    the body as given; the keywords (None: not given) as the wire's fields, ``command`` a list, and
    ``working_dir`` this process's folder unless given (as the CLI's ``submit``: ``python train.py`` runs where
    the script is)."""
    given = {key: value for key, value in fields.items() if value is not None}
    as_body = _one_form("submit", body, given, SUBMIT_EXAMPLE)
    if as_body is not None:
        return as_body
    if "command" in given:
        given["command"] = _command(given["command"])
    given.setdefault("working_dir", os.getcwd())
    return given


def lease_body(body: Mapping[str, Any] | None, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The ``POST leases`` body of ``request_lease(body)`` or ``request_lease(gpus=…, kernel_id=…, **fields)``."""
    given = {key: value for key, value in fields.items() if value is not None}
    as_body = _one_form("request_lease", body, given, LEASE_EXAMPLE)
    return as_body if as_body is not None else given
