"""New user 9's findings left after session 9 (/work/coord/notes/newuser9.md, nu9-fix.md "Left"),
each its own test, against a real embedded server (simulated GPUs), its REST API and the installed
``jupyter-sched`` command. The hub finding N1 is tests/hub/test_newuser9_leases.py (a real hub)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.onboarding.test_cli_firsthour import api, clear
from tests.onboarding.test_newuser9 import _cli, _env  # the same CLI environment as new user 9's tests
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

ROOT = Path(__file__).resolve().parents[2]
USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("nu9more"), users=USERS, admin_users=["boss"],
                               stop_grace_s=30, simulated_gpus=2)
    try:
        yield srv
    finally:
        clear(srv)
        srv.kill()


def test_newuser9_n7_a_node_selector_no_node_carries_is_named_with_the_labels_there(server: EmbeddedServer) -> None:
    """node_selector {"a": "b"} → 422 field "gpus", hint "resubmit asking for fewer GPUs per worker"."""
    ann = api(server, "tok-ann")
    labels = {k: v for node in ann.get("inventory").json()["nodes"] for k, v in (node.get("labels") or {}).items()}
    for selector in ({"a": "b"}, {"a": "b", "c": "d"}, {**dict(list(labels.items())[:1]), "zz": "1"}):
        answer = ann.post("jobs", json={"gpus": 1, "command": ["true"], "node_selector": selector})
        assert answer.status_code == 422, answer.text
        error = answer.json()["error"]
        assert error["field"] == "node_selector", error
        assert "no node carries node_selector" in error["message"] and "fewer GPUs" not in (error["hint"] or ""), error
        assert "node_selector" in error["hint"], error
    cpu_only = ann.post("jobs", json={"gpus": 0, "command": ["true"], "node_selector": {"a": "b"}})
    assert cpu_only.status_code == 422 and cpu_only.json()["error"]["field"] == "node_selector", cpu_only.text


def test_newuser9_n12_stopping_and_released_are_states_the_lists_filter_and_show(server: EmbeddedServer,
                                                                                  tmp_path: Path) -> None:
    """``jobs --state stopping`` was refused though the lists say "stopping"; a released lease's row
    read state "cancelled" beside "released by root"."""
    from jupyter_sched.magics.render import queue_frame
    from jupyter_sched.wording.jobs import state_filter
    from tests.onboarding.test_newuser9 import _stopping_job

    env, ann = _env(tmp_path, server), api(server, "tok-ann")
    try:
        row = _stopping_job(env, ann, tmp_path)
        listed = _cli(env, "jobs", "--state", "stopping")
        assert listed.returncode == 0, listed.stdout + listed.stderr
        assert row["id"] in listed.stdout and "stopping" in listed.stdout, listed.stdout
        none = _cli(env, "jobs", "--state", "pending")
        assert none.returncode == 0 and row["id"] not in none.stdout, none.stdout
        query, keep = state_filter("stopping,pending")
        assert query == "running,pending" and keep(ann.get(f"jobs/{row['id']}").json())
    finally:
        clear(server)
    lease = ann.post("leases", json={"gpus": 0.5})
    assert lease.status_code == 201, lease.text
    assert ann.delete(f"leases/{lease.json()['id']}").status_code == 200
    ended = ann.get(f"leases/{lease.json()['id']}").json()
    frame = queue_frame([ended], datetime.now(timezone.utc))
    # one state word with REST's body (new user 17, N23: the lists said released, REST cancelled)
    assert ended["state"] == "cancelled" and list(frame["state"]) == ["cancelled"], frame.to_dict("records")
    query, keep = state_filter("released")
    assert query == "cancelled" and keep(ended) and not keep({**ended, "kind": "training"})


def test_newuser9_n10_logs_and_wait_take_a_unique_job_name(server: EmbeddedServer, tmp_path: Path) -> None:
    """``jupyter-sched logs <name>`` said "no job has the id …"; a unique name of one's own job is taken
    for its id; of several of that name, the live one, else the newest, said which (newuser22 N4)."""
    env = _env(tmp_path, server)
    ids = []
    for name in ("train", "twice", "twice"):
        made = _cli(env, "submit", "--gpus", "0", "--name", name, "--workdir", str(tmp_path), "--",
                    sys.executable, "-c", f"print('hello from {name}')")
        assert made.returncode == 0, made.stderr
        ids.append(made.stdout.split()[1].rstrip(":"))
    try:
        waited = _cli(env, "wait", "train", "--for", "60s")
        assert waited.returncode == 0, waited.stdout + waited.stderr
        logs = _cli(env, "logs", "train")
        assert logs.returncode == 0 and "hello from train" in logs.stdout, logs.stdout + logs.stderr
        # two of that name (a rerun), neither live: the newest, said which (newuser22 N4: it was refused)
        for job_id in ids[1:]:
            assert _cli(env, "wait", job_id, "--for", "60s").returncode == 0
        both = _cli(env, "logs", "twice")
        assert both.returncode == 0 and "hello from twice" in both.stdout, both.stdout + both.stderr
        assert f"note: twice is {ids[2]} (" in both.stderr and "the newest of 2 jobs named twice" in both.stderr, \
            both.stderr
    finally:
        clear(server)


def test_newuser9_n13_the_readme_states_the_measured_install_time() -> None:
    """The README said "about 6 minutes on 2 cores"; new user 9 took 14m48s (load 8-11), new user 10
    9m13s (load 4-5), nu10-fix 4m10s (load 3-6): it states the range with the loads measured, and
    what pip shows while the sidebar builds."""
    text = (ROOT / "README.md").read_text()
    head = text[:text.index("python3 -m venv .venv")]
    assert "about 6 minutes" not in head and "4 to 15 minutes on 2 cores" in head, head[-600:]
    assert "14m48s at load 8\u201311" in head and "Preparing metadata" in head, head[-600:]


def test_newuser9_n18_image_and_port_on_a_local_training_job_are_said_not_to_be_used(server: EmbeddedServer) -> None:
    """image "evil/image" and port 22 on a training job with the local executor: 201, silently ignored."""
    ann = api(server, "tok-ann")
    made = ann.post("jobs", json={"gpus": 0, "command": ["true"], "image": "evil/image", "port": 22})
    assert made.status_code == 201, made.text
    warnings = " ".join(made.json().get("warnings") or [])
    assert "image 'evil/image' is not used" in warnings and "port 22 is not used" in warnings, warnings
    clear(server)


def test_newuser9_n15_source_alone_is_told_it_needs_a_script_name(server: EmbeddedServer) -> None:
    """{"source": "print(1)"} alone said "nothing to run: give command, script or notebook"."""
    ann = api(server, "tok-ann")
    for body, field in (({"source": "print(1)"}, "source"), ({"notebook_json": "{}"}, "notebook_json")):
        refused = ann.post("jobs", json={"gpus": 0, **body})
        assert refused.status_code == 400, refused.text
        error = refused.json()["error"]
        assert error["field"] == field and "needs" in error["message"] and "nothing to run" not in error["message"], error
