"""red31 R2 (high): ``telemetry_source = "dcgm"`` believed whatever answered at ``telemetry_url`` — a local
account that held the exporter's loopback port for 5 s (while dcgm-exporter restarted) reported Xid 79 on
every GPU, which marked them unhealthy for good: no GPU work started for anyone. Each connection to a loopback
telemetry address is now checked once made, before the request is sent: another account's is refused, nothing
it says is believed, and the last good samples stay. An endless answer is cut at a bound.

The exporters here are real HTTP servers on free loopback ports: the squatter runs as a real other OS account,
the "real" exporter as root (as dcgm-exporter's container or unit runs). No GPU is needed for the wire format."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from jupyter_sched.errors import TelemetryError
from jupyter_sched.services.config import _make_monitor
from jupyter_sched.telemetry import DcgmCollector, http_text_fetcher
from jupyter_sched.telemetry.exporter_peer import MAX_SCRAPE_BYTES, exporter_client, exporter_uids
from tests import accounts
from tests.ports import free_port

pytestmark = pytest.mark.skipif(accounts.skip_reason() is not None, reason=accounts.skip_reason() or "")

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=timezone.utc)
XID = ('DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-r31",Hostname="n1"} 55\n'
       'DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-r31",Hostname="n1"} 79\n')

EXPORTER = textwrap.dedent('''
    import http.server, sys
    port, text, endless = int(sys.argv[1]), open(sys.argv[2], "rb").read(), sys.argv[3] == "endless"
    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            if not endless:
                self.wfile.write(text)
                return
            try:
                while True:
                    self.wfile.write(b"# filler\\n" * 100000)
            except OSError:
                pass
        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Page)
    print("listening", flush=True)
    server.serve_forever()
''')


def _serve(folder: Path, *, as_account: str | None, endless: bool = False) -> tuple[subprocess.Popen[str], int]:
    script, page = folder / "exporter.py", folder / "metrics.prom"
    script.write_text(EXPORTER)
    page.write_text(XID)
    port = free_port()
    python = accounts.account_python() or sys.executable
    argv = [python, str(script), str(port), str(page), "endless" if endless else "once"]
    proc = subprocess.Popen(["runuser", "-u", as_account, "--", *argv] if as_account else argv,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "listening"
    return proc, port


@pytest.fixture
def squatter() -> Iterator[tuple[accounts.Account, int]]:
    with accounts.shared_dir() as shared, accounts.os_accounts(1) as (mallory,):
        proc, port = _serve(shared, as_account=mallory.name)
        try:
            yield mallory, port
        finally:
            proc.kill()
            proc.wait(timeout=30)


def test_red31_r2_an_exporter_port_another_account_holds_is_never_believed(
        squatter: tuple[accounts.Account, int]) -> None:
    mallory, port = squatter
    fetch = http_text_fetcher(f"http://127.0.0.1:{port}/metrics")
    with pytest.raises(TelemetryError) as refused:
        DcgmCollector(fetch).collect(NOW)
    said = str(refused.value)
    assert f"the telemetry address 127.0.0.1:{port} is held by uid {mallory.uid}, not the exporter" in said, said
    assert "c.SchedApp.telemetry_uids" in said


def test_red31_r2_the_service_monitor_keeps_every_gpu_healthy_while_a_squatter_answers(
        squatter: tuple[accounts.Account, int], caplog: pytest.LogCaptureFixture) -> None:
    """The monitor the service builds from its settings (the same function): no Xid is taken, the failure is said."""
    mallory, port = squatter
    monitor = _make_monitor({"telemetry_source": "dcgm", "telemetry_url": f"http://127.0.0.1:{port}/metrics"},
                            None, logging.getLogger("test"), retention_s=600)
    assert monitor is not None
    with caplog.at_level(logging.WARNING):
        assert monitor.sample() == []
    assert monitor.health_events() == [] and monitor.errors == 1
    assert f"held by uid {mallory.uid}" in monitor.last_error
    # the uid a setting names is believed (an exporter run as its own account)
    believed = _make_monitor({"telemetry_source": "dcgm", "telemetry_url": f"http://127.0.0.1:{port}/metrics",
                              "telemetry_uids": [mallory.uid]}, None, logging.getLogger("test"), retention_s=600)
    assert believed is not None and believed.sample() != []
    assert [e.problem for e in believed.health_events()] == ["Xid 79"]


def test_red31_r2_an_exporter_of_root_is_read_and_an_endless_answer_is_cut(tmp_path: Path) -> None:
    assert 0 in exporter_uids() and len(XID) < MAX_SCRAPE_BYTES
    proc, port = _serve(tmp_path, as_account=None)
    try:
        samples = DcgmCollector(http_text_fetcher(f"http://127.0.0.1:{port}/metrics")).collect(NOW)
        assert {s.gpu_uuid for s in samples} == {"GPU-r31"}
    finally:
        proc.kill()
        proc.wait(timeout=30)
    proc, port = _serve(tmp_path, as_account=None, endless=True)
    try:
        with pytest.raises(TelemetryError, match="answered over 32 MiB"):
            http_text_fetcher(f"http://127.0.0.1:{port}/metrics", client=exporter_client())()
    finally:
        proc.kill()
        proc.wait(timeout=30)
