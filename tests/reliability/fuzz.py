"""Schemathesis, driven by the shipped ``openapi.yaml``, against a live server.

For every documented operation (except the endless ``GET events`` stream) schemathesis generates
requests that match the schema (positive) and requests that break it (negative), sends them with
the server token and checks each answer: not a 5xx, the documented content type, the documented
response schema, and — our own check — every 4xx carries ``{"error": {"code", "message", "field",
"hint"}}``.

Safety: fuzzed jobs must never run (a fuzzed ``command`` is an arbitrary program), so before the
server starts :func:`hold_leadership` gives the store's leader lease to a holder that never
schedules. The server still answers every request (a non-leading server writes to the store and
leaves the scheduling to the leader), so the whole API surface is exercised.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from jupyter_sched.store import Store

from .harness import EmbeddedServer

LONG_POLL_MS = 200
"""Largest valid ``wait_ms`` sent (``POST leases``, ``GET leases/{id}``): see ``_fuzz_operation``."""
SKIPPED_PATHS = {"/events"}  # a Server-Sent Events stream never ends; test_resource_bounds covers it
ERROR_KEYS = {"code", "message", "field", "hint"}


def hold_leadership(db_url: str, holder: str = "fuzz-holder-never-schedules", ttl_s: float = 86_400.0) -> None:
    """Take the store's leader lease for ``holder`` for ``ttl_s`` seconds, so no server engine schedules."""
    store = Store(db_url)
    try:
        with store.transaction() as tx:
            lease = tx.acquire_leadership(holder, ttl_s)
            assert lease is not None and lease.owner == holder
    finally:
        store.close()


@dataclass
class FuzzOutcome:
    """What the fuzz run sent and what broke.

    Attributes:
        cases: requests sent.
        by_status: answers by status code.
        failures: one line per failed check (operation, request, what broke).
        operations: operations fuzzed.
    """

    cases: int = 0
    by_status: Counter[int] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    operations: list[str] = field(default_factory=list)

    @property
    def server_errors(self) -> int:
        return sum(n for status, n in self.by_status.items() if status >= 500)


def openapi_path() -> Path:
    """The shipped ``jupyter_sched/extension/openapi.yaml``."""
    return Path(str(files("jupyter_sched.extension").joinpath("openapi.yaml")))


def run_fuzz(server: EmbeddedServer, *, examples: int = 12, seed: int = 10) -> FuzzOutcome:
    """Fuzz every operation with ``examples`` positive and ``examples`` negative cases.

    Args:
        server: a running server whose store nobody schedules (see :func:`hold_leadership`).
        examples: hypothesis examples per operation and generation mode.
        seed: hypothesis seed (reproducible runs).
    """
    import schemathesis
    from schemathesis import GenerationMode
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

    schema = schemathesis.openapi.from_path(str(openapi_path()))
    base_url = server.url + "api/sched"
    headers = server.headers()
    out = FuzzOutcome()
    checks = [not_a_server_error, content_type_conformance, response_schema_conformance]

    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path in SKIPPED_PATHS:
            continue
        label = f"{operation.method.upper()} {operation.path}"
        out.operations.append(label)
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            _fuzz_operation(operation, mode, label=label, base_url=base_url, headers=headers, checks=checks,
                            examples=examples, seed=seed, out=out)
    return out


def _fuzz_operation(operation: Any, mode: Any, *, label: str, base_url: str, headers: dict[str, str],
                    checks: list[Any], examples: int, seed: int, out: FuzzOutcome) -> None:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed
    from hypothesis.errors import Unsatisfiable

    @hseed(seed)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy(generation_mode=mode))
    def send(case: Any) -> None:
        query = getattr(case, "query", None)
        if isinstance(query, dict) and isinstance(query.get("wait_ms"), int) and query["wait_ms"] > LONG_POLL_MS:
            # a long poll on a lease nobody decides (the leader lease is held) lasts its whole
            # wait by design; values out of range stay, so their 400 is still checked
            query["wait_ms"] = LONG_POLL_MS
        response = case.call(base_url=base_url, headers=dict(headers), timeout=30)
        out.cases += 1
        out.by_status[response.status_code] += 1
        where = f"{label} [{mode.value}] {response.request.url} body={case.body!r:.200}"
        try:
            case.validate_response(response, checks=checks)
        except Exception as exc:  # a failed check: record it, keep fuzzing
            out.failures.append(f"{where}: {type(exc).__name__}: {str(exc)[:400]}")
        if 400 <= response.status_code < 500:
            try:
                error = response.json().get("error")
            except (ValueError, AttributeError):
                error = None
            if not isinstance(error, dict) or not ERROR_KEYS <= set(error) or not error.get("message"):
                out.failures.append(f"{where}: {response.status_code} without the error shape: {response.text[:200]}")

    try:
        send()
    except Unsatisfiable:  # nothing to break: an operation without parameters or body has no negative cases
        if mode.value != "negative":
            raise
