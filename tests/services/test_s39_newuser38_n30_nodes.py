"""newuser38 n30 on ``jupyter-sched nodes cordon|drain``: the server's sentence (``… by boss at 12:00 UTC; work still
on it is stopped at 14:00 UTC``) and each job's fate say their clocks in the caller's zone, as every other CLI clock
(the rule of tests/web/test_s39_newuser38_n30_one_zone.py). Answers from in-process services, the REST route's own
answer (tests/services/test_s25_drain_cli.py's client); the caller's zone is the one the CLI sets from ``TZ``."""

from __future__ import annotations

import re

from jupyter_sched.model.units import shown_in
from jupyter_sched.services import Services
from tests.services.test_s25_drain_cli import NodesClient, run


def test_newuser38_n30_nodes_drain_says_the_servers_clocks_in_the_callers_zone(services: Services) -> None:
    with shown_in("America/Los_Angeles"):
        code, out, _ = run(NodesClient(services), "drain", "vm", "--evict-after", "2h", "--reason", "PSU swap",
                           "--dry-run")
    assert code == 0, out
    # 12:00 and 14:00 UTC (the services' clock) are 04:00 and 06:00 in Los Angeles (PST; PDT in summer: an hour on)
    said = re.fullmatch(r"node vm would be cordoned for maintenance: PSU swap, by boss at (?:\w{3} \d{1,2} )?"
                        r"(04:00 PST|05:00 PDT); work still on it is stopped at (?:\w{3} \d{1,2} )?(06:00 PST|07:00 PDT) "
                        r"\(requeued\): no new work is placed on it\.", out.splitlines()[0])
    assert said is not None and "UTC" not in out, out
