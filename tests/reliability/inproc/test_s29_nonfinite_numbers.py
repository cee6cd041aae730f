"""s29 (s28-budget's "Left"): a NaN or an infinity in a stored row reached answers as ``NaN`` / ``Infinity`` —
not JSON: a browser's ``JSON.parse`` throws on the whole answer, so one bad row froze a panel. SQLite keeps a
float 9e999 as an infinity and a text ``'NaN'`` in a REAL column as text (both are what a hand-edited or
half-restored store holds; PostgreSQL keeps ``'NaN'`` itself).

Now the sources refuse them: a quota line, a telemetry rollup and a job's progress row with one do not read —
each is quarantined with its column named (``jupyter-sched doctor`` lists it) — and the writer itself never
emits NaN nor Infinity (a stray one is written ``null`` and logged with its place).
Through the real server (pytest-jupyter), SQLite store, simulated GPUs; every answer parsed strictly.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
import sqlalchemy as sa

from jupyter_sched.services.models.base import wire_json
from jupyter_sched.store.codec import ts
from tests.web.conftest import API, BOSS_TOKEN, IVAN_TOKEN, wait_for

INF = 9e999  # SQLite stores it as an infinity (a NaN float is stored as NULL; as text it reads NaN)


def _strict(data: bytes) -> Any:
    def refuse(word: str) -> Any:
        raise ValueError(f"not JSON: {word}")
    return json.loads(data, parse_constant=refuse)


async def _get(jp_fetch: Any, path: str, token: str, params: dict[str, str] | None = None) -> tuple[int, bytes]:
    response = await jp_fetch(*[p for p in (API + "/" + path).split("/") if p], method="GET", params=params,
                              headers={"Authorization": f"token {token}"}, raise_error=False)
    return response.code, response.body


async def test_s29_nan_and_infinity_in_stored_rows_never_reach_an_answer(sched_app: Any, api: Any,
                                                                         jp_fetch: Any) -> None:
    services = sched_app.services
    status, body = await api("PUT", "quotas", {"quotas": [{"team": "default", "guaranteed": 4}]}, token=BOSS_TOKEN)
    assert status == 200, body
    status, job = await api("POST", "jobs", {"gpus": 1, "command": ["sleep", "60"], "name": "nan"})
    assert status in (200, 201), job

    async def running() -> bool:
        return bool((await api("GET", f"jobs/{job['id']}"))[1].get("state") == "running")
    await wait_for(running)
    status, inventory = await api("GET", "inventory", token=BOSS_TOKEN)
    gpu = inventory["nodes"][0]["gpus"][0]["uuid"]
    now = datetime.now(timezone.utc).replace(second=0, microsecond=0)
    with services.store.engine.begin() as conn:
        conn.execute(sa.text("UPDATE quotas SET guaranteed = :v WHERE team = 'default'"), {"v": INF})
        conn.execute(sa.text("UPDATE change_counters SET value = value + 1 WHERE name = 'quotas'"))
        for minutes, column, value in ((3, "power_avg_w", INF), (2, "memory_used_max_mib", "NaN"),
                                       (1, "temperature_max_c", -INF)):
            conn.execute(sa.text(f"INSERT INTO gpu_rollups (node, gpu_uuid, minute, samples, utilization_avg, "
                                 f"{column}) VALUES ('', :gpu, :minute, 60, 50.0, :value)"),
                         {"gpu": gpu, "minute": ts(now - timedelta(minutes=minutes)), "value": value})
        started = ts(now - timedelta(minutes=5))
        conn.execute(sa.text("INSERT INTO job_progress (job_id, run_started_at, reported_at, done, total, ran_s, "
                             "fit_n, fit_t, fit_f, fit_tt, fit_tf) VALUES (:job, :s, :s, 'NaN', :inf, 10, 1, 1, "
                             "0.5, 1, 0.5)"), {"job": job["id"], "s": started, "inf": INF})
    since = {"since": ts(now - timedelta(hours=1))}
    routes = [("me", None), ("quotas", None), ("usage", None), ("usage/report", None), ("usage/waste", since),
              ("telemetry", since), ("telemetry/history", {"gpu": gpu, **since}), ("jobs", None),
              (f"jobs/{job['id']}", None), (f"jobs/{job['id']}/progress", None), ("queue", None),
              ("inventory", None), ("eta-accuracy", None), ("idle", None)]
    wrong = []
    for token in (IVAN_TOKEN, BOSS_TOKEN):
        for route, params in routes:
            status, raw = await _get(jp_fetch, route, token, params)
            if route == "usage/waste" and token == IVAN_TOKEN and status == 403:
                continue  # an admin's report
            try:
                _strict(raw)
            except ValueError as exc:
                wrong.append(f"{route} as {token[:4]}: {exc}: {raw[:200]!r}")
            if status >= 500:
                wrong.append(f"{route} as {token[:4]}: {status} {raw[:200]!r}")
    assert not wrong, "\n".join(wrong)
    # each bad row is named (its column) in the quarantine the doctor lists
    errors = {entry.table: entry.error for entry in services.store.quarantined()}
    assert "guaranteed" in errors.get("quotas", ""), errors
    rollups = [entry.error for entry in services.store.quarantined(table="gpu_rollups")]
    assert {c for c in ("power_avg_w", "memory_used_max_mib", "temperature_max_c")
            if any(c in e for e in rollups)} == {"power_avg_w", "memory_used_max_mib", "temperature_max_c"}, rollups
    assert "done 'NaN' is not a finite number" in errors.get("job_progress", ""), errors
    # the quota line holds its team's GPU work (fail closed) and GET quotas warns of it
    status, quotas = await api("GET", "quotas", token=BOSS_TOKEN)
    assert any("guaranteed" in w for w in quotas.get("warnings", [])), quotas


def test_s29_the_writer_never_emits_nan_nor_infinity(caplog: pytest.LogCaptureFixture) -> None:
    nan, inf = float("nan"), float("inf")
    with caplog.at_level(logging.WARNING):
        written = wire_json({"rows": [{"power_w": nan}, {"power_w": 3.5}], "eta": (inf, -inf), "n": 1})
    assert _strict(written) == {"rows": [{"power_w": None}, {"power_w": 3.5}], "eta": [None, None], "n": 1}
    assert "rows[0].power_w, eta[0], eta[1]" in caplog.text  # where: the source to fix
    assert wire_json({"a": 1.5}) == b'{"a": 1.5}'
