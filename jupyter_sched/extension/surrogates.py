"""Lone UTF-16 surrogates in a decoded JSON body (``"\\ud800"`` escapes decode to text no UTF-8 client
can print): found and named before a request model sees the body (``SchedHandler.json_value``)."""

from __future__ import annotations

from typing import Any

__all__ = ["lone_surrogate"]


def lone_surrogate(value: Any, path: str = "body", depth: int = 0) -> str | None:
    """Dotted path (at most 80 characters) of the first string or key in decoded JSON ``value``
    holding a lone surrogate; None when there is none."""
    if isinstance(value, str):
        return path if _has_surrogate(value) else None
    if depth > 64:  # deeper bodies are refused by their models
        return None
    items: Any = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(key, str) and _has_surrogate(key):
            return path
        where = (key if path == "body" else f"{path}.{key}") if isinstance(key, str) else f"{path}[{key}]"
        found = lone_surrogate(item, where[:80], depth + 1)
        if found is not None:
            return found
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False

