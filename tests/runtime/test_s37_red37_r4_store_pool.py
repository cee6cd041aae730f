"""A service's PostgreSQL pool holds a connection per thread that may use one at once (red37 R4).

SQLAlchemy's default pool keeps 5 connections and opens (then closes) up to 10 more per use, while the service runs 8
request + 4 bulk + 2 dry-run threads beside the engine: any busy minute opened new PostgreSQL sessions (SCRAM, the
store guard, an identity read each; 151 in 20 s of one user's request loop, ~22 ms a connect). Real parts: the
session's PostgreSQL server, a Store made as the service makes it, real threads."""

from __future__ import annotations

import threading
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from jupyter_sched.extension.app import SchedApp
from jupyter_sched.store import Store
from jupyter_sched.store.store import BACKGROUND_CONNECTIONS, service_pool_size


def test_red37_r4_the_service_sizes_its_pool_from_its_own_threads() -> None:
    app = SchedApp(request_threads=8, dryrun_concurrency=2)
    assert app.service_settings()["db_pool_size"] == 8 + 4 + 2 + BACKGROUND_CONNECTIONS == service_pool_size(8, 4, 2)


def test_red37_r4_concurrent_transactions_reuse_pooled_connections(pg_url: str) -> None:
    threads = 14  # the service's request, bulk and dry-run threads at once
    store = Store(pg_url, pool_size=service_pool_size(8, 4, 2))
    connects: list[Any] = []
    event.listen(store.engine, "connect", lambda *_: connects.append(1))
    try:
        for _round in range(3):
            together = threading.Barrier(threads)

            def one_transaction(barrier: threading.Barrier = together) -> None:
                with store.engine.connect() as conn:
                    barrier.wait(timeout=60)  # all hold a connection at once
                    conn.execute(sa.text("select 1"))

            workers = [threading.Thread(target=one_transaction) for _ in range(threads)]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join(timeout=120)
        # the first round opened what it needed; the next two found them pooled (the default pool: 9 more a round)
        assert len(connects) <= threads, len(connects)
        assert store.engine.pool.size() == service_pool_size(8, 4, 2)
    finally:
        store.close()
