"""``GET usage/claimed-ends`` and ``POST jobs/{job_id}/end``: an admin finds the settled jobs whose end is their
owner's claim (or impossible by the record) and corrects one (red33 R3's old rows; the finding and the bounds:
:mod:`jupyter_sched.store.claimed_ends`, also ``jupyter-sched doctor ends`` / ``correct-end`` on the store).

Admins only (403, audited). A correction rewrites the job's end and its usage rows in one transaction with its
``end_corrected`` audit record; this process's fair-share and budget sums are read again at once (other processes
sharing the store notice the rewritten rows within a minute), and the engine is kicked.
"""

from __future__ import annotations

from ..admission import Caller
from ..model.units import parse_utc
from ..store.claimed_ends import correct_end, suspect_ends
from .context import Context
from .models.ends import ClaimedEnd, CorrectEndRequest, CorrectEndResponse, ListClaimedEndsResponse

__all__ = ["ClaimedEndsService"]

_HINT = "ask an admin to look (GET usage/claimed-ends, or jupyter-sched doctor ends on the store)"


class ClaimedEndsService:
    """Lists and corrects claimed ends (module docstring).

    Args:
        ctx: the services' context (store, admission, clock, kick, engine).
    """

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def list(self, caller: Caller) -> ListClaimedEndsResponse:
        """The suspect ends, newest first (at most 500).

        Raises:
            AuthorizationError: not an admin (audited).
        """
        self.ctx.admission.require_admin(caller, "listing the ends jobs claimed while the service was down",
                                         hint=_HINT)
        with self.ctx.store.transaction(write=False) as tx:
            found = suspect_ends(tx, self.ctx.clock.now())
        text = (f"{len(found)} finished job(s) whose end is suspect; correct one with POST jobs/{{job_id}}/end"
                if found else "no finished job's end is suspect")
        return ListClaimedEndsResponse(ends=[ClaimedEnd.model_validate(s.to_dict()) for s in found], text=text)

    def correct(self, caller: Caller, job_id: str, request: CorrectEndRequest) -> CorrectEndResponse:
        """Set ``job_id``'s end to ``request.end`` (None: the suggested end).

        Raises:
            AuthorizationError: not an admin (audited).
            ValidationError: ``end`` not a time with its zone or outside the bounds, ``reason`` blank or not one
                printable line, the job not a settled one (field ``job_id``).
            NotFoundError: no such job.
            ConflictError: the job's row changed meanwhile.
        """
        self.ctx.admission.require_admin(caller, "correcting a job's recorded end", field="job_id", hint=_HINT)
        end = None if request.end is None else parse_utc(request.end, field="end")
        now = self.ctx.clock.now()
        with self.ctx.store.transaction(now=now) as tx:
            done = correct_end(tx, job_id, end, request.reason, actor=caller.user, now=now)
        self.ctx.engine.decider.usage.reset()  # fair share and budgets: read the rewritten rows again
        self.ctx.kick("end_corrected")
        return CorrectEndResponse.model_validate(done.to_dict())
