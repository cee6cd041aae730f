"""hubadmin25 B7: one pair of usage rows overlapping on a GPU no longer fails the whole month's bill as
"the database failed, retry": the report answers, counts the overlap once (for the row that held the
GPU first) and warns on the groups concerned; ``jupyter-sched doctor`` lists the pair with the SQL that
repairs it, and after that SQL the store and the report agree with no warning.

Real SQLite store; the overlap is written with SQL as a restore or a hand edit leaves it.
"""

from __future__ import annotations

import io
import sqlite3
from datetime import timedelta
from pathlib import Path

import sqlalchemy as sa

from jupyter_sched.accounting.report import usage_report
from jupyter_sched.cli import doctor
from jupyter_sched.cli.main import main as cli_main
from jupyter_sched.store import Store, schema, sqlite_url
from tests.runtime.builders import T0

H = timedelta(hours=1)


def run_doctor(url: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(["doctor", "--db", url], out=out, err=err)
    return code, out.getvalue() + err.getvalue()


def overlapping_store(path: Path) -> Store:
    """vision's job v-1 held GPU-a0 T0 to T0+4 h; nlp's n-1 was written on it T0+3 h to T0+5 h (1 h overlap),
    and n-2 wholly inside v-1 (T0+1 h to T0+2 h); n-3 on GPU-a1 is sound."""
    store = Store(sqlite_url(path))
    with store.transaction(now=T0) as tx:
        for job, team, user, gpu, start, end in (("v-1", "vision", "ana", "GPU-a0", 0, 4),
                                                 ("n-1", "nlp", "bob", "GPU-a1", 3, 5),
                                                 ("n-2", "nlp", "bob", "GPU-a1", 1, 2),
                                                 ("n-3", "nlp", "bob", "GPU-a1", 6, 8)):
            tx.open_usage(job_id=job, attempt=0, user=user, team=team, kind="training",
                          gpus=[(gpu, "A100", 1.0)], started_at=T0 + start * H)
            tx.close_usage(job, T0 + end * H)
        u = schema.usage  # n-1 and n-2 were recorded on GPU-a0 (a restore's mix-up)
        tx.conn.execute(sa.update(u).where(u.c.job_id.in_(["n-1", "n-2"])).values(gpu_uuid="GPU-a0"))
    return store


def test_hubadmin25_b7_the_report_counts_an_overlap_once_and_says_so(tmp_path: Path) -> None:
    store = overlapping_store(tmp_path / "s.sqlite")
    rows = {r["team"]: r for r in usage_report(store.usage_rows(), now=T0 + 10 * H, by=("team",))}
    assert rows["vision"]["allocated_gpu_hours"] == 4.0  # held GPU-a0 first: all of it counts
    assert rows["nlp"]["allocated_gpu_hours"] == 1.0 + 2.0  # n-1 from T0+4 h only, n-2 not at all, n-3 whole
    for team in ("vision", "nlp"):
        said = rows[team]["warnings"]
        assert len(said) == 2 and all("counted once, for job v-1" in w and "jupyter-sched doctor" in w for w in said)
    assert any(w.startswith("usage of job n-1 (attempt 0, bob) on GPU GPU-a0 overlaps job v-1's (ana) from "
                            "2026-11-29T15:00:00Z to 2026-11-29T16:00:00Z: 1 GPU-hour counted once") for w in rows["nlp"]["warnings"])
    store.close()


def test_hubadmin25_b7_doctor_lists_the_overlapping_rows_with_the_sql_that_repairs_them(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    overlapping_store(path).close()
    code, said = run_doctor(sqlite_url(path))
    assert code == doctor.EXIT_FOUND, said
    assert "2 usage row(s) overlap another on the same GPU" in said
    repairs = [line.split("repair: ", 1)[1] for line in said.splitlines() if line.strip().startswith("repair: ")]
    assert repairs == [
        "DELETE FROM usage WHERE job_id = 'n-2' AND attempt = 0 AND gpu_uuid = 'GPU-a0';",
        "UPDATE usage SET started_at = '2026-11-29T16:00:00.000000Z' WHERE job_id = 'n-1' AND attempt = 0 "
        "AND gpu_uuid = 'GPU-a0';"], said
    with sqlite3.connect(path) as db:  # the admin runs them
        for statement in repairs:
            db.execute(statement)
    code, said = run_doctor(sqlite_url(path))
    assert code == doctor.EXIT_OK and "no usage rows overlap on a GPU" in said, said
    store = Store(sqlite_url(path))
    rows = {r["team"]: r for r in usage_report(store.usage_rows(), now=T0 + 10 * H, by=("team",))}
    assert rows["nlp"]["allocated_gpu_hours"] == 3.0 and "warnings" not in rows["nlp"]  # the same figures, no warning
    store.close()
