"""red35 R2 (the kind): JSON someone else wrote is read so that no shape of it raises anything but ValueError.

``json.loads`` raises :class:`RecursionError` on arrays nested deeper than the recursion limit; a job's
``exit.json`` of 60,000 ``[`` raised it on the engine's thread every tick (tests/runtime/test_s35_red35_r2_deep_json.py
is the end-to-end half), and a forged ``cursor`` of 5,000 ``[`` was a 500 with a traceback. Every reader of
another party's JSON goes through :func:`jupyter_sched.untrusted_json.loads`; the guard below fails on a new
``json.loads``/``json.load`` anywhere else, so the next reader added is looked at."""

from __future__ import annotations

import ast
import base64
from pathlib import Path

import pytest

import jupyter_sched
from jupyter_sched import untrusted_json
from jupyter_sched.errors import ValidationError
from jupyter_sched.executors.jobdirs import read_untrusted_json
from jupyter_sched.executors.outcome import OUTCOME_FILE, read_outcome
from jupyter_sched.services.accounting import _decode_report_cursor as decode_report_cursor
from jupyter_sched.services.jobs import decode_cursor, decode_queue_cursor
from jupyter_sched.userfiles import content_problem, notebook_kernel

DEEP = "[" * 60_000

TRUSTED = {
    # the service's own writing, or a peer it trusts
    "admission/gate.py::bounded_details": "a copy of the service's own dict (dumps then loads)",
    "store/codec.py::loads": "the store's JSON columns, written by the service from validated input",
    "executors/jobdirs.py::JobDirs.read_record": "the service's own .state record (its folder, not the job's)",
    "hub/front_door.py::GuardedHTTPServer._load_keys": "the front door's own keys file",
    "hub/hubapi.py::HubAPI.request": "JupyterHub's API answers",
    "hub/hubapi.py::hub_answer": "JupyterHub's API answers",
    "executors/kubernetes/executor.py::_status_message": "the Kubernetes API server's answers",
    "executors/kubernetes/executor.py::KubernetesExecutor.adopt": "the Kubernetes API server's answers",
    "executors/kubernetes/executor.py::KubernetesExecutor.live_copy": "the Kubernetes API server's answers",
    "executors/kubernetes/executor.py::KubernetesExecutor.live_unknown": "the Kubernetes API server's answers",
    "executors/kubernetes/executor.py::KubernetesExecutor._create": "the Kubernetes API server's answers",
    "executors/kubernetes/executor.py::KubernetesExecutor._ended_at_stop": "the Kubernetes API server's answers (a Job's status and its pods at a stop, newuser38 N4)",
    "executors/kubernetes/executor.py::KubernetesExecutor._existing_of_same_job": "the Kubernetes API server's answers",
    "executors/kubernetes/reflector.py::Reflector.relist": "the Kubernetes API server's answers",
    "executors/kubernetes/reflector.py::Reflector._watch_once": "the Kubernetes API server's answers",
    "extension/body_bounds.py::decoded_body": "a request body: RecursionError is caught there (field body)",
    "extension/web.py::SchedHandler._audit_refusal": "a request body already refused: RecursionError suppressed",
    "extras.py::_source": "pip's direct_url.json of this installation",
    # the reader's own account reads what that account wrote: it can only harm itself
    "client/_wire.py::error_from_response": "the client reading its scheduler's answers",
    "client/_wire.py::event_from_sse": "the client reading its scheduler's answers",
    "client/discovery.py::_server_files": "the client's own runtime files",
    "client/hub_token.py::_read_cache": "the client's own token cache",
    "client/hub_token.py::_mint": "the hub's answers to the client",
    "client/sync.py::_others_server": "the client reading a server's answers",
    "client/sync.py::_ours": "the client reading a server's answers",
    "client/sync.py::SchedClient._decode": "the client reading its scheduler's answers",
    "executors/run_notebook.py::main": "the job's own runner reading its own arguments",
    "executors/wrapper.py::_heard": "the job's own wrapper (its account) reading its stop pipe",
    "executors/wrapper.py::_launch": "the job's own wrapper reading its launch line from the service",
    "extension/kernels.py::kernel_alive_elsewhere": "the user's own server reading its own runtime folder",
}


def _json_reads(node: ast.AST, where: tuple[str, ...], found: list[str]) -> None:
    """Add the ``Class.function`` of every ``json.loads``/``json.load`` call under ``node`` to ``found``."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        where = (*where, node.name)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("loads", "load") \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "json":
        found.append(".".join(where) or "<module>")
    for child in ast.iter_child_nodes(node):
        _json_reads(child, where, found)


def _raw_json_reads() -> set[str]:
    """``path::Class.function`` of every ``json.loads``/``json.load`` call in the package."""
    root = Path(jupyter_sched.__file__).parent
    found: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if path.name == "untrusted_json.py" or "json.load" not in text:  # parse only the files that may call it
            continue
        calls: list[str] = []
        _json_reads(ast.parse(text), (), calls)
        found.update(f"{path.relative_to(root).as_posix()}::{call}" for call in calls)
    return found


def test_red35_r2_every_raw_json_read_is_of_the_services_own_or_a_trusted_peers_writing() -> None:
    unlisted = _raw_json_reads() - TRUSTED.keys()
    assert not unlisted, (f"json.loads/json.load of what? {sorted(unlisted)}: read another party's JSON with "
                          "jupyter_sched.untrusted_json.loads, or list the caller in TRUSTED with why")


def test_red35_r2_untrusted_json_raises_only_value_errors() -> None:
    with pytest.raises(untrusted_json.TooDeep):
        untrusted_json.loads(DEEP)
    for bad in ("{", b"\xff\xfe", "NaN-ish", ""):
        with pytest.raises(ValueError):
            untrusted_json.loads(bad)
    assert untrusted_json.loads('{"a": [1]}') == {"a": [1]}


@pytest.mark.parametrize("name", ["exit.json", "wrapper.json"])
def test_red35_r2_a_job_folders_deeply_nested_file_is_malformed(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text(DEEP)
    assert read_untrusted_json(tmp_path / name) is None
    (tmp_path / OUTCOME_FILE).write_text("{\"a\": " + DEEP)
    assert read_outcome(tmp_path) is None


def test_red35_r2_a_deeply_nested_notebook_or_cursor_is_refused_by_name() -> None:
    assert content_problem("notebook", DEEP.encode()) == "it is not JSON"
    assert notebook_kernel(DEEP) is None
    cursor = base64.urlsafe_b64encode(("[" * 5_000).encode()).decode().rstrip("=")
    for decode in (decode_cursor, decode_queue_cursor, lambda c: decode_report_cursor(c, by_job=True)):
        with pytest.raises(ValidationError) as refused:
            decode(cursor)
        assert refused.value.field == "cursor"
