"""hubadmin23 A7: an upgrade is visible — the start-up log names the code's version (with the checkout's
commit) and the schema steps it applied, one INFO line each; ``jupyter-sched doctor`` shows both.

Before: ``jupyter_sched 0.1.0: store …`` before and after an upgrade, and nothing said that the schema went
from 12 to 16. Real parts: an SQLite store left at schema 12 (as an older release made it), the server
process (``jupyter server`` with the extension), its log, the doctor's output.
"""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

import sqlalchemy as sa

from jupyter_sched import __version__
from jupyter_sched.buildinfo import version_string
from jupyter_sched.cli import doctor
from jupyter_sched.store import migrations, sqlite_url

from .serve_start import embedded_start_up_log
from .test_s23_hubadmin22_h5_embedded import RUNNING, _env

CHECKOUT = Path(__file__).resolve().parents[2]


def _store_at_schema_12(path: Path) -> str:
    url = sqlite_url(path)
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        for step in migrations.MIGRATIONS[:12]:
            step.upgrade(conn)
        table = sa.Table("schema_version", sa.MetaData(), sa.Column("version", sa.Integer),
                         sa.Column("description", sa.Text), sa.Column("applied_at", sa.String(32)))
        table.create(conn)
        conn.execute(table.insert(), [{"version": s.version, "description": s.description,
                                       "applied_at": "2026-11-02T10:14:05.000000Z"} for s in migrations.MIGRATIONS[:12]])
    engine.dispose()
    return url


def test_s23_hubadmin23_a7_the_version_names_the_checkouts_commit() -> None:
    git = shutil.which("git")
    assert git is not None and (CHECKOUT / ".git").exists()  # the tests run from a checkout
    commit = subprocess.run([git, "-C", str(CHECKOUT), "rev-parse", "--short=7", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()
    said = version_string()
    assert said.startswith(f"{__version__}+g{commit}"), (said, commit)  # before: "0.1.0" at every commit


def test_s23_hubadmin23_a7_an_upgraded_store_is_one_info_line_at_start_and_in_the_doctor(tmp_path: Path) -> None:
    url = _store_at_schema_12(tmp_path / "sched.sqlite")
    latest = migrations.latest_version()
    text = embedded_start_up_log(tmp_path, _env(tmp_path), RUNNING, f"--SchedApp.db_url={url}",
                                 f"--SchedApp.log_dir={tmp_path / 'jobs'}")
    assert RUNNING in text, text[-3000:]
    started = [line for line in text.splitlines() if f"jupyter_sched {version_string()}: store " in line]
    assert len(started) == 1 and started[0].startswith("[I "), text[-3000:]
    migrated = [line for line in text.splitlines() if "store schema" in line]
    steps = ", ".join(str(v) for v in range(13, latest + 1))
    assert len(migrated) == 1 and migrated[0].startswith("[I "), text[-3000:]
    assert f"jupyter_sched: store schema migrated 12 → {latest} ({latest - 12} steps: {steps}; " in migrated[0]

    out, err = io.StringIO(), io.StringIO()
    doctor.main(["--db", url], out=out, err=err)
    code = [line for line in out.getvalue().splitlines() if line.startswith("code: ")]
    assert code == [f"code: jupyter_sched {version_string()}; store schema {latest} (this code knows up to {latest}), "
                    f"applied 1-12 at 2026-11-02T10:14, 13-{latest} at {code[0][-16:]}"], out.getvalue()
    assert "migrated now" not in code[0]  # the server migrated it; the doctor only reads


def test_s23_hubadmin23_a7_no_migration_and_a_new_store_say_so() -> None:
    assert migrations.describe_migration(17, []) == "store schema 17 (up to date, no migration)"
    assert migrations.describe_migration(0, list(range(1, 18))) == "store schema created (version 17)"
    assert migrations.describe_applied([(1, "2026-11-02T10:14:05Z"), (2, "2026-11-02T10:14:06Z"),
                                        (3, "2026-12-05T08:40:00Z")]) == "1-2 at 2026-11-02T10:14, 3 at 2026-12-05T08:40"
