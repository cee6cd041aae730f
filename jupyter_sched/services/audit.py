"""``AuditService``: the decision log, for admins (``GET audit``).

Every scheduling decision, admin change and refusal is an audit record in the store; this
service only reads them, newest first.
"""

from __future__ import annotations

from ..admission import Caller
from ..model.units import parse_utc
from .context import Context
from .models import GetAuditRequest, GetAuditResponse

__all__ = ["AuditService"]


class AuditService:
    """Reads the audit log (see module docstring)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def list(self, caller: Caller, request: GetAuditRequest) -> GetAuditResponse:
        """Audit records, newest first, filtered by time, user, job and action.

        Raises:
            AuthorizationError: not an admin (audited).
            ValidationError: a timestamp without offset.
        """
        self.ctx.admission.require_admin(caller, "reading the audit log")
        since = parse_utc(request.since, field="since") if request.since else None
        until = parse_utc(request.until, field="until") if request.until else None
        events = self.ctx.store.list_events(since=since, until=until, user=request.user, job_id=request.job_id,
                                            action=request.action, limit=request.limit, newest_first=True)
        return GetAuditResponse.model_validate([e.to_dict() for e in events])
