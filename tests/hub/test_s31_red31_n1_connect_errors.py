"""red31 N1 / newuser31 N3: the CLI printed a Python traceback when ``connect()`` raised a SchedError — the hub
token's mint at the scheduler service's own address (the value of ``JUPYTER_SCHED_HUB_URL`` in the example
jupyterhub_config.py, whose ``/hub/api`` answers 404), and a squatted address (``AddressTaken``). Each is now one
line naming the fix, exit 3 like the other address mistakes; a kernel's magics say the same line.

Real parts: the installed CLI in a subprocess; the service's own address stood in by an HTTP server on a free
loopback port that answers 404 to every path, as the service does to ``/hub/api/user`` (no hub needed to show the
wire); the squatter is a real listener of a real other OS account."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.magics.core import MagicError, SchedMagics
from tests import accounts
from tests.ports import free_port

CLI = str(Path(sys.executable).parent / "jupyter-sched")

LISTENER = textwrap.dedent('''
    import http.server, sys
    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            with open(sys.argv[2], "a") as seen:
                seen.write(self.path + " " + self.headers.get("Authorization", "-") + "\\n")
            self.send_response(404)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")
        do_POST = do_GET
        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Page)
    print("listening", flush=True)
    server.serve_forever()
''')


def _listen(folder: Path, as_account: str | None) -> tuple[subprocess.Popen[str], int, Path]:
    script, seen = folder / "listener.py", folder / "seen.txt"
    script.write_text(LISTENER)
    seen.touch()
    seen.chmod(0o666)
    port = free_port()
    python = accounts.account_python() or sys.executable
    argv = [python, str(script), str(port), str(seen)]
    proc = subprocess.Popen(["runuser", "-u", as_account, "--", *argv] if as_account else argv,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "listening"
    return proc, port, seen


@pytest.fixture
def own_address(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    proc, port, seen = _listen(tmp_path, None)
    try:
        yield f"http://127.0.0.1:{port}/services/jupyter-sched/", seen
    finally:
        proc.kill()
        proc.wait(timeout=30)


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED_", "JUPYTERHUB_"))}
    env.update(JUPYTER_SCHED_TOKEN="amys-whole-hub-token", JUPYTER_RUNTIME_DIR=str(tmp_path / "rt"), **extra)
    return env


def _cli(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *argv], env=env, capture_output=True, text=True, timeout=120)


def test_newuser31_n3_the_cli_at_the_services_own_address_says_so_in_one_line(
        own_address: tuple[str, Path], tmp_path: Path) -> None:
    url, seen = own_address
    for argv, env in ((("--url", url, "queue"), _env(tmp_path)),
                      (("status",), _env(tmp_path, JUPYTER_SCHED_HUB_URL=url))):
        done = _cli(env, *argv)
        assert done.returncode == 3, done.stderr
        assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
        assert f"{url} is not the hub's address" in done.stderr, done.stderr
        assert "use the hub's address, http(s)://HUB/services/jupyter-sched/" in done.stderr
        assert "JUPYTERHUB_API_URL" in done.stderr and "[not_the_hub]" in done.stderr
    # only the hub API was asked; nothing went to the scheduler's paths
    assert all(line.startswith("/hub/api/user ") for line in seen.read_text().splitlines()), seen.read_text()


def test_red31_n1_a_kernels_magic_says_the_same_line(own_address: tuple[str, Path], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    url, _ = own_address
    for name in list(os.environ):
        if name.startswith(("JUPYTER_SCHED_", "JUPYTERHUB_")):
            monkeypatch.delenv(name)
    for name, value in _env(tmp_path, JUPYTER_SCHED_HUB_URL=url).items():
        monkeypatch.setenv(name, value)
    with pytest.raises(MagicError) as said:
        SchedMagics(None).schedule("queue")
    assert f"{url} is not the hub's address" in str(said.value) and "\n" not in str(said.value)


@pytest.mark.skipif(accounts.skip_reason() is not None, reason=accounts.skip_reason() or "")
def test_red31_n1_a_squatted_address_is_one_line_and_exit_3(tmp_path: Path) -> None:
    with accounts.shared_dir() as shared, accounts.os_accounts(1) as (mallory,):
        proc, port, seen = _listen(shared, mallory.name)
        try:
            url = f"http://127.0.0.1:{port}/services/jupyter-sched/"
            done = _cli(_env(tmp_path, JUPYTER_SCHED_HUB_URL=url), "status")
        finally:
            proc.kill()
            proc.wait(timeout=30)
        assert done.returncode == 3, done.stderr
        assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
        assert f"is held by uid {mallory.uid}" in done.stderr and "[address_taken]" in done.stderr, done.stderr
        assert seen.read_text() == ""  # nothing sent, the token least of all
