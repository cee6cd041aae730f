"""A request body's decode and checks: bounded in items before any walk, and off the event loop (red38 R1).

red38 R1: a 16 MiB body of tiny objects (``{"command": ["true"], "x": [{}, {}, …]}``) cost ~4.6 s of
pure-Python work — ``json.loads`` with the duplicate-key hook, then the out-of-range-number and
lone-surrogate walks — on the service's event loop, before any field was checked: every user's calls waited
(20 s with four such connections) and the hub lookup of the sender himself timed out (503).

Now every body goes through :func:`decoded_body` (:meth:`~.web.SchedHandler.json_value`, ``.body``,
``.json_body``):

1. a body past :data:`ON_LOOP_BYTES` is handled on a request thread in its sender's line
   (:mod:`.per_user_lines`): one user's bodies queue behind each other, not behind others' requests;
2. there, before anything is decoded, :func:`body_items` counts its JSON items (strings, objects, arrays and
   the commas between values) at C speed, 1 MiB at a time, stopping once past the bound; past
   :data:`MAX_BODY_ITEMS` the body is refused 413 (field ``body``, the bound in the message), audited as a
   flood is (:mod:`.floods`: one record a minute per user) — so what is decoded and walked is bounded;
3. then the decode and the walks, as before.

A carried notebook (``notebook_json``: one JSON string of up to 8 MiB) is a handful of items: it is counted
in a few C passes and decoded at C speed, as before, off the loop.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import TooLargeError, ValidationError
from ..model.validation import out_of_range_number
from .audit_names import request_name
from .duplicate_keys import DuplicateKey, unique_object
from .floods import audit_flood
from .surrogates import lone_surrogate

__all__ = ["MAX_BODY_ITEMS", "ON_LOOP_BYTES", "TooLargeError", "audit_too_large", "body_items", "decoded_body"]

MAX_BODY_ITEMS = 200_000
"""Most JSON items (:func:`body_items`) of a request body. The largest bodies the API takes hold far fewer:
a bulk cancel of its most ids (10,000: ~20,000 items), a quota write naming tens of thousands of members;
a carried notebook is one string. Decoding and walking this many costs ~0.2 s of one request thread."""

ON_LOOP_BYTES = 16 * 1024
"""Bodies up to this many bytes are decoded on the event loop (at most ~16,000 items: a few ms), the rest on
a request thread: a submit's usual few hundred bytes take no thread hop."""

_PIECE_BYTES = 1 << 20
"""Bytes :func:`body_items` looks at in one C pass: the interpreter may switch threads between pieces."""

_STRUCTURE = b",[{"


def body_items(raw: bytes, most: int = MAX_BODY_ITEMS, piece: int = _PIECE_BYTES) -> int:
    """The JSON items of ``raw`` — each string (object keys too), each object or array opened, each comma
    outside a string — counted by C passes of ``piece`` bytes at a time; stops once past ``most``.

    Escaped backslashes and quotes (``\\\\``, ``\\"``) are dropped first, so every quote left opens or closes
    a string; a run of backslashes is never split from what it escapes. Not a validator: malformed JSON
    is counted as it falls and refused by the decoder after.

    Returns:
        The count, or a count past ``most`` as soon as one is reached.
    """
    items, in_string, start, size = 0, False, 0, len(raw)
    while start < size and items <= most:
        end = min(size, start + piece)
        while end < size and raw[end - 1] == 0x5C:  # a backslash: keep its run and the byte it escapes
            end += 1
        chunk = raw[start:end]
        start = end
        if b"\\" in chunk:
            chunk = chunk.replace(b"\\\\", b"").replace(b'\\"', b"")
        quotes = chunk.count(b'"')
        opened = quotes // 2 if in_string else (quotes + 1) // 2
        if items + opened > most:  # a body of quotes: never split into a million pieces
            return items + opened
        if quotes:
            outside = b"".join(chunk.split(b'"')[1 if in_string else 0::2])
        else:
            outside = b"" if in_string else chunk
        items += opened + len(outside) - len(outside.translate(None, _STRUCTURE))
        in_string ^= quotes % 2 == 1
    return items


def too_many_items(items: int, most: int) -> TooLargeError:
    """The 413 of a body of more than ``most`` items (``items``: at least this many)."""
    return TooLargeError(f"request body holds more than {most:,} JSON items (strings, objects, arrays, values: "
                         f"at least {items:,}); this service reads at most {most:,}", field="body",
                         hint="send only the documented fields: the largest request (a bulk cancel of 10,000 "
                              "ids, a carried notebook as one notebook_json string) holds far fewer",
                         details={"most_items": most})


def audit_too_large(handler: Any, refused: TooLargeError) -> None:
    """Put ``refused`` (a :class:`~.web.SchedHandler`'s body) on the audit log as a flood is (:mod:`.floods`):
    at most one record a minute per user, the rest counted — not one per body a loop sends."""
    name = handler.own_name()
    if name is not None:
        audit_flood(handler, name, code="too_large", message=f"{name} sent a request body refused 413: "
                    f"{refused.message}", request=request_name(handler.request.method or "", handler._template))


def _reject_constant(name: str) -> Any:
    """``json.loads`` hook: ``NaN``/``Infinity`` are not JSON and no field accepts them."""
    raise ValueError(f"{name} is not a valid JSON value")


def decoded_body(raw: bytes, *, most: int = MAX_BODY_ITEMS) -> Any:
    """``raw`` (a request body, not empty) as decoded JSON, once its items are within ``most``
    (checked for bodies past :data:`ON_LOOP_BYTES`; smaller ones cannot hold that many).

    Raises:
        TooLargeError: field ``body``, more than ``most`` items (413).
        ValidationError: field ``body`` when not JSON or nested too deeply; the key an object gives
            twice; the path of an out-of-range number or a lone surrogate.
    """
    if len(raw) > ON_LOOP_BYTES and (items := body_items(raw, most)) > most:
        raise too_many_items(items, most)
    try:
        value = json.loads(raw, parse_constant=_reject_constant, object_pairs_hook=unique_object)
    except DuplicateKey as twice:  # the last one silently won (new user 20, N27)
        key = twice.key if len(twice.key) <= 80 else twice.key[:77] + "..."
        raise ValidationError(f"{key} is given twice in the body; give it once", field=key, hint="remove "
                              "one of the two (JSON readers differ on which one counts)") from None
    except json.JSONDecodeError as err:
        raise ValidationError(f"request body is not valid JSON (line {err.lineno}, column {err.colno})",
                              field="body", hint="send a JSON object with Content-Type: application/json") from None
    except (ValueError, UnicodeDecodeError):
        raise ValidationError("request body is not valid JSON (not UTF-8 text, or NaN/Infinity)", field="body",
                              hint="send a JSON object with Content-Type: application/json") from None
    except RecursionError:
        raise ValidationError("request body is nested too deeply", field="body",
                              hint="send a flat JSON object of the documented fields") from None
    huge = out_of_range_number(value)
    if huge is not None:  # a 401-digit number: float() of it raised deep in a parser, a 500 (red team 25, R1)
        raise huge
    where = lone_surrogate(value)
    if where is not None:  # "\ud800" escapes decode to text no UTF-8 client can print (stored, shown to all)
        raise ValidationError(f"{where} contains a lone UTF-16 surrogate (an invalid character)", field=where,
                              hint="send valid Unicode text: surrogates only in pairs, as \\uD83D\\uDE00")
    return value
