"""New user 14's findings N20, N24 and N25 (/work/coord/notes/newuser14.md), the leftover
``GET jobs?state=`` of newuser 13 (N13-17) and the magics' two error classes: against a real embedded
server (simulated GPUs), the installed ``jupyter-sched`` command and the magics driven in this
process with a real client. Each test names the finding it holds to."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.onboarding.test_cli_firsthour import CLI, ROOT, api, clear, module_server
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-bob": "bob", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu15f2", USERS)


def _env(server: EmbeddedServer | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_", "JUPYTERHUB"))}
    env.update({"PYTHONPATH": str(ROOT), **extra})
    if server is not None:
        env.update(JUPYTER_SCHED_URL=server.url, JUPYTER_SCHED_TOKEN=extra.get("JUPYTER_SCHED_TOKEN", "tok-ann"))
    return env


def _cli(env: dict[str, str], *argv: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *argv], env=env, capture_output=True, text=True, timeout=timeout, cwd=cwd)


def _refused(server: EmbeddedServer, route: str, body: Any, status: int = 400, token: str = "tok-ann") -> dict[str, Any]:
    answer = api(server, token).post(route, json=body)
    assert answer.status_code == status, answer.text
    error: dict[str, Any] = answer.json()["error"]
    return error


# ---- N20: tolerations, "carry", the leases' unknown-field hint, the workers bound ------------------------------

@pytest.mark.parametrize(("tolerations", "field"), [
    ("abc", "tolerations"), ("", "tolerations"), (["x" * 5000], "tolerations[0]"), (["gpu=true:Sometimes"], "tolerations[0]"),
    (["has space"], "tolerations[0]"), ([f"t{i}" for i in range(65)], "tolerations"),
], ids=["a string", "an empty string", "5,000 characters", "no such effect", "a space", "65 of them"])
def test_newuser14_n20_tolerations_are_a_list_of_tolerations(server: EmbeddedServer, tolerations: Any,
                                                             field: str) -> None:
    """N20: ``"tolerations": "abc"`` was stored as ``["abc"]`` and a 5,000-character string accepted.
    A toleration is ``KEY[=VALUE][:EFFECT]`` (what placement matches and a pod carries); anything else
    is a 400 naming the item."""
    error = _refused(server, "jobs", {"gpus": 0, "command": ["true"], "tolerations": tolerations})
    assert error["field"] == field and error["message"].startswith(field), error
    assert "NoSchedule" in error["hint"] or "at most 64" in error["message"], error


def test_newuser14_n20_good_tolerations_are_kept_and_written_to_the_pod_with_their_effect(
        server: EmbeddedServer) -> None:
    """N20 (the same rule's other side): the grammar's forms pass as sent; the Kubernetes executor
    writes ``key=value:Effect`` as key, value and effect (the effect used to land in the value)."""
    from jupyter_sched.executors.kubernetes.manifests import _toleration

    sent = ["gpu=true:NoSchedule", "example.com/dedicated:NoExecute", "plain", "k="]
    made = api(server, "tok-ann").post("jobs", json={"gpus": 0, "command": ["true"], "tolerations": sent})
    assert made.status_code == 201, made.text
    assert made.json()["resources"]["tolerations"] == sent
    assert _toleration("gpu=true:NoSchedule") == {"key": "gpu", "operator": "Equal", "value": "true",
                                                  "effect": "NoSchedule"}
    assert _toleration("example.com/dedicated:NoExecute") == {"key": "example.com/dedicated", "operator": "Exists",
                                                              "effect": "NoExecute"}
    clear(server)


def test_newuser14_n20_one_node_carries_two_nodes_carry() -> None:
    """N20: "the node here (vm) carry no labels" — the verb agrees with the count."""
    from jupyter_sched.model import Inventory
    from jupyter_sched.model.job import ResourceRequest
    from jupyter_sched.placement.reasons import _selector_matches_nothing
    from jupyter_sched.placement.state import ClusterState
    from tests.core.core_builders import make_node

    request = ResourceRequest(gpus=1, node_selector={"gpu": "a100"})
    one = _selector_matches_nothing(request, ClusterState(Inventory(nodes=(make_node("vm", gpus=1),))))
    two = _selector_matches_nothing(request, ClusterState(Inventory(nodes=(make_node("a", gpus=1),
                                                                             make_node("b", gpus=1)))))
    assert one is not None and "the node here (vm) carries no labels" in one.message, one
    assert two is not None and "the nodes here (a, b) carry no labels" in two.message, two


def test_newuser14_n20_a_lease_lists_the_fields_a_lease_takes(server: EmbeddedServer) -> None:
    """N20 (still N13-12): ``POST leases {"timeout": …}`` listed the job fields (command, script,
    workers, groups…) as known, every one of them refused on a lease. It lists a lease's fields and
    says how to wait for a grant; ``workers``/``groups`` on a lease are refused as job fields."""
    error = _refused(server, "leases", {"gpus": 1, "timeout": "abc"})
    known = error["hint"].split("known fields: ", 1)[1].split(", ")
    assert "gpus" in known and "kernel_id" in known, error
    assert not {"command", "script", "notebook", "workers", "groups", "env", "time_limit"} & set(known), error
    assert "wait_ms" in error["hint"], error
    assert "command" in _refused(server, "jobs", {"gpus": 1, "timeout": "abc"})["hint"]  # a job's list is whole
    workers = _refused(server, "leases", {"gpus": 1, "workers": 2})
    assert workers["field"] == "workers" and workers["message"].startswith("workers is for jobs"), workers


@pytest.mark.parametrize(("body", "want"), [
    ({"workers": 100000}, "workers must be at most 1024 (got 100000)"),
    ({"groups": [{"name": f"g{i}", "gpus": 1} for i in range(17)]}, "groups must be at most 16 worker groups (got 17)"),
    ({"groups": [{"name": "a", "gpus": 1, "workers": 1000}, {"name": "b", "gpus": 1, "workers": 1000}]},
     "groups must hold at most 1024 workers in all (got 2000)"),
], ids=["workers", "groups", "workers of groups"])
def test_newuser14_n20_a_range_message_starts_with_its_field(server: EmbeddedServer, body: dict[str, Any],
                                                             want: str) -> None:
    """N20: ``at most 1024 workers (got 100000)`` was the one range message not opening with its field."""
    error = _refused(server, "jobs", {"command": ["true"], **body})
    assert error["message"] == want, error


# ---- N25 / N13-17: query arguments of writes, empty filters ---------------------------------------------------

def test_newuser14_n25_a_write_refuses_a_query_argument_it_does_not_take(server: EmbeddedServer) -> None:
    """N25: ``POST jobs?user=ann`` as bob submitted as bob, the argument ignored — while an unknown
    body field is a 400. Every POST, PUT, PATCH and DELETE refuses what it does not take; the
    arguments the write routes do take still work."""
    bob = api(server, "tok-bob")
    posted = bob.post("jobs", params={"user": "ann"}, json={"gpus": 0, "command": ["true"]})
    assert posted.status_code == 400 and posted.json()["error"]["field"] == "user", posted.text
    # it names what it does take (the submit key since s32; "takes no query arguments" before)
    assert "POST jobs takes: idempotency_key" in posted.json()["error"]["hint"], posted.text
    assert bob.get("jobs").json() == []  # nothing was submitted
    quotas = api(server, "tok-boss").put("quotas", params={"dry": "1"}, json=[])
    assert quotas.status_code == 400 and quotas.json()["error"]["field"] == "dry", quotas.text
    lease = bob.post("leases", params={"wait_ms": "1"}, json={"gpus": 1})
    assert lease.status_code == 201, lease.text
    released = bob.delete(f"leases/{lease.json()['id']}", params={"why": "release", "x": "1"})
    assert released.status_code == 400 and released.json()["error"]["field"] == "x", released.text
    assert bob.delete(f"leases/{lease.json()['id']}", params={"why": "release"}).status_code == 200
    clear(server)


def test_newuser14_n25_the_write_routes_query_arguments_are_those_openapi_names() -> None:
    """The table the check reads (web.WRITE_QUERIES) is what openapi.yaml documents for every
    operation other than GET: no route refuses a documented argument or takes an undocumented one."""
    import yaml

    from jupyter_sched.extension.web import WRITE_QUERIES

    spec = yaml.safe_load((ROOT / "jupyter_sched" / "extension" / "openapi.yaml").read_text())
    documented = {(method.upper(), path.lstrip("/")): {p["name"] for p in op.get("parameters", []) if p.get("in") == "query"}
                  for path, ops in spec["paths"].items() for method, op in ops.items()
                  if method in ("post", "put", "patch", "delete")}
    taken = {key: set(model.model_fields) for key, model in WRITE_QUERIES.items()}
    assert {k: v for k, v in documented.items() if v} == taken


@pytest.mark.parametrize(("route", "field"), [("jobs?state=", "state"), ("jobs?all=", "all"), ("queue?limit=", "limit"),
                                              ("audit?action=", "action")])
def test_newuser13_n17_an_empty_filter_is_refused_not_read_as_any(server: EmbeddedServer, route: str,
                                                                   field: str) -> None:
    """Still N13-17: ``GET jobs?state=`` answered every job — an empty filter read as none. It is a
    400 naming the argument, in the words of an empty body field."""
    answer = api(server, "tok-boss").get(route)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["field"] == field and error["message"] == f"{field} must not be empty", error
    assert error["hint"].startswith(f"give {field} a value") and "leave it out" in error["hint"], error


# ---- N25: wording ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("field", ["script", "notebook"])
def test_newuser14_n25_a_missing_file_names_its_field_once(server: EmbeddedServer, tmp_path: Path, field: str) -> None:
    """N25: ``notebook: notebook '/x.ipynb' does not exist on this server`` — the field said twice."""
    path = str(tmp_path / ("nosuch.py" if field == "script" else "nosuch.ipynb"))
    error = _refused(server, "jobs", {"gpus": 0, field: path})
    assert error["message"] == f"{field} '{path}' does not exist on this server", error
    said = _cli(_env(server), "submit", "--gpus", "0", f"--{field}", path, cwd=tmp_path)
    # the CLI names it by its option, once (wording/files.py since newuser31 n15)
    assert f"--{field} '{path}' does not exist" in said.stderr and f"{field}: {field}" not in said.stderr, said.stderr


def test_newuser14_n25_a_server_setting_is_not_said_as_an_option() -> None:
    """N25: the CLI's 429 read ``max_unfinished_per_user: nu14b has 1000 jobs…`` — a server setting's
    name where the other lines put the option the user typed. Only options of the surface prefix."""
    from jupyter_sched.cli.main import error_line
    from jupyter_sched.errors import BusyError, ValidationError
    from jupyter_sched.wording.flags import CELL, in_surface_terms

    busy = BusyError("bob has 1000 jobs and leases unfinished; at most 1000 per user", field="max_unfinished_per_user",
                     hint="cancel pending work you no longer need")
    assert error_line("submit", busy).startswith("jupyter-sched submit: bob has 1000 jobs"), error_line("submit", busy)
    assert in_surface_terms(busy.message, None, busy.field, CELL)[0] == busy.message
    bad = ValidationError("cannot parse memory size 'x'", field="mem_per_gpu", hint="use e.g. 40GiB")
    assert error_line("submit", bad).startswith("jupyter-sched submit: --mem-per-gpu: cannot parse")  # options still


def test_newuser14_n25_the_magic_names_its_own_list_command_for_an_unknown_definition(server: EmbeddedServer) -> None:
    """N25: ``%schedule define run nosuch`` → "List your definitions to see their ids." — no command;
    the CLI names ``jupyter-sched definitions``. The magic names ``%schedule define list``; a job id
    likewise ``%schedule jobs``."""
    from jupyter_sched.magics.core import MagicError
    from tests.onboarding.test_newuser11 import _magics

    with pytest.raises(MagicError) as definition:
        _magics(server, "tok-bob").schedule("define run d-nosuch")
    assert "%schedule define list lists your definitions" in str(definition.value), definition.value
    with pytest.raises(MagicError) as job:
        _magics(server, "tok-bob").schedule("logs j-nosuch-1")
    assert "%schedule jobs lists your jobs" in str(job.value), job.value


def test_newuser14_n25_the_priority_rule_says_its_list_once(server: EmbeddedServer) -> None:
    """N25 (and N2): ``--priority must be high, normal or low (got 'urgent'). Use --priority high,
    normal or low.`` — the list twice. (Fixed with N2's one rule, 8a61267; held here for the magic.)"""
    from jupyter_sched.magics.core import MagicError
    from tests.onboarding.test_newuser11 import _magics

    with pytest.raises(MagicError) as refused:
        _magics(server, "tok-bob").schedule("--gpus 1 --priority urgent", "print('never runs')")
    assert str(refused.value).count("high, normal or low") == 1, refused.value


def test_newuser14_n25_usage_is_answered_with_the_command_that_says_it(server: EmbeddedServer) -> None:
    """N25 (still N13-11): ``jupyter-sched usage`` → "not one of …", and a user's own GPU-hours were
    nowhere in the CLI. ``status`` says them; ``usage`` is now a command of its own (hub admin 22,
    H10) that answers with the caller's own usage."""
    said = _cli(_env(server), "usage")
    assert said.returncode == 0 and "ann's usage" in said.stdout, (said.stdout, said.stderr)
    status = _cli(_env(server), "status")
    assert status.returncode == 0 and "usage      0.00 GPU-hours allocated to you in the last 7 days" in status.stdout, \
        status.stdout


# ---- N24: the CLI's odds ----------------------------------------------------------------------------------------

def test_newuser14_n24_simulate_says_its_errors_as_the_cli_does(tmp_path: Path) -> None:
    """N24: ``simulate /nonexistent.yaml`` said ``error: …``, a bad YAML file a five-line PyYAML dump —
    every other command says ``jupyter-sched CMD: … [code]`` on one line."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [\n")
    missing = _cli(_env(None), "simulate", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2 and missing.stderr == (
        f"jupyter-sched simulate: scenario file {tmp_path / 'nope.yaml'} does not exist — check the path "
        "[not_found]\n"), missing.stderr
    broken = _cli(_env(None), "simulate", str(bad))
    assert broken.returncode == 2 and broken.stderr.count("\n") == 1, broken.stderr
    assert broken.stderr.startswith("jupyter-sched simulate: bad.yaml is not valid YAML (line 2, column 1): "), \
        broken.stderr
    folder = _cli(_env(None), "simulate", str(tmp_path))
    assert "is a directory, not a file" in folder.stderr, folder.stderr
    for argv in (["simulate"], ["simulate", "--bogus", "x"]):
        usage = _cli(_env(None), *argv)
        assert usage.returncode == 2 and usage.stderr.startswith("jupyter-sched simulate: ") \
            and usage.stderr.endswith("[usage_error]\n") and usage.stderr.count("\n") == 1, usage.stderr


def test_newuser14_n24_a_token_file_is_read_to_a_bound(server: EmbeddedServer, tmp_path: Path) -> None:
    """N24: ``--token-file /dev/zero`` read without end (killed by a timeout). It reads 4 KiB and says
    what is wrong; a token file (also a pipe) still works."""
    said = _cli(_env(server), "--token-file", "/dev/zero", "status", timeout=30)
    assert said.returncode == 2 and said.stderr.strip() == (
        "jupyter-sched: --token-file /dev/zero: not a token file (no line end in its first 4 KiB) — give the file "
        "whose first line is the token [usage_error]"), said.stderr
    good = tmp_path / "token"
    good.write_text("tok-ann\n")
    assert _cli(_env(server), "--token-file", str(good), "status").returncode == 0


@pytest.mark.parametrize("option", ["--url", "--token", "--token-file"])
def test_newuser14_n24_an_empty_connection_option_is_refused(server: EmbeddedServer, option: str) -> None:
    """N24: ``--url ''`` silently used the discovered server (often a script's unset variable), and
    ``--token ''`` was sent and refused as "the token in JUPYTER_SCHED_TOKEN"."""
    said = _cli(_env(server), f"{option}=", "status")
    assert said.returncode == 2 and said.stderr.startswith(f"jupyter-sched: {option} is empty — give it a value, "
                                                           f"or leave {option} out"), said.stderr


def test_newuser14_n24_definitions_show_says_the_first_firing_once(server: EmbeddedServer, tmp_path: Path) -> None:
    """N24: ``definitions show`` printed ``… next 07:00 UTC`` and then ``next 07:00 UTC`` again as the
    first of the next firings. The head line leaves it to the list (CLI and magic)."""
    from tests.onboarding.test_newuser11 import _magics

    script = tmp_path / "nightly.py"
    script.write_text("print('hi')\n")
    made = _cli(_env(server), "definitions", "create", str(script), "--cron", "0 7 * * *", "--gpus", "0")
    assert made.returncode == 0, made.stderr
    shown = _cli(_env(server), "definitions", "show", "nightly")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    nexts = [line for line in lines if line.strip().startswith("next")]
    assert "next" not in lines[0] and len(nexts) >= 2 and len(set(nexts)) == len(nexts), shown.stdout
    said: list[str] = []
    magics = _magics(server)
    magics._print = said.append  # type: ignore[method-assign]
    definition_id = lines[0].split()[0]
    magics.schedule(f"define show {definition_id}")
    head = next(line for line in said if definition_id in line)
    assert "next run" not in head and sum("next:" in line for line in said) >= 2, said


# ---- the magics' two error classes ------------------------------------------------------------------------------

def test_newuser14_n4_a_magics_refusals_are_one_class_and_one_look(server: EmbeddedServer) -> None:
    """N4/N25: ``%gpu request -1`` (the magic's own parser) was IPython's ``UsageError: …`` on stderr,
    ``%gpu request 99`` (the server) a ``MagicError`` drawn ``jupyter_sched: …`` — two looks for one kind
    of mistake. Both are a MagicError (a UsageError still, for who catches those) drawn the same way."""
    from IPython.core.error import UsageError

    from jupyter_sched.magics.core import MagicError
    from tests.onboarding.test_newuser11 import _magics

    drawn = []
    for line in ("request -1", "request 99", "keepalive 10m"):
        with pytest.raises(MagicError) as refused:
            _magics(server, "tok-bob").gpu(line)
        assert isinstance(refused.value, UsageError)
        drawn.append(refused.value._render_traceback_())
    assert all(len(lines) == 1 and lines[0].startswith("jupyter_sched: ") for lines in drawn), drawn
