"""GPU-hour prices with the dates they are in force from (hubadmin26 B21).

``c.HubSchedApp.gpu_prices`` priced every allocated GPU-hour of a report at today's price: raising the H100
price on Dec 1 re-priced October and November in every later report, so a quarter's chargeback was not
reproducible; and a model without a price (a node of a new model added to the inventory) failed every report
over its use until the admin edited the config and restarted. Now each model's price may be a number (in force
always) or a list of ``[from, price]`` pairs — ``from`` a date (its midnight UTC), an ISO 8601 time with an
offset, or null (from always) — and a report prices each piece of usage at the price in force then::

    c.HubSchedApp.gpu_prices = {"H100-80GB": [[None, 4.0], ["2026-12-01", 5.0]], "*": 1.5}

A model is priced by its own schedule from its first date, else by ``"*"``'s; usage with no price in force is
*unpriced*: its row's cost is unknown (null) and the row says why — never free, never a failure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime, timezone
from itertools import pairwise

from ..errors import ValidationError
from ..model.units import parse_utc

__all__ = ["ANY", "PRICE_FIX", "PriceTable", "price_at", "price_segments", "price_table", "unpriced_model_warnings"]

ANY = "*"
"""The key pricing every model without a price of its own in force."""

PriceTable = Mapping[str, tuple[tuple[datetime | None, float], ...]]
"""``model → ((from, price), ...)`` sorted by ``from`` (None first: in force from always)."""


def price_table(prices: Mapping[str, object], *, field: str = "gpu_prices") -> PriceTable:
    """Check and normalize ``prices`` (module docstring).

    Raises:
        ValidationError: naming ``gpu_prices[MODEL]`` — a price not a number >= 0, a schedule not a list of
            ``[from, price]`` pairs, a ``from`` that is no date, or two prices from the same time.
    """
    table: dict[str, tuple[tuple[datetime | None, float], ...]] = {}
    for model, value in prices.items():
        where = f"{field}[{model}]"
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            table[str(model)] = ((None, _price(value, where)),)
            continue
        if not isinstance(value, (list, tuple)) or not value:
            raise ValidationError(f"{where} must be a price per GPU-hour or a list of [from, price] pairs "
                                  f"(got {value!r})", field=where,
                                  hint='e.g. 4.0, or [[null, 4.0], ["2026-12-01", 5.0]] (5.0 from Dec 1 00:00 UTC)')
        steps: dict[datetime | None, float] = {}
        for step in value:
            if not isinstance(step, (list, tuple)) or len(step) != 2:
                raise ValidationError(f"{where}: {step!r} is not a [from, price] pair", field=where,
                                      hint='e.g. ["2026-12-01", 5.0]')
            when = _from(step[0], where)
            if when in steps:
                raise ValidationError(f"{where} has two prices from {step[0]!r}", field=where,
                                      hint="give one price per date")
            steps[when] = _price(step[1], where)
        table[str(model)] = tuple(sorted(steps.items(), key=lambda s: (s[0] is not None, s[0] or _EPOCH)))
    return table


def price_segments(table: PriceTable, model: str, start: datetime, end: datetime,
                   ) -> list[tuple[datetime, datetime, float | None]]:
    """``[start, end)`` cut where ``model``'s price changes: ``(from, to, price in force)``; price None where none
    is (no schedule of its own in force yet and no ``"*"`` then)."""
    cuts = sorted({start, end, *(w for sched in (table.get(model, ()), table.get(ANY, ()))
                                 for w, _ in sched if w is not None and start < w < end)})
    return [(a, b, price_at(table, model, a)) for a, b in pairwise(cuts)]


def price_at(table: PriceTable, model: str, at: datetime) -> float | None:
    """The price of ``model`` in force at ``at`` (its own from its first date, else ``"*"``'s); None: none."""
    for key in (model, ANY):
        price = None
        for when, value in table.get(key, ()):
            if when is None or when <= at:
                price = value
        if price is not None:
            return price
    return None


PRICE_FIX = ('add it to c.HubSchedApp.gpu_prices (a number, or [[from, price], ...] to date it), or a default "*"')
"""How to price a model, said wherever usage or a GPU has no price in force."""


def unpriced_model_warnings(table: PriceTable, models: Mapping[str, int], at: datetime) -> list[str]:
    """One warning per GPU model of the inventory (``models``: model → GPUs) with no price in force ``at``
    (hubadmin26 B21: a node of a new model joins; its usage's cost is unknown in every report until priced)::

        GPU model 'H100-80GB' (4 GPUs) has no price per GPU-hour in force: the usage report's cost of its
        use is unknown — add it to c.HubSchedApp.gpu_prices (…), or a default "*"

    ``[]`` without prices (``table`` empty: no report has a cost at all, nothing is missing).
    """
    if not table:
        return []
    return [f"GPU model {model!r} ({n} GPU{'' if n == 1 else 's'}) has no price per GPU-hour in force: the usage "
            f"report's cost of its use is unknown — {PRICE_FIX}"
            for model, n in sorted(models.items()) if price_at(table, model, at) is None]


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _price(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValidationError(f"{where}: a price per GPU-hour must be a number >= 0 (got {value!r})", field=where,
                              hint="e.g. 2.5")
    return float(value)


def _from(value: object, where: str) -> datetime | None:
    if value is None or value == "" or value == 0:
        return None
    if isinstance(value, str):
        text = value.strip()
        if len(text) == 10:
            text += "T00:00:00+00:00"  # a date: its midnight UTC
        try:
            return parse_utc(text, field=where)
        except ValidationError:
            pass
    raise ValidationError(f"{where}: {value!r} is not a date the price is in force from", field=where,
                          hint='give a date ("2026-12-01": its midnight UTC), an ISO 8601 time with an offset, or '
                               "null (from always)")
