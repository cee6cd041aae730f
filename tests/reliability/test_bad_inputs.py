"""Bad inputs everywhere: each is refused with a message naming the field and the fix (issue 10 item 5).

Per-component tables already cover most input kinds; they are not repeated here:

* REST bodies and query strings: tests/web/test_bad_input.py (table + hypothesis), and
  tests/reliability/test_fuzz_api.py (schemathesis);
* config values (``c.SchedApp.*``): tests/web/test_config.py;
* inventory files: tests/hardware/test_static_simulated.py;
* telemetry text (dcgm-exporter, nvidia-smi, topology): tests/hardware/test_dcgm_parser.py,
  tests/hardware/test_smi_parsers.py;
* magic arguments: tests/notebook/test_nb_parsing.py, tests/notebook/test_nb_kernels.py;
* simulator scenarios: tests/sim/test_sim_simulator.py.

Added here: trace files (the simulator's CSV readers), and the end-to-end promise — a server
restarted with a bad inventory file or a bad config value refuses to start with a message naming
the setting and the fix, and once the setting is fixed every accepted job is still there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.errors import SchedError
from jupyter_sched.sim import traces
from jupyter_sched.store import Store, check_integrity

from .harness import EmbeddedServer

pytestmark = pytest.mark.timeout(300)

OPENB_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
TIRESIAS_HEADER = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"


@dataclass(frozen=True)
class BadTrace:
    id: str
    reader: Callable[[Path], Any]
    text: str | None
    want_field: str


def _pods(path: Path) -> Any:
    return traces.read_openb_pods(path=path)


def _tiresias(path: Path) -> Any:
    return traces.read_tiresias_jobs(path=path)


BAD_TRACES = [
    BadTrace("a missing trace file names the path", _pods, None, "path"),
    BadTrace("a pod list without gpu_milli names the columns", _pods, "name,cpu_milli,memory_mib,num_gpu\np,1,1,1\n",
             "columns"),
    BadTrace("gpu_milli above 1000 names gpu_milli", _pods, OPENB_HEADER + "p,1000,100,1,1500,,LS,Running,0,1,0\n",
             "gpu_milli"),
    BadTrace("gpu_milli that is a word names gpu_milli", _pods, OPENB_HEADER + "p,1000,100,1,half,,LS,Running,0,1,0\n",
             "gpu_milli"),
    BadTrace("an empty pod list names the columns", _pods, "", "columns"),
    BadTrace("binary garbage names the columns", _pods, "\x00\x01\x02garbage\n\x03", "columns"),
    BadTrace("a Tiresias job with a word for num_gpu names num_gpu", _tiresias,
             TIRESIAS_HEADER + "1,four,0,100,resnet,60,1\n", "num_gpu"),
    BadTrace("a Tiresias job with a missing duration names duration", _tiresias,
             TIRESIAS_HEADER + "1,4,0,100,resnet,,1\n", "duration"),
]


@pytest.mark.parametrize("case", BAD_TRACES, ids=[c.id for c in BAD_TRACES])
def test_a_bad_trace_file_is_refused_naming_the_field_and_the_fix(tmp_path: Path, case: BadTrace) -> None:
    path = tmp_path / "trace.csv"
    if case.text is not None:
        path.write_text(case.text)
    with pytest.raises(SchedError) as err:
        case.reader(path)
    assert err.value.field == case.want_field, err.value
    assert err.value.hint, "the error says how to fix it"


BAD_STARTS = [
    ("inventory_file", {"inventory_source": "static", "inventory_file": "{inv}"}, "nodes: [oops\n",
     "c.SchedApp.inventory_file"),
    ("quotas", {"quotas": [{"team": "ml", "guaranteed": 64, "borrowing_limit": 0}]}, None, "guaranteed"),
    ("simulated_gpus", {"simulated_gpus": -3}, None, "simulated_gpus"),
]


def test_a_restart_with_a_bad_setting_refuses_to_start_and_keeps_every_accepted_job(tmp_path: Path) -> None:
    server = EmbeddedServer.start(tmp_path)
    try:
        with server.client() as c:
            accepted = [c.post("jobs", json={"gpus": 1, "command": ["sleep", "0.2"], "name": f"keep-{n}"}).json()["id"]
                        for n in range(3)]
            # bound to no kernel: a lease must name a kernel the server runs (issue 20 (d)), and this one
            # must outlive the server's restarts
            lease = c.post("leases", json={"gpus": 1}).json()["id"]
    finally:
        server.kill()
    good = dict(server.sched)
    refused = []
    for name, settings, file_text, want in BAD_STARTS:
        inventory = tmp_path / f"bad-{name}.yaml"
        if file_text is not None:
            inventory.write_text(file_text)
        server.sched = {**good, **{k: (v.format(inv=inventory) if isinstance(v, str) else v)
                                   for k, v in settings.items()}}
        with pytest.raises(RuntimeError) as err:
            server.restart()
        log = str(err.value)
        assert want in log, f"{name}: the refusal does not name {want}:\n{log[-1500:]}"
        refused.append(name)
    assert refused == [n for n, *_ in BAD_STARTS]
    server.sched = good
    server.restart()
    try:
        with server.client() as c:
            found = {j["id"]: j for j in c.get("jobs", params={"all": "true"}).json()}
    finally:
        server.kill()
    assert set(accepted) | {lease} <= set(found), "every accepted job and lease survived the bad restarts"
    store = Store(server.db_url)
    try:
        report = check_integrity(store)
    finally:
        store.close()
    assert report.ok, report.problems


def test_a_server_that_cannot_open_its_store_names_db_url(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where a directory should be")
    with pytest.raises(RuntimeError) as err:
        EmbeddedServer.start(tmp_path, db_url=f"sqlite:///{blocker}/sched.sqlite")
    assert "db_url" in str(err.value)
