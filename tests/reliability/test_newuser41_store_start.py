"""newuser41 N3 and n4 (/work/coord/s41/newuser41-notes.md): a store that fails at start.

N3: a full disk under the embedded store half-started the scheduler (three tracebacks), then ``status`` said all
is well (rc 0), ``submit`` said "retry in a moment" and ``doctor`` said nothing of the disk. n4: a read-only store
folder stopped the whole ``jupyter lab`` with "bad configuration … c.SchedApp.db_url … check the database URL, that
the server is up" — a setting the user never set, a server a SQLite file has not. Now JupyterLab runs on with the
scheduler off: one ERROR line naming the cause (ENOSPC/EROFS), the path, the free bytes and the fix; every
``api/sched/`` answer is 503 ``scheduler_off`` with them; ``status``/``submit`` exit non-zero saying so; ``doctor``
checks the store's disk. Real tmpfs mounts (root here; skipped with the reason when mount is refused), a real
``jupyter server`` subprocess and the installed ``jupyter-sched`` command.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.errors import StoreError
from jupyter_sched.extension.store_off import off_error_of, start_or_go_off
from jupyter_sched.store import Store
from jupyter_sched.store.start_failure import folder_problem, start_failure

CLI = str(Path(sys.executable).parent / "jupyter-sched")
ROOT = Path(__file__).resolve().parents[2]
_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0) % 4
PORTS = range(21300 + 24 * _WORKER, 21324 + 24 * _WORKER)  # but 21399: no hub answers there
"""Each pytest-xdist worker its own ports: two workers' tests took the same free port at once and one's CLI asked
the other's server (session 42: "assert 200 == 503")."""


def _mount(where: Path, *options: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(options), "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode}): the test needs root")


@pytest.fixture
def mounts() -> Iterator[list[Path]]:
    """Folders the test mounted (a tmpfs each); unmounted at teardown, whatever the test did."""
    mounted: list[Path] = []
    yield mounted
    for where in reversed(mounted):
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _fill(folder: Path) -> None:
    """Fill ``folder``'s disk to the last byte (unbuffered writes: nothing is left to flush at close)."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        for size in (65536, 4096, 1):
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * size):
                    pass
    finally:
        os.close(fd)


def _port() -> int:
    for port in PORTS:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    pytest.fail(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


def _env(home: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))}
    clean.update({"HOME": str(home), "PYTHONPATH": str(ROOT), "JUPYTER_CONFIG_DIR": str(home / "config"),
                  "JUPYTER_RUNTIME_DIR": str(home / "runtime")})
    return clean


def _get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers={"Authorization": "token t"}),
                                    timeout=30) as answer:
            return answer.status, json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read() or b"{}")


@contextlib.contextmanager
def _server(home: Path, *extra: str) -> Iterator[tuple[str, list[str]]]:
    """A real ``jupyter server`` of ``home`` with the extension (its default store); yields its URL and, once it
    stopped, its log lines (the list fills at exit)."""
    port, log = _port(), home / "server.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "jupyter_server", "--no-browser", f"--port={port}",
                                 f"--ServerApp.root_dir={home}", "--IdentityProvider.token=t", "--allow-root",
                                 "--SchedApp.inventory_source=simulated", *extra],
                                env=_env(home), stdout=out, stderr=subprocess.STDOUT)
    url, lines = f"http://127.0.0.1:{port}/", list[str]()
    try:
        for _ in range(600):  # up to a minute for the server to listen (not a timing assertion: a start)
            assert proc.poll() is None, log.read_text()[-3000:]
            with contextlib.suppress(OSError):
                if _get(url + "api/status")[0] == 200:
                    break
            time.sleep(0.1)
        yield url, lines
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        lines += log.read_text().splitlines()


def _cli(home: Path, url: str, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**_env(home), "JUPYTER_SCHED_URL": url, "JUPYTER_SCHED_TOKEN": "t"}
    return subprocess.run([CLI, *argv], env=env, capture_output=True, text=True, timeout=120)


def _says_off(home: Path, url: str, cause: str) -> None:
    """``api/sched/`` answers 503 scheduler_off naming ``cause``; status and submit exit non-zero saying so."""
    status, body = _get(url + "api/sched/config")
    assert status == 503 and body["error"]["code"] == "scheduler_off", body
    assert body["error"]["message"].startswith("the scheduler is not running: the default store ") and \
        cause in body["error"]["message"], body
    assert "retry" not in body["error"]["hint"] and "restart the server" in body["error"]["hint"], body
    for argv in (("status",), ("submit", "--gpus", "1", "--", "sleep", "1")):
        run = _cli(home, url, *argv)
        said = run.stdout + run.stderr
        assert run.returncode != 0 and "the scheduler is not running" in said and cause in said, said
        assert "retry in a moment" not in said and "Traceback" not in said, said


def _one_error_line(lines: list[str], cause: str) -> str:
    errors = [line for line in lines if line.startswith("[E ")]
    assert len(errors) == 1, "\n".join(lines[-60:])
    assert "Traceback" not in "\n".join(lines) and "failed starting" not in "\n".join(lines), "\n".join(lines[-80:])
    assert "bad configuration" not in "\n".join(lines), "\n".join(lines[-80:])
    assert cause in errors[0] and "Fix: " in errors[0], errors[0]
    return errors[0]


def test_newuser41_n4_read_only_default_store_keeps_the_lab_up_and_says_why(tmp_path: Path,
                                                                             mounts: list[Path]) -> None:
    """n4: a read-only store folder: the server serves on (its own API answers), the scheduler is off and says
    EROFS and the default store's path; the fix names making it writable or setting db_url — never "check the
    database URL" nor "that the server is up", blamed on a setting the user never set."""
    home = tmp_path / "home"
    store_dir = home / ".local/share/jupyter/jupyter_sched"
    _mount(store_dir, "size=1m", "ro")
    mounts.append(store_dir)
    with _server(home) as (url, lines):
        assert _get(url + "api/status")[0] == 200  # JupyterLab's server is up
        _says_off(home, url, "read-only file system (EROFS)")
    line = _one_error_line(lines, "(EROFS)")
    assert f"the default store {store_dir}/sched.sqlite cannot be used" in line, line
    assert f"Fix: make {store_dir} writable by this account, or set c.SchedApp.db_url" in line, line
    assert "check the database URL" not in line and "server is up" not in line, line


def test_newuser41_N3_full_disk_scheduler_off_said_by_status_submit_and_doctor(tmp_path: Path,
                                                                               mounts: list[Path]) -> None:
    """N3: the store's disk is full. The store made while there was room; the disk then filled: doctor fails its
    store_disk check (exit 1, the free bytes and the fix); a server started on it keeps JupyterLab up with the
    scheduler off, one ERROR line naming ENOSPC, the free bytes and the fix; status and submit say so (rc != 0)."""
    home = tmp_path / "home"
    store_dir = home / ".local/share/jupyter/jupyter_sched"
    _mount(store_dir, "size=16m")
    mounts.append(store_dir)
    Store(f"sqlite:///{store_dir / 'sched.sqlite'}").close()  # the store as a first start left it
    _fill(store_dir)
    doctor = subprocess.run([CLI, "doctor"], env=_env(home), capture_output=True, text=True, timeout=120)
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    assert f"store disk: the store's disk {store_dir} is full (0 bytes free of 16 MiB; ENOSPC)" in doctor.stdout, \
        doctor.stdout
    assert f"Fix: free space on the disk of {store_dir}, or set c.SchedApp.db_url" in doctor.stdout, doctor.stdout
    (store_dir / "filler").unlink()
    assert folder_problem(store_dir / "sched.sqlite") is None  # room again: nothing to say
    (store_dir / "sched.sqlite").unlink()  # a first start on a full disk: the schema cannot be written
    for extra in store_dir.glob("sched.sqlite-*"):
        extra.unlink()
    _fill(store_dir)
    with _server(home) as (url, lines):
        assert _get(url + "api/status")[0] == 200
        _says_off(home, url, "is full (0 bytes free of 16 MiB; ENOSPC)")
    line = _one_error_line(lines, "ENOSPC")
    assert f"Fix: free space on the disk of {store_dir}, or set c.SchedApp.db_url" in line, line


class _Services:
    """The services of an app whose store failed in ``start`` (the engine's start is what failed in N3: the store
    opened, then its first write met the full disk)."""

    def __init__(self, failure: BaseException) -> None:
        self.failure, self.stopped = failure, False

    async def start(self) -> None:
        raise self.failure

    async def stop(self) -> None:
        self.stopped = True


class _App:
    owns_kernels, off_error, db_url = True, None, ""

    def __init__(self, store_url: str, services: _Services) -> None:
        import logging

        self.store_url, self.services, self.log = store_url, services, logging.getLogger("test_newuser41_N3")


def test_newuser41_N3_a_start_that_meets_a_full_disk_turns_the_scheduler_off(tmp_path: Path, mounts: list[Path],
                                                                            caplog: pytest.LogCaptureFixture) -> None:
    """In process, the start path N3 met: the store opened, then the engine's first write failed with SQLite's
    "database or disk is full" — one ERROR line, no traceback, the scheduler off (every request 503), the
    services stopped; a start failure of another kind (not the store) is still raised."""
    import asyncio

    store_dir = tmp_path / "store"
    _mount(store_dir, "size=1m")
    mounts.append(store_dir)
    url = f"sqlite:///{store_dir / 'sched.sqlite'}"
    store = Store(url)
    _fill(store_dir)
    try:
        with store.engine.begin() as conn:  # the real driver's words for it
            conn.exec_driver_sql("CREATE TABLE big(x BLOB)")
            conn.exec_driver_sql("INSERT INTO big VALUES (zeroblob(4000000))")
        pytest.fail("the full disk took 4 MB")
    except Exception as exc:  # whichever SQLAlchemy wraps it in, as the store's callers meet it
        failure = StoreError(f"store failure: {exc}")
        failure.__cause__ = exc
    finally:
        store.close()
    assert isinstance(failure.__cause__, Exception) and isinstance(getattr(failure.__cause__, "orig", None),
                                                                   sqlite3.OperationalError)
    app = _App(url, _Services(failure))
    with caplog.at_level("INFO"):
        assert asyncio.run(start_or_go_off(app)) is False
    assert app.off_error is not None and app.off_error.code == "scheduler_off" and app.services.stopped
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and errors[0].exc_info is None, caplog.text
    assert f"the store's disk {store_dir} is full (" in errors[0].getMessage() and "ENOSPC" in errors[0].getMessage()
    other = _App(url, _Services(RuntimeError("not the store")))
    with pytest.raises(RuntimeError):
        asyncio.run(start_or_go_off(other))
    assert other.off_error is None


def test_newuser41_n4_a_store_url_that_is_not_the_disk_stays_a_configuration_error(tmp_path: Path) -> None:
    """Only the store folder's causes turn the scheduler off at open: a PostgreSQL that does not answer, or a
    SQLite file on a disk with room whose open failed otherwise, keeps the configuration error's words."""

    class _Set:
        db_url = "postgresql+psycopg://u@127.0.0.1:1/db"
        store_url = db_url

    refused = StoreError("cannot open the store at postgresql+psycopg://u@127.0.0.1:1/db: connection refused")
    assert off_error_of(_Set(), refused, opened=False) is None
    assert start_failure(f"sqlite:///{tmp_path}/sched.sqlite", StoreError("file is not a database"),
                         url_set=True) is None


def test_newuser41_N3_a_disk_that_fills_while_running_answers_507_and_recovers(tmp_path: Path,
                                                                             mounts: list[Path]) -> None:
    """N3 part 2: the store's disk fills while the scheduler runs. A submit is answered 507 ``store_full`` saying the
    disk is out of space and that nothing of it was saved (never "retry in a moment"); the job accepted before is
    kept; once space is freed the next submit is accepted, with no restart."""
    home = tmp_path / "home"
    store_dir = home / ".local/share/jupyter/jupyter_sched"
    _mount(store_dir, "size=16m")
    mounts.append(store_dir)
    with _server(home, f"--SchedApp.log_dir={tmp_path / 'logs'}") as (url, lines):
        first = _cli(home, url, "submit", "--name", "before", "--gpus", "1", "--", "sleep", "1")
        assert first.returncode == 0, first.stdout + first.stderr
        _fill(store_dir)
        refused = _cli(home, url, "submit", "--name", "while-full", "--gpus", "1", "--", "sleep", "1")
        said = refused.stdout + refused.stderr
        assert refused.returncode != 0 and "out of disk space: nothing of this request was saved" in said, said
        assert "retry in a moment" not in said and "Traceback" not in said, said
        (store_dir / "filler").unlink()
        again = _cli(home, url, "submit", "--name", "after", "--gpus", "1", "--", "sleep", "1")
        assert again.returncode == 0, again.stdout + again.stderr
        status, body = _get(url + "api/sched/jobs?limit=50")
        assert status == 200, body
        names = {job["name"] for job in body}
        assert {"before", "after"} <= names and "while-full" not in names, names
    # session 42 (store41's leftover): the full disk is said once by the store and its end too, at WARNING (the
    # package's INFO lines never reach the server's log); the engine's backoff no longer says "reconnecting to the
    # database" and the 507 is one WARNING line without the request's headers at ERROR
    text = "\n".join(lines)
    full = [line for line in lines if " is full (" in line and "(since " in line and "writes are refused" in line]
    assert len(full) == 1 and full[0].startswith("[W ") and str(store_dir) in full[0], text[-4000:]
    back = [line for line in lines if "the store's disk has room again after" in line]
    assert len(back) == 1 and back[0].startswith("[W ") and "writes refused meanwhile" in back[0], text[-4000:]
    answered = [line for line in lines if "-> 507 [reference " in line]
    assert len(answered) == 1 and answered[0].startswith("[W "), text[-4000:]
    assert not [line for line in lines if line.startswith("[E ")] and "Traceback" not in text, text[-4000:]
    assert '"Host": ' not in text and "reconnecting to the database" not in text, text[-4000:]


def test_newuser41_n4_serve_on_a_read_only_store_exits_1_with_the_one_line(tmp_path: Path, mounts: list[Path]) -> None:
    """``jupyter-sched serve`` (the hub's service: nothing to serve without its store) on a read-only store folder
    exits 1 with one ERROR line naming EROFS and the fix, no traceback (no hub answers at 21399, the last port of
    this block: the token check only warns)."""
    store_dir = tmp_path / "ro"
    _mount(store_dir, "size=1m", "ro")
    mounts.append(store_dir)
    home = tmp_path / "home"
    env = {**_env(home), "JUPYTERHUB_API_URL": "http://127.0.0.1:21399/hub/api", "JUPYTERHUB_API_TOKEN": "x",
           "JUPYTER_SCHED_DB_URL": f"sqlite:///{store_dir / 'sched.sqlite'}"}
    done = subprocess.run([CLI, "serve", "--ip", "127.0.0.1", f"--port={_port()}", "--allow-root",
                           "--allow-unprivileged-port"], env=env, capture_output=True, text=True, timeout=120)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said[-3000:]
    errors = [line for line in said.splitlines() if line.startswith("[E ")]
    assert len(errors) == 1 and "Traceback" not in said, said[-3000:]
    assert "jupyter-sched serve: not starting, the scheduler cannot run: the store " in errors[0], errors[0]
    assert "read-only file system (EROFS). Fix: make " in errors[0], errors[0]
