"""New user 24 (leftover of verify 23, V4): ``%gpu``'s table says work on GPUs gone from the inventory as
``queue`` and ``status`` do.

Since verify 23 V4 ``jupyter-sched queue`` rows and the ``status`` summary mark such work in the one sentence of
:func:`jupyter_sched.wording.jobs.gone_text` — ``GPU-static-n2-0 no longer in the inventory (it runs on unless
its GPUs went with it; an admin can cancel it)`` — while ``%gpu``'s row of that GPU said it in words of its own
(``no longer in the inventory (the work on it runs on unless it went with it; …)``). Now the row's health is
the sentence's words (:data:`jupyter_sched.wording.jobs.GONE_WORDS`), its GPU in the row's uuid column.

Real parts: the application services on a real SQLite store with a static inventory file (node n2 deleted
under running work: the fixture of :mod:`tests.services.test_s24_verify23_v4_gone_marks`), the CLI's
``queue`` and ``status`` and the magics' table over the services' own answers.
"""

from __future__ import annotations

from datetime import datetime, timezone

from jupyter_sched.cli.commands import queue, status
from jupyter_sched.magics.render import gpu_frame
from jupyter_sched.services import Services
from tests.services.as_client import AsClient, said
from tests.services.test_s24_verify23_v4_gone_marks import TAIL, services  # noqa: F401  (the fixture)

NOW = datetime(2026, 12, 5, 6, 10, tzinfo=timezone.utc)


def test_newuser24_gpu_gone_mark_gpu_rows_say_the_words_of_queue_and_status(services: Services) -> None:  # noqa: F811
    owner = AsClient(services, "ve23b")
    table = gpu_frame(owner.inventory(), owner.queue(), now=NOW)  # what `%gpu` shows
    rows = {row["uuid"]: row for row in table.to_dict("records")}
    gone = {uuid: row for uuid, row in rows.items() if row["index"] == ""}
    assert sorted(gone) == ["GPU-static-n2-0", "GPU-static-n2-1"], rows
    listed_queue, listed_status = said(queue, owner, "queue"), said(status, owner, "status")
    for uuid, row in gone.items():
        # failed before: "no longer in the inventory (the work on it runs on unless it went with it; an admin
        # can cancel it)" — words of its own, not the sentence queue and status say
        assert row["health"] == TAIL, row
        assert f"{uuid} {row['health']}" in listed_queue and f"{uuid} {row['health']}" in listed_status
    assert rows["GPU-static-n1-0"]["health"] != TAIL, "a listed GPU is not marked"
