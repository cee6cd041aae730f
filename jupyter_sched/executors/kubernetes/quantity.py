"""Kubernetes resource quantities and object names, as pure functions.

Quantities follow ``k8s.io/apimachinery/pkg/api/resource`` (``"500m"``, ``"4"``, ``"16Gi"``,
``"1e3"``); names and label values follow the DNS-1123 and label-value rules of
``k8s.io/apimachinery/pkg/util/validation``. Neither the schema nor ``kubernetes-validate``
checks these formats (``nvidia.com/gpu: "two"`` passes the schema), so we check them here.
"""

from __future__ import annotations

import hashlib
import re
from decimal import Decimal, InvalidOperation

from kubernetes.utils import parse_quantity as _client_parse_quantity

from ...errors import ValidationError

__all__ = [
    "LABEL_VALUE_RE",
    "QUANTITY_RE",
    "dns_label",
    "format_cpu",
    "format_memory_mib",
    "is_quantity",
    "label_value",
    "parse_quantity",
]

QUANTITY_RE = re.compile(
    r"^[+-]?(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$")
"""A Kubernetes quantity string (``resource.MustParse`` grammar)."""

LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
"""A label value: at most 63 characters, alphanumeric at both ends."""

_DNS_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def is_quantity(text: object) -> bool:
    """True when ``text`` is a string in Kubernetes quantity syntax."""
    return isinstance(text, str) and QUANTITY_RE.match(text) is not None


def parse_quantity(value: str | int | float, *, field: str = "quantity") -> Decimal:
    """Parse a Kubernetes quantity into a :class:`~decimal.Decimal` in base units.

    ``"500m"`` → 0.5 (cores), ``"16Gi"`` → 17179869184 (bytes), ``"8"`` → 8, ``"1e3"`` → 1000.
    The grammar is the client's own (:func:`kubernetes.utils.parse_quantity`); this wrapper only
    turns its ``ValueError`` into a validation error naming the field.

    Raises:
        ValidationError: not quantity syntax (``"two"``).
    """
    if isinstance(value, bool):
        raise ValidationError(f"{field} must be a quantity (got {value!r})", field=field,
                              hint='use e.g. "4", "500m" or "16Gi"')
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    text = str(value).strip()
    try:
        parsed = _client_parse_quantity(text)  # type: ignore[no-untyped-call]  # the client ships no annotations
    except (ValueError, InvalidOperation, TypeError):
        raise ValidationError(f'{field} is not a Kubernetes quantity (got "{value}")', field=field,
                              hint='use e.g. "4", "500m" or "16Gi"') from None
    return Decimal(parsed)


def format_cpu(millis: int) -> str:
    """Millicores → quantity: ``4000`` → ``"4"``, ``500`` → ``"500m"``."""
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def format_memory_mib(mib: int) -> str:
    """MiB → quantity: ``16384`` → ``"16Gi"``, ``512`` → ``"512Mi"``."""
    return f"{mib // 1024}Gi" if mib % 1024 == 0 else f"{mib}Mi"


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:6]


def label_value(text: str) -> str:
    """Turn arbitrary text (a user name such as ``alice@example.com``) into a valid label value.

    Characters outside ``[A-Za-z0-9-_.]`` become ``-``; the ends are trimmed to alphanumerics;
    at most 63 characters. When anything changed, a 6-hex hash of the original is appended so
    that two different users never share a label value (``alice@x`` vs ``alice-x``).
    """
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "-", text).strip("-_.")
    if cleaned == text and len(cleaned) <= 63:
        return cleaned
    digest = _short_hash(text)
    head = cleaned[: 63 - len(digest) - 1].rstrip("-_.")
    return f"{head}-{digest}" if head else digest


def dns_label(text: str, *, prefix: str = "", max_len: int = 63) -> str:
    """Turn text (a job id, a user name) into a DNS-1123 label of at most ``max_len`` characters.

    Lowercase alphanumerics and ``-``; a 6-hex hash of the original is appended whenever the text
    had to change, so the mapping stays injective. ``prefix`` is prepended as is (it must already
    be a valid label start, e.g. ``"js-"``).
    """
    lowered = re.sub(r"[^a-z0-9-]", "-", text.lower())
    lowered = re.sub(r"-{2,}", "-", lowered).strip("-")
    candidate = f"{prefix}{lowered}"
    if lowered == text and len(candidate) <= max_len and _DNS_LABEL_RE.match(candidate):
        return candidate
    digest = _short_hash(text)
    head = candidate[: max_len - len(digest) - 1].rstrip("-")
    return f"{head}-{digest}" if head else f"{prefix}{digest}"
