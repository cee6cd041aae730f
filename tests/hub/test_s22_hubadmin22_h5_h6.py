"""Hubadmin22 H5 and H6: the hub admin's safety nets around the store.

H5: ``jupyter-sched serve`` ran the local executor (users' jobs on this host) on
``postgresql+psycopg://postgres@127.0.0.1:…`` with ``trust`` for loopback — any job could log in the same
way and rewrite every record (README: Database) — and neither its start-up log nor ``jupyter-sched doctor
--db`` said a word. Both now say it, and that the role is a superuser. A real PostgreSQL (tests/pg.py:
trust on loopback, as a quick admin setup is), and one of this module's own switched to scram-sha-256 for a
role with a password: nothing said there.

H6: ``jupyter-sched doctor`` as root on the hub host read root's embedded SQLite and said all was well,
while the service's store was elsewhere. With a ``jupyter-sched serve`` in the host's scheduler registry it
now says which store it checked and how to check the service's.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.extension.host_schedulers import HostScheduler, register
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.store.exposure import db_access, exposure_warning, is_this_host
from tests.accounts import shared_dir
from tests.pg import PostgresServer, skip_reason
from tests.reliability.test_newuser13_doctor import _doctor

from .serve_start import serve_env, serve_start_up_log

pg = pytest.mark.skipif(skip_reason() is not None, reason=f"PostgreSQL not available: {skip_reason()}")


@pytest.fixture(scope="module")
def own_pg() -> Iterator[PostgresServer]:
    """A server of this module's own (its pg_hba.conf is changed): trust on loopback, as tests/pg.py
    starts it, plus a password role ``sched`` that must log in with scram-sha-256."""
    if skip_reason() is not None:
        pytest.skip(f"PostgreSQL not available: {skip_reason()}")
    server = PostgresServer.start()
    try:
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={server.port} user=postgres dbname=postgres",
                             autocommit=True) as conn:
            conn.execute("SET password_encryption = 'scram-sha-256'")
            conn.execute("CREATE ROLE sched LOGIN PASSWORD 'pw-h5'")
            conn.execute("CREATE DATABASE hub_h5 OWNER sched")
            conn.execute("CREATE DATABASE hub_trust")
        hba = server.data_dir / "pg_hba.conf"
        hba.write_text("host all sched 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
        subprocess.run(server._as_server_user([str(server.bin_dir / "pg_ctl"), "-D", str(server.data_dir), "reload"]),
                       check=True, capture_output=True, timeout=60)
        time.sleep(0.5)  # the postmaster rereads pg_hba.conf on SIGHUP, before the next login
        yield server
    finally:
        server.stop()


def test_s22_hubadmin22_h5_loopback_is_this_host_and_a_far_address_is_not() -> None:
    assert is_this_host("127.0.0.1") and is_this_host("localhost") and is_this_host("::1")
    assert not is_this_host("192.0.2.1")  # TEST-NET-1: never an address of this host
    assert not is_this_host("no-such-host.invalid")


@pg
def test_s22_hubadmin22_h5_a_password_less_superuser_login_on_this_host_is_said(own_pg: PostgresServer) -> None:
    # before: nothing looked at how the store logged in
    store = Store(own_pg.url("hub_trust"))
    try:
        access = db_access(store.engine)
    finally:
        store.close()
    assert access is not None
    assert (access.host, access.port, access.role, access.password_used, access.local, access.superuser) == \
        ("127.0.0.1", own_pg.port, "postgres", False, True, True), access
    said = exposure_warning(access, jobs_here=True)
    assert said is not None
    assert said.startswith(f"connected to 127.0.0.1:{own_pg.port} as postgres without a password while users' jobs "
                           "run on this host: any job can log in the same way and rewrite every job, quota and "
                           "audit record"), said
    assert "scram-sha-256" in said and "$JUPYTER_SCHED_DB_URL_FILE" in said, said
    assert "the store's role postgres is a PostgreSQL superuser" in said and "CREATE ROLE" in said, said
    # jobs elsewhere (Kubernetes): the open login is no job's to use; the superuser word stays
    elsewhere = exposure_warning(access, jobs_here=False)
    assert elsewhere is not None and elsewhere.startswith("the store's role postgres is a PostgreSQL superuser"), \
        elsewhere


@pg
def test_s22_hubadmin22_h5_a_role_with_a_password_under_scram_is_not_said(own_pg: PostgresServer) -> None:
    store = Store(f"postgresql+psycopg://sched:pw-h5@127.0.0.1:{own_pg.port}/hub_h5")
    try:
        access = db_access(store.engine)
    finally:
        store.close()
    assert access is not None and access.password_used and not access.superuser, access
    assert exposure_warning(access, jobs_here=True) is None
    assert exposure_warning(None, jobs_here=True) is None  # SQLite: nothing to say
    sqlite = Store("sqlite://")
    try:
        assert db_access(sqlite.engine) is None
    finally:
        sqlite.close()


@pg
def test_s22_hubadmin22_h5_doctor_says_the_password_less_login(own_pg: PostgresServer, tmp_path: Path) -> None:
    # before: "store: …", the scan, isolation, command lines — nothing about the database's logins
    url = own_pg.url("hub_trust")
    Store(url).close()
    run = _doctor(tmp_path, "--db", url)
    said = [line for line in run.stdout.splitlines() if line.startswith("database: ")]
    assert len(said) == 1, run.stdout + run.stderr
    assert said[0].startswith(f"database: connected to 127.0.0.1:{own_pg.port} as postgres without a password — if "
                              "users' jobs run on this host (the local executor): any job can log in"), said
    assert "PostgreSQL superuser" in said[0], said
    # the same server, a role of its own that must give its password (scram-sha-256): nothing to say
    url_file = tmp_path / "db-url"
    url_file.write_text(f"postgresql+psycopg://sched:pw-h5@127.0.0.1:{own_pg.port}/hub_h5\n")
    Store(url_file.read_text().strip()).close()
    run = _doctor(tmp_path, JUPYTER_SCHED_DB_URL_FILE=str(url_file))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "database: " not in run.stdout, run.stdout


@pg
@pytest.mark.skipif(os.geteuid() != 0, reason="hub mode with the local executor runs as root")
def test_s22_hubadmin22_h5_serve_warns_at_start_of_a_password_less_local_store(own_pg: PostgresServer) -> None:
    # before: the /proc, default-team and fence lines, nothing about the database
    url = own_pg.url("hub_trust")
    with shared_dir() as folder:
        env = serve_env(folder, url, JUPYTER_SCHED_HOST_REGISTRY=str(folder / "registry"))
        text = serve_start_up_log(folder, env, "database:", f"--SchedApp.log_dir={folder / 'jobs'}")
    said = [line for line in text.splitlines() if "jupyter_sched: database:" in line]
    assert len(said) == 1 and said[0].startswith("[W "), text[-3000:]
    assert f"connected to 127.0.0.1:{own_pg.port} as postgres without a password while users' jobs run on this " \
           "host" in said[0], said
    assert "PostgreSQL superuser" in said[0], said


@pytest.mark.parametrize("kind, noted", [("jupyter-sched serve", True), ("jupyter lab", False)],
                         ids=["a hub service runs here", "only someone's jupyter lab"])
def test_s22_hubadmin22_h6_doctor_on_the_hub_host_says_the_embedded_store_is_not_the_services(
        tmp_path: Path, kind: str, noted: bool) -> None:
    # before: "store: sqlite:////root/…/sched.sqlite (the embedded server's default file)", then all read
    home = tmp_path / "home"
    Store(sqlite_url(home / ".local" / "share" / "jupyter" / "jupyter_sched" / "sched.sqlite")).close()
    registry = tmp_path / "registry"
    service = subprocess.Popen(["sleep", "120"])  # a live process of this account stands for the service
    try:
        me = HostScheduler(user="root", uid=os.getuid(), pid=service.pid, url="http://127.0.0.1:17905/services/s/",
                           gpus=4, simulated=True, kind=kind)
        assert register(me, folder=registry).path is not None
        run = _doctor(home, JUPYTER_SCHED_HOST_REGISTRY=str(registry))
        named = _doctor(home, "--db", sqlite_url(home / ".local" / "share" / "jupyter" / "jupyter_sched" / "sched.sqlite"),
                        JUPYTER_SCHED_HOST_REGISTRY=str(registry))
    finally:
        service.kill()
        service.wait(timeout=20)
    assert run.returncode == 0, run.stdout + run.stderr
    notes = [line for line in run.stdout.splitlines() if "`jupyter-sched serve` of" in line]
    if not noted:
        assert notes == [], run.stdout
        return
    assert len(notes) == 1, run.stdout
    assert notes[0].startswith("note: this checked ") and "'s embedded default store, but `jupyter-sched serve` of " \
        f"root (pid {service.pid}, http://127.0.0.1:17905/services/s/) runs on this host" in notes[0], notes
    assert "jupyter-sched doctor --db URL" in notes[0] and "JUPYTER_SCHED_DB_URL_FILE=FILE jupyter-sched doctor" in \
        notes[0], notes
    # a store named (--db) is the one the admin meant: no note
    assert named.returncode == 0 and "`jupyter-sched serve` of" not in named.stdout, named.stdout + named.stderr
