"""A real Prometheus server (Debian's ``prometheus``) scrapes dcgm-exporter text from two test HTTP
servers on loopback; the Prometheus API collector reads the values back."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from jupyter_sched.errors import TelemetryError
from jupyter_sched.telemetry import PrometheusCollector

from .conftest import PROM_SAMPLES, require
from .test_reclaim import A100, CASE_008

T4 = "GPU-6d5c0ac5-74d7-3130-46f1-e93ed57f469a"


def prometheus_binary() -> str:
    found = shutil.which("prometheus")
    if found is None and shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "prometheus"], capture_output=True, timeout=300, check=False)
        found = shutil.which("prometheus")
    if found is None:
        pytest.skip("the prometheus binary is not installed and `apt-get install -y prometheus` could not install it")
    return found


def free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


def serve(text: str) -> ThreadingHTTPServer:
    body = text.encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[str]:
    binary = prometheus_binary()
    exporters = [serve((require(PROM_SAMPLES) / "t4-load__590.48.01.prom").read_text()), serve(CASE_008)]
    targets = ", ".join(f"'127.0.0.1:{s.server_address[1]}'" for s in exporters)
    config = tmp_path / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n"
                      f"  - job_name: dcgm\n    static_configs:\n      - targets: [{targets}]\n")
    port = free_port()
    log = (tmp_path / "prometheus.log").open("wb")
    proc = subprocess.Popen([binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
                             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        for server in exporters:
            server.shutdown()
            server.server_close()


def test_prometheus_collector_reads_back_what_a_real_prometheus_scraped(prometheus: str) -> None:
    collector = PrometheusCollector(prometheus, timeout_s=2)
    deadline = time.monotonic() + 30
    samples = {}
    try:
        while time.monotonic() < deadline:  # the first sample is queryable only a few seconds after start
            try:
                samples = {s.key: s for s in collector.collect(datetime.now(timezone.utc))}
            except TelemetryError:
                samples = {}
            if len(samples) == 3 and samples[(T4, None)].power_w is not None:
                break
            time.sleep(0.3)
    finally:
        collector.close()
    assert set(samples) == {(T4, None), (A100, 1), (A100, 2)}, samples
    t4 = samples[(T4, None)]
    assert (t4.utilization_pct, t4.gr_engine_active, t4.memory_used_mib, t4.memory_total_mib) == (91.0, 0.156205, 5120.0, 15358.0)
    assert (t4.power_w, t4.temperature_c, t4.node) == (68.244, 74.0, "cp-bm14r7")
    assert samples[(A100, 1)].utilization_pct == 0.0 and samples[(A100, 1)].pod == "alice-nb-0"
    assert samples[(A100, 2)].utilization_pct == pytest.approx(87.0) and samples[(A100, 2)].mig_profile == "3g.40gb"


def test_prometheus_collector_on_a_dead_address_raises_telemetry_error() -> None:
    collector = PrometheusCollector(f"http://127.0.0.1:{free_port()}", timeout_s=1)
    with pytest.raises(TelemetryError, match="cannot query Prometheus"):
        collector.collect(datetime.now(timezone.utc))
    collector.close()


def test_prometheus_collector_rejects_an_answer_that_is_not_prometheus() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json={"status": "error", "error": "bad"}))
    collector = PrometheusCollector("http://prom.test", client=httpx.Client(transport=transport))
    with pytest.raises(TelemetryError, match="Prometheus query failed"):
        collector.collect(datetime.now(timezone.utc))
