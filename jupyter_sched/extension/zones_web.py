"""``GET zone-labels?zone=``: the names of a time zone's offsets (newuser35 n12).

The panel says its clocks in the browser's zone; the CLI and the magics name a zone by the tz database's letters
(``03:00 CET``, :func:`jupyter_sched.model.units.zone_label`), which a browser does not know (its own abbreviation
differs by locale and has none for most of Asia and Africa — session 22). The panel asks here once for its zone's
names by offset and says ``03:00 CET`` too; without an answer it says ``UTC+1`` as before.
"""

from __future__ import annotations

from datetime import datetime, timezone

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..errors import ValidationError
from ..model.units import iana_zone, unknown_zone, zone_labels
from ..services.models import GetZoneLabelsRequest, GetZoneLabelsResponse, ZoneLabel
from .web import SchedHandler

__all__ = ["ZoneLabelsHandler"]


class ZoneLabelsHandler(SchedHandler):
    """``GET zone-labels?zone=Europe/Berlin`` → ``{"zone": …, "labels": [{"offset_minutes": 60, "label": "CET"}, …]}``;
    a name that is no zone: 400 naming ``zone`` (:func:`unknown_zone`'s words). Pure: no service, no store."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        zone = self.query(GetZoneLabelsRequest).zone
        if iana_zone(zone) is None:
            raise ValidationError(unknown_zone(zone), field="zone", hint="use an IANA name such as Europe/Berlin or UTC")
        labels = zone_labels(zone, datetime.now(timezone.utc))
        self.reply(GetZoneLabelsResponse(zone=zone, labels=[ZoneLabel(offset_minutes=m, label=t) for m, t in labels.items()]))
