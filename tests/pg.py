"""A real PostgreSQL server for tests, started and stopped by the test run itself.

Usage (any test package may reuse it)::

    from tests.pg import PostgresServer, pg_bin_dir

    server = PostgresServer.start()        # initdb + pg_ctl start on a random loopback port
    url = server.create_database("t1")     # postgresql+psycopg://postgres@127.0.0.1:PORT/t1
    ...
    server.stop()                          # pg_ctl stop -m immediate, data dir removed

Debian's PostgreSQL refuses to run ``initdb`` as root, so as root every server command runs as the
unprivileged ``postgres`` user via ``runuser`` (ENVIRONMENT.md). The data directory is a fresh
temporary directory owned by that user; the server listens on 127.0.0.1 only, with ``fsync=off``
(test data need no durability) and trust authentication (loopback only).
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PostgresServer", "pg_bin_dir", "skip_reason"]


def pg_bin_dir() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` holding ``initdb``, or None."""
    root = Path("/usr/lib/postgresql")
    if not root.is_dir():
        found = shutil.which("initdb")
        return Path(found).parent if found else None
    versions = sorted((p for p in root.iterdir() if (p / "bin" / "initdb").exists()),
                      key=lambda p: [int(x) if x.isdigit() else 0 for x in p.name.split(".")])
    return versions[-1] / "bin" if versions else None


def skip_reason() -> str | None:
    """Why PostgreSQL tests cannot run here (None when they can)."""
    if pg_bin_dir() is None:
        return "PostgreSQL binaries not found (apt-get install -y postgresql)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root but there is no 'postgres' user to run initdb as"
    return None


def _free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


@dataclass
class PostgresServer:
    """A running throw-away PostgreSQL server (see module docstring)."""

    base: Path
    port: int
    bin_dir: Path

    @property
    def data_dir(self) -> Path:
        return self.base / "data"

    @staticmethod
    def _as_server_user(argv: list[str]) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv

    @classmethod
    def start(cls, attempts: int = 3) -> PostgresServer:
        """initdb a temporary cluster and start it on a random free loopback port.

        Raises:
            RuntimeError: the binaries are missing or the server would not start.
        """
        reason = skip_reason()
        if reason:
            raise RuntimeError(reason)
        bin_dir = pg_bin_dir()
        assert bin_dir is not None
        base = Path(tempfile.mkdtemp(prefix="jsched-pg-"))
        if os.geteuid() == 0:
            entry = pwd.getpwnam("postgres")
            os.chown(base, entry.pw_uid, entry.pw_gid)
        server = cls(base=base, port=0, bin_dir=bin_dir)
        subprocess.run(server._as_server_user([str(bin_dir / "initdb"), "-D", str(server.data_dir), "-U", "postgres",
                                               "--auth=trust", "-E", "UTF8", "--no-sync"]),
                       check=True, capture_output=True, timeout=120)
        last_error = ""
        for _ in range(attempts):
            server.port = _free_port()
            done = server._pg_ctl_start()
            if done.returncode == 0:
                return server
            last_error = done.stdout + done.stderr
        server.stop()
        raise RuntimeError(f"PostgreSQL would not start: {last_error}")

    def _pg_ctl_start(self) -> subprocess.CompletedProcess[str]:
        options = (f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.base} "
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
        return subprocess.run(self._as_server_user(
            [str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir), "-l", str(self.base / "server.log"), "-w",
             "-t", "30", "-o", options, "start"]), capture_output=True, text=True, timeout=60)

    def halt(self) -> None:
        """Stop the server as an admin's restart does (``pg_ctl -m fast stop``), keeping its files."""
        subprocess.run(self._as_server_user([str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast",
                                             "-w", "stop"]), check=True, capture_output=True, timeout=60)

    def resume(self) -> None:
        """Start a :meth:`halt`-ed server again on its port.

        Raises:
            RuntimeError: it would not start.
        """
        done = self._pg_ctl_start()
        if done.returncode != 0:
            raise RuntimeError(f"PostgreSQL would not start again: {done.stdout}{done.stderr}")

    def url(self, database: str = "postgres") -> str:
        """SQLAlchemy URL of ``database`` on this server (psycopg 3 driver)."""
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """Create an empty database and return its URL."""
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        """Stop the server immediately and remove its files."""
        if (self.data_dir / "postmaster.pid").exists():
            subprocess.run(self._as_server_user([str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir),
                                                 "-m", "immediate", "-w", "stop"]),
                           capture_output=True, timeout=60)
        shutil.rmtree(self.base, ignore_errors=True)
