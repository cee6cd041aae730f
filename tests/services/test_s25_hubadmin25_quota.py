"""hubadmin25's quota findings: B12 (a GPU out for an RMA blocked every quota edit), B17 (the dry run
did not say the change preempts running work), B2 (``quotas_changed`` said not what changed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from jupyter_sched.errors import ValidationError
from jupyter_sched.model import Quota, QuotaSet
from jupyter_sched.services import SchedulerService
from jupyter_sched.store import sqlite_url

A100, L40S = "A100-80GB", "L40S"


def _gpu(uuid: str, model: str, **extra: Any) -> dict[str, Any]:
    return {"uuid": uuid, "model": model, "memory": "80GiB" if model == A100 else "48GiB", **extra}


def service(tmp_path: Path, *, out: bool = True) -> SchedulerService:
    """hubadmin25's hub: node-a 4 A100, node-b 4 L40S; with ``out`` GPU-b0 is marked unhealthy (RMA)."""
    static = tmp_path / "inventory.yaml"
    b0 = {"healthy": False, "health_reason": "ECC errors, RMA"} if out else {}
    static.write_text(yaml.safe_dump({"nodes": [
        {"name": "node-a", "gpus": [_gpu(f"GPU-a{i}", A100) for i in range(4)]},
        {"name": "node-b", "gpus": [_gpu("GPU-b0", L40S, **b0)] + [_gpu(f"GPU-b{i}", L40S) for i in range(1, 4)]}]}))
    return SchedulerService.from_config({"db_url": sqlite_url(tmp_path / "s.sqlite"), "log_dir": str(tmp_path),
                                         "inventory_source": "static", "inventory_file": str(static),
                                         "telemetry_source": "off"})


IN_FORCE = (Quota(team="vision", gpu_model=A100, guaranteed=2, borrowing_limit=2),
            Quota(team="vision", gpu_model=L40S, guaranteed=1, borrowing_limit=0),
            Quota(team="nlp", gpu_model=A100, guaranteed=2, borrowing_limit=2),
            Quota(team="nlp", gpu_model=L40S, guaranteed=1, borrowing_limit=1),
            Quota(team="rl", gpu_model=L40S, guaranteed=2, borrowing_limit=0))


def lines(**changed: dict[str, Any]) -> list[dict[str, Any]]:
    """The lines in force as PUT quotas sends them, ``changed`` by ``team_model`` key (``vision_A100``)."""
    out = []
    for q in IN_FORCE:
        line = {"team": q.team, "gpu_model": q.gpu_model, "guaranteed": q.guaranteed,
                "borrowing_limit": q.borrowing_limit}
        out.append({**line, **changed.get(f"{q.team}_{q.gpu_model.split('-')[0]}", {})})
    return out


def in_force(svc: SchedulerService) -> None:
    with svc.store.transaction() as tx:  # set before GPU-b0 went out (the guarantees were honoured then)
        tx.replace_quota_set(QuotaSet(quotas=IN_FORCE))


def test_hubadmin25_b12_a_gpu_out_for_an_rma_blocks_no_edit_of_the_lines_in_force(tmp_path: Path) -> None:
    svc = service(tmp_path)
    in_force(svc)
    # the repro: vision's A100 borrowing limit 2 → 3, every other line as in force (4 L40S guaranteed, 3 usable)
    answer = svc.set_quotas(lines(vision_A100={"borrowing_limit": 3}), actor="boss")
    assert [q["borrowing_limit"] for q in answer["quotas"] if q["team"] == "vision"] == [3, 0]
    (short,) = [w for w in answer["warnings"] if "guaranteed" in w and L40S in w]
    assert short.startswith("teams are guaranteed 4 GPUs of L40S but only 3 of its 4 may get work now (GPU-b0 on "
                            "node-b marked unhealthy (ECC errors, RMA)): until the GPUs are back"), short
    # a line lowered, another raised by as much: the total in force is kept, so taken (warned as above)
    moved = svc.set_quotas(lines(rl_L40S={"guaranteed": 1}, nlp_L40S={"guaranteed": 2}), actor="boss")
    assert {(q["team"], q["guaranteed"]) for q in moved["quotas"] if q["gpu_model"] == L40S} == {
        ("vision", 1), ("nlp", 2), ("rl", 1)}
    # a change that raises the total promise of L40S beyond the usable GPUs stays refused (case 018)
    with pytest.raises(ValidationError) as refused:
        svc.set_quotas(lines(rl_L40S={"guaranteed": 3}), actor="boss")
    assert refused.value.field == "guaranteed"
    assert refused.value.message == ("teams would be guaranteed 5 GPUs of L40S (4 before this change) but only 3 of "
                                     "its 4 may get work now (GPU-b0 on node-b marked unhealthy (ECC errors, RMA))")
    assert "at most 4 (the total in force) until the GPUs are back" in (refused.value.hint or "")
    # lowered to what is usable: no capacity warning any more
    fits = svc.set_quotas(lines(rl_L40S={"guaranteed": 1}), actor="boss")
    assert not [w for w in fits["warnings"] if "may get work" in w], fits["warnings"]


def test_hubadmin25_b12_every_model_short_is_said_not_the_first_alone(tmp_path: Path) -> None:
    svc = service(tmp_path)
    with svc.store.transaction() as tx:
        tx.replace_quota_set(QuotaSet(quotas=(*IN_FORCE, Quota(team="cv", gpu_model=A100, guaranteed=2, borrowing_limit=0))))
    admin = svc.services.quotas.get(svc.services.caller("boss", admin=True)).to_wire()
    said = [w.split(":")[0] for w in admin["warnings"] if w.startswith("teams are guaranteed")]
    assert said == ["teams are guaranteed 6 GPUs of A100-80GB but only 4 exist",
                    "teams are guaranteed 4 GPUs of L40S but only 3 of its 4 may get work now (GPU-b0 on node-b marked "
                    "unhealthy (ECC errors, RMA))"], admin["warnings"]
