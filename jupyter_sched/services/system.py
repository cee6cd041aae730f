"""``SystemService``: the inventory (``GET inventory``) and the engine's status.

What the backend supports (``GET config``) depends on the server's configuration and is answered
by the extension (``SchedApp.capabilities``).
"""

from __future__ import annotations

from typing import Any

from ..model import JobState
from ..model.codec import inventory_to_dict
from .context import Context
from .models import EngineStatus, GetInventoryResponse

__all__ = ["SystemService"]


class SystemService:
    """Inventory and status (see module docstring)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def inventory(self) -> GetInventoryResponse:
        """Nodes and GPUs (simulated ones labelled), NVML status (case 015), and per GPU uuid who
        holds it: ``[{job_id, user, kind, gpu_milli}]``."""
        body: dict[str, Any] = inventory_to_dict(self.ctx.inventory())
        allocations: dict[str, list[dict[str, Any]]] = {}
        for record in self.ctx.store.list_jobs(states=(JobState.ADMITTED, JobState.RUNNING)):
            job = record.job
            if job.allocation is None:
                continue
            for uuid in job.allocation.all_gpu_uuids():
                allocations.setdefault(uuid, []).append({"job_id": job.id, "user": job.spec.user,
                                                         "kind": job.spec.kind.value,
                                                         "gpu_milli": job.allocation.gpu_milli})
        body["allocations"] = allocations
        return GetInventoryResponse.model_validate(body)

    def status(self) -> EngineStatus:
        """Whether this server leads the store, who does, and the schema version."""
        engine, store = self.ctx.engine, self.ctx.store
        lease = store.leader()
        return EngineStatus(leader=engine.is_leader, engine_id=engine.owner_id,
                            leader_id=lease.owner if lease else None, term=lease.term if lease else None,
                            leader_expires_at=lease.expires_at.isoformat() if lease else None,
                            store=store.safe_url, schema_version=store.schema_version())
