"""hubadmin26 B5 (high for operations): ``jupyter-sched doctor`` migrated the store's schema.

Found: the admin, having installed the new version, first looked at the store with its doctor (README:
"reads a database, not the service") — and the doctor's open ran the migrations, under the running
service of the older version; the old version's next start was then refused (newer schema), so a look
before the upgrade was the upgrade, and a rollback needed the backup. Now no action but ``doctor migrate
--yes`` migrates: on a store of another schema the doctor says which and what the next start does, and
reads or changes nothing (exit 1); ``migrate`` without ``--yes`` says what it would apply (exit 2).

Real parts: an SQLite store built at schema 12 by the project's own migration steps, the doctor's main.
"""

from __future__ import annotations

import io
from pathlib import Path

import sqlalchemy as sa

from jupyter_sched.cli import doctor
from jupyter_sched.store import migrations, sqlite_url


def _store_at(path: Path, version: int) -> str:
    url = sqlite_url(path)
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        for step in migrations.MIGRATIONS[:version]:
            step.upgrade(conn)
        table = sa.Table("schema_version", sa.MetaData(), sa.Column("version", sa.Integer),
                         sa.Column("description", sa.Text), sa.Column("applied_at", sa.String(32)))
        table.create(conn)
        conn.execute(table.insert(), [{"version": s.version, "description": s.description,
                                       "applied_at": "2026-11-02T10:14:05.000000Z"} for s in migrations.MIGRATIONS[:version]])
    engine.dispose()
    return url


def _schema(url: str) -> int:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return migrations.current_version(conn)
    finally:
        engine.dispose()


def _doctor(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = doctor.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_hubadmin26_b5_a_look_never_migrates_and_says_what_the_next_start_does(tmp_path: Path) -> None:
    url = _store_at(tmp_path / "sched.sqlite", 12)
    latest = migrations.latest_version()
    steps = ", ".join(str(v) for v in range(13, latest + 1))
    for action in ([], ["scan"], ["list"], ["rotate-job-secret"], ["remove", "1", "--yes"]):
        code, out, err = _doctor("--db", url, *action)
        assert code == doctor.EXIT_FOUND, (action, out, err)
        assert _schema(url) == 12, f"doctor {action} migrated the store"
        assert f"store schema 12 (this code knows up to {latest})" in out, out
        assert ("the store is at schema 12; this code (jupyter_sched " in err
                and f"knows up to {latest}: the service's next start with this code migrates it ({steps}) — "
                    "`jupyter-sched doctor migrate --yes` migrates it now" in err
                and err.rstrip().endswith("Nothing was read or changed.")), err

    code, out, err = _doctor("--db", url, "migrate")
    assert code == doctor.EXIT_USAGE and _schema(url) == 12, (out, err)
    assert "would migrate the store" in err and f"from schema 12 to {latest} ({steps})" in err, err

    code, out, err = _doctor("--db", url, "migrate", "--yes")
    assert code == doctor.EXIT_OK and _schema(url) == latest, (out, err)
    assert f": {steps}\n" in out.splitlines(keepends=True)[0], out

    code, out, err = _doctor("--db", url)  # now the same schema: the scan reads every row as before
    assert code == doctor.EXIT_OK and "no quarantined rows: every row read" in out, (out, err)
    code, out, _ = _doctor("--db", url, "migrate")
    assert code == doctor.EXIT_OK and f"is at schema {latest}: nothing to migrate" in out, out


def test_hubadmin26_b5_a_store_newer_than_the_code_is_said_and_left_alone(tmp_path: Path) -> None:
    url = _store_at(tmp_path / "sched.sqlite", len(migrations.MIGRATIONS))
    engine = sa.create_engine(url)
    with engine.begin() as conn:  # a later version's step
        conn.execute(sa.text("INSERT INTO schema_version (version, description, applied_at) VALUES "
                             f"({migrations.latest_version() + 1}, 'from the future', '2027-01-01T00:00:00Z')"))
    engine.dispose()
    code, _, err = _doctor("--db", url, "scan")
    assert code == doctor.EXIT_FOUND and "newer than this code" in err and "run the doctor of the version" in err, err
    code, _, err = _doctor("--db", url, "migrate", "--yes")
    assert code == doctor.EXIT_NO_STORE and _schema(url) == migrations.latest_version() + 1, err
