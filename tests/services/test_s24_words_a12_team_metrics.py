"""hubadmin23 A12 (left by s23-admincli): ``GET metrics`` had no per-team series — a Prometheus board could
not say which team holds what, what it borrows or how much of it waits (``queue --summary`` answered it in
the terminal only). Now ``jupyter_sched_team_running_gpus``, ``_team_pending_jobs``,
``_team_guaranteed_gpus`` and ``_team_borrowed_gpus``, labelled by ``team`` alone (never a user), by the
summary's own rule (:func:`jupyter_sched.model.team_load.team_rows`), at most ``TEAM_SERIES`` teams.

Real parts: the services on a SQLite store with four simulated GPUs (tests/services/conftest.py), the
engine's decisions, the scheduler's private Prometheus registry and prometheus_client's parser.
"""

from __future__ import annotations

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from jupyter_sched.extension.events import EventHub
from jupyter_sched.extension.metrics import OTHER_TEAMS, TEAM_SERIES, _bounded, make_registry
from jupyter_sched.model.team_load import team_rows
from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest, SubmitJobRequest

TEAM_FAMILIES = ("jupyter_sched_team_running_gpus", "jupyter_sched_team_pending_jobs",
                 "jupyter_sched_team_guaranteed_gpus", "jupyter_sched_team_borrowed_gpus")


def _scrape(services: Services) -> dict[str, dict[str, float]]:
    text = generate_latest(make_registry(services, EventHub(16))).decode()
    out: dict[str, dict[str, float]] = {name: {} for name in TEAM_FAMILIES}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name in out:
                assert set(sample.labels) == {"team"}, sample  # one label, no user
                out[sample.name][sample.labels["team"]] = sample.value
    return out


def test_s24_words_a12_metrics_say_per_team_what_runs_waits_is_guaranteed_and_borrowed(services: Services) -> None:
    root = services.caller("root", admin=True)
    services.quotas.set(root, SetQuotasRequest.model_validate({"quotas": [
        {"team": "ml", "guaranteed": 1, "borrowing_limit": 2}, {"team": "cv", "guaranteed": 1, "borrowing_limit": 0}]}))
    ann = services.caller("ann", admin=False, groups=("ml",))
    bob = services.caller("bob", admin=False, groups=("cv",))
    services.leases.request(ann, SubmitJobRequest(gpus=3, kernel_id="k-ann", team="ml"))
    services.leases.request(bob, SubmitJobRequest(gpus=1, kernel_id="k-bob", team="cv"))
    services.engine.tick()  # both leases hold their GPUs: ml 1 guaranteed + 2 borrowed, cv its 1
    services.jobs.submit(bob, SubmitJobRequest(gpus=1, team="cv", command=["true"]))  # above cv's limit: waits
    services.engine.tick()

    # before: no jupyter_sched_team_* family at all
    seen = _scrape(services)
    assert seen["jupyter_sched_team_running_gpus"] == {"ml": 3.0, "cv": 1.0}, seen
    assert seen["jupyter_sched_team_pending_jobs"] == {"ml": 0.0, "cv": 1.0}, seen
    assert seen["jupyter_sched_team_guaranteed_gpus"] == {"ml": 1.0, "cv": 1.0}, seen
    assert seen["jupyter_sched_team_borrowed_gpus"] == {"ml": 2.0, "cv": 0.0}, seen
    # the summary's numbers (queue --summary reads GET queue and GET quotas; here the same rows)
    rows = {r["team"]: r for r in team_rows(services.list_jobs(user=None, state="pending,admitted,running"),
                                            {"quotas": [{"team": "ml", "guaranteed": 1, "borrowing_limit": 2},
                                                        {"team": "cv", "guaranteed": 1, "borrowing_limit": 0}]},
                                            services.clock.now())}
    assert {t: r["running"] for t, r in rows.items()} == seen["jupyter_sched_team_running_gpus"]
    assert {t: r["borrowed"] for t, r in rows.items()} == seen["jupyter_sched_team_borrowed_gpus"]


def test_s24_words_a12_team_series_are_bounded_the_rest_summed_as_other_teams() -> None:
    rows = [{"team": f"t{i:03}", "running": float(i % 5), "pending": i % 3, "pending_gpus": float(i % 3),
             "guaranteed": 1.0 if i % 2 else None, "borrowed": 0.5 if i % 2 else 0.0} for i in range(TEAM_SERIES + 50)]
    kept = _bounded(rows)
    assert len(kept) == TEAM_SERIES and kept[-1]["team"] == OTHER_TEAMS, kept[-1]
    assert sum(r["running"] for r in kept) == sum(r["running"] for r in rows)  # nothing lost, only folded
    assert sum(r["pending"] for r in kept) == sum(r["pending"] for r in rows)
    folded = {r["team"] for r in rows} - {r["team"] for r in kept}
    assert len(folded) == 51 and all(r["running"] >= max(
        x["running"] for x in rows if x["team"] in folded) for r in kept[:-1]), "the busiest keep their own series"
    assert _bounded(rows[:3]) == rows[:3]
