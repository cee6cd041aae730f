"""red38 R2: any local account filled the store's PostgreSQL connection slots with connections that never answered
the password challenge (a password stops nothing: PostgreSQL gives a slot before it asks); the service ran on its
pooled connections, then its next reconnect was refused and every user's request answered 503. The set-up
docs/admin.md described (a password, a socket folder only postgres may write) left the socket open to every
account (mode 0777) and the server on 127.0.0.1.

Now the service's start-up log (:func:`~jupyter_sched.extension.startup_checks.database_warning`, what
``say_started`` logs) and ``jupyter-sched doctor`` (check ``database_reach``) say when other accounts of the
host can connect — the socket writable to them through every folder above it, a TCP listener on its port — and
docs/admin.md says how to let only the service reach it. A real PostgreSQL (tests/pg.py), real socket files and
a real OS account (its own group) for the group case.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from jupyter_sched.extension.startup_checks import database_warning
from jupyter_sched.store import Store
from jupyter_sched.store.exposure import db_access
from jupyter_sched.store.reach import open_ways, reach_warning, socket_open_to_others
from tests.accounts import os_accounts, shared_dir
from tests.accounts import skip_reason as accounts_skip
from tests.pg import PostgresServer, skip_reason
from tests.reliability.test_newuser13_doctor import _doctor

pg = pytest.mark.skipif(skip_reason() is not None, reason=f"PostgreSQL not available: {skip_reason()}")
root = pytest.mark.skipif(os.geteuid() != 0, reason="a socket login as postgres from root, chown to another group")


@pytest.fixture
def server() -> Iterator[PostgresServer]:
    """tests/pg.py's server: TCP on 127.0.0.1 and its Unix socket in its own folder (0700, postgres's)."""
    if skip_reason() is not None:
        pytest.skip(f"PostgreSQL not available: {skip_reason()}")
    started = PostgresServer.start()
    try:
        yield started
    finally:
        started.stop()


def _socket_url(server: PostgresServer) -> str:
    return f"postgresql+psycopg://postgres@/postgres?host={server.base}&port={server.port}"


@pg
@root
def test_red38_r2_a_socket_and_a_port_other_accounts_can_reach_are_said(server: PostgresServer) -> None:
    engine = sa.create_engine(_socket_url(server))
    try:
        access = db_access(engine)
        assert access is not None and access.socket_dir == str(server.base) and access.port == server.port, access
        # the socket's folder is postgres's own (0700): only the TCP listener on 127.0.0.1 is open to others
        assert open_ways(access, service_user="root") == [f"TCP on 127.0.0.1:{server.port}"]
        server.base.chmod(0o755)  # as /var/run/postgresql is searchable by all, its socket mode 0777 by default
        ways = open_ways(access, service_user="root")
        sock = server.base / f".s.PGSQL.{server.port}"
        assert ways == [f"its Unix socket {sock} (mode 0777, reachable through every folder above it)",
                        f"TCP on 127.0.0.1:{server.port}"], ways
        said = reach_warning(access, jobs_here=True)
        assert said is not None and said.startswith("users' jobs on this host can open connections to the store's "
                                                     f"PostgreSQL (its Unix socket {sock}"), said
        assert "before it asks for any password" in said and "listen_addresses = ''" in said, said
        assert "unix_socket_permissions = 0770" in said and 'docs/admin.md, "Database"' in said, said
        assert reach_warning(access, jobs_here=False) is None  # jobs elsewhere (Kubernetes): nothing to reach it
        assert "if they run on this host" in (reach_warning(access, jobs_here=None) or "")  # the doctor's form
    finally:
        engine.dispose()


@pg
@root
def test_red38_r2_a_server_only_the_service_reaches_is_not_said(server: PostgresServer) -> None:
    """The docs' set-up: no TCP listener (listen_addresses = ''), the socket in a folder others cannot enter."""
    server.halt()
    options = f"-c listen_addresses= -c port={server.port} -c unix_socket_directories={server.base}"
    subprocess.run(server._as_server_user([str(server.bin_dir / "pg_ctl"), "-D", str(server.data_dir), "-l",
                                           str(server.base / "server.log"), "-w", "-o", options, "start"]),
                   check=True, capture_output=True, timeout=60)
    store = Store(_socket_url(server))
    try:
        access = db_access(store.engine)
        assert access is not None and access.socket_dir == str(server.base), access
        assert open_ways(access, service_user="root") == []
        assert reach_warning(access, jobs_here=True) is None
        # what the start-up log says: the password-less login as a superuser, and nothing of the reach
        said = database_warning(store, executor="local") or ""
        assert "open connections to the store's PostgreSQL" not in said, said
        server.base.chmod(0o755)
        said = database_warning(store, executor="local") or ""
        assert "users' jobs on this host can open connections to the store's PostgreSQL (its Unix socket" in said, said
    finally:
        store.close()


@pytest.mark.skipif(accounts_skip() is not None, reason=f"OS accounts: {accounts_skip()}")
def test_red38_r2_a_group_writable_socket_is_open_where_the_group_holds_another_account() -> None:
    with shared_dir() as folder, os_accounts(1, prefix="r38r") as [other]:
        path = folder / ".s.PGSQL.5432"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(path))
            path.chmod(0o770)
            os.chown(path, 0, 0)  # root's group: no other account in it
            assert not socket_open_to_others(path, service_user="root")
            os.chown(path, 0, other.gid)  # a group another account is in
            assert socket_open_to_others(path, service_user="root")
            assert not socket_open_to_others(path, service_user=other.name)  # the service's own account
            path.chmod(0o777)
            os.chown(path, 0, 0)
            folder.chmod(0o750)  # others cannot search the folder: the socket's mode opens nothing
            assert not socket_open_to_others(path, service_user="root")
            folder.chmod(0o755)
            assert socket_open_to_others(path, service_user="root")
        finally:
            listener.close()


@pg
def test_red38_r2_doctor_says_who_can_reach_the_store(server: PostgresServer, tmp_path: Path) -> None:
    url = server.url("postgres")
    Store(url).close()
    run = _doctor(tmp_path, "--db", url)
    said = [line for line in run.stdout.splitlines() if line.startswith("database reach: ")]
    assert len(said) == 1, run.stdout + run.stderr
    assert said[0].startswith("database reach: users' jobs, if they run on this host (the local executor), can open "
                              f"connections to the store's PostgreSQL (TCP on 127.0.0.1:{server.port})"), said
