"""A job definition's schedule in words, as the CLI and the magics both say it.

Pure: no I/O, no clock.
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..model.periods import said_to_reader
from ..model.units import clock_text, format_duration, gpus_phrase, shown_in

__all__ = ["CATCH_UP_WORD", "NO_JOB_WORDS", "NO_PREEMPT_WORDS", "PARAMETERS_SHOWN", "TRIGGER_WORDS", "catch_up_text", "changes_text", "firing_text", "in_its_zone", "last_run_parts",
           "last_run_text", "parameters_text", "run_made_text", "run_parameters_text", "runs_parts", "runs_text",
           "no_model_text", "parameters_brief", "retired_model_warning", "schedule_text", "skipped_text", "trigger_text", "zone_header"]

TRIGGER_WORDS: Mapping[str, str] = {"schedule": "scheduled", "manual": "run now"}
"""A run's ``trigger`` (the wire's ``schedule`` / ``manual``) as every surface says it — the CLI's run
lines, the magics' table, the panel (the server sends it as ``trigger_text``) and a run-now job's name
(``daily, run now``). New user 23, N7: the panel said ``scheduled`` / ``run now``, the CLI ``schedule`` /
``manual``, the magics ``manual``."""
NO_PREEMPT_WORDS = "free GPUs only, never stops another's job"
"""What a definition whose runs ask ``no_preempt`` says of them (``definitions show``: ``no preempt: free GPUs only,
never stops another's job``; an edit's ``changed:`` line), the words of ``submit --no-preempt``'s help."""
CATCH_UP_WORD = "catch-up"
"""The one run after an outage (``catch_up``), said instead of its trigger (hub admin 22)."""


def firing_text(value: Any, zone: Any, now: datetime | None) -> str:
    """A definition's firing (a wire time: its next run, a run's ``scheduled_for``) in its time zone,
    as every clock is written (:func:`~..model.units.clock_text`): ``12:00 CET`` on ``now``'s day
    there, else ``Dec 7 12:00 CET`` — the CLI and the magics alike (new user 20, N27: the magic said
    ``2026-12-07 12:00 CET``, the CLI ``Dec 5 03:00 UTC``); ``-`` when none, a text that is no time as
    given. ``now`` None: always with the date (a kept record's words)."""
    from .reasons import wire_time

    when = wire_time(value)
    if when is None:
        return str(value) if value else "-"
    return clock_text(when, now, zone=zone if isinstance(zone, str) else None)


@contextlib.contextmanager
def in_its_zone(definition: Mapping[str, Any]) -> Iterator[None]:
    """Within it, every clock said without a zone of its own — a run's end (``ended 11:53 CET``), a waiting run's
    ETA, a report's time — is said in ``definition``'s time zone, as its firings are (:func:`firing_text`): one
    zone on each line of a definition's output, the CLI's and the magics' (newuser38 n20: ``11:52 CET … ended 10:53
    UTC`` on one line read as a run that ended an hour before it ran). A definition without a zone: UTC."""
    with shown_in(str(definition.get("timezone") or "UTC")):
        yield


def zone_header(definition: Mapping[str, Any]) -> str:
    """``times in Europe/Berlin, the definition's zone``: the zone a definition's runs are said in
    (:func:`in_its_zone`), named once after the runs' header."""
    return f"times in {definition.get('timezone') or 'UTC'}, the definition's zone"


def trigger_text(run: Mapping[str, Any]) -> str:
    """Why a run exists, in :data:`TRIGGER_WORDS` (``scheduled``, ``run now``), or ``catch-up`` for the
    one run after an outage; a trigger this release does not know is said as sent."""
    if run.get("catch_up"):
        return CATCH_UP_WORD
    trigger = str(run.get("trigger") or "")
    return TRIGGER_WORDS.get(trigger, trigger)


NO_JOB_WORDS = "its job is no longer stored"
"""A run whose job row is gone (retention), as the CLI's run lines and the magics say it."""


def last_run_parts(run: Mapping[str, Any] | None, now: datetime | None) -> tuple[str, str]:
    """``("failed", "exit code 1 · ended 07:38 UTC (ran 2s) — FileNotFoundError: … (a.py, line 2) — a relative path
    is read from …")``: a definition's last run (GET definitions' ``last_run``) as its state word and the rest of its
    job's line (:func:`~.jobs.job_outcome`, without the log lines its message quotes: ``definitions runs`` and
    ``logs`` show those) — the magics' ``last_state`` / ``last_reason`` columns and the CLI list's ``last:`` alike
    (newuser37 N1: ``definitions list`` never said a nightly run had failed); ``("", "")`` for no run, ``("",
    NO_JOB_WORDS)`` for a run whose job is gone."""
    from .jobs import job_outcome, state_word

    if not isinstance(run, Mapping):
        return "", ""
    job = run.get("job")
    if not isinstance(job, Mapping):
        return "", NO_JOB_WORDS
    word = state_word(job)
    said = job_outcome(job, now, log_shown=True)
    if said == word:
        return word, ""
    if said.startswith(word) and said[len(word):len(word) + 1] in (",", " "):
        return word, said[len(word):].lstrip(",·— ").strip()
    return word, said  # a line that says its state its own way ("released by ann at …", "stopping (…)")


def last_run_text(run: Mapping[str, Any] | None, now: datetime | None) -> str:
    """``last: failed, exit code 1 · ended 07:38 UTC (ran 2s) — FileNotFoundError: …``: the end of a definition's
    line in ``jupyter-sched definitions list`` (the panel's row says ``last: failed``); "" for no run. The words of
    :func:`last_run_parts`."""
    if not isinstance(run, Mapping):
        return ""
    from .jobs import job_outcome

    job = run.get("job")
    return f"last: {job_outcome(job, now, log_shown=True) if isinstance(job, Mapping) else NO_JOB_WORDS}"


def catch_up_text(run: Mapping[str, Any], zone: Any, now: datetime | None) -> str:
    """What a catch-up run stands for, from its wire fields (``catch_up``, ``late_s``, ``missed``,
    ``missed_from``, ``missed_to``): ``catch-up, 1m30s late: 2 earlier firings (06:07 to 06:08 UTC)
    got no run while no server was running`` — "" for a run that is no catch-up. The CLI's run lines,
    the magics' table and the audit record say it alike (hub admin 22: two runs after a 90 s outage
    both said only "schedule"). ``zone``: the definition's time zone (times as its schedule reads)."""
    if not run.get("catch_up"):
        return ""
    late = run.get("late_s")
    said = "catch-up" + (f", {format_duration(float(late))} late" if isinstance(late, (int, float)) and late >= 1 else "")
    missed = run.get("missed")
    if not isinstance(missed, int) or isinstance(missed, bool) or missed <= 0:
        return f"{said}: no server was running at its time"
    count = f"{missed} or more earlier firings" if missed >= _MISSED_SHOWN_CAP else \
        f"{missed} earlier firing{'' if missed == 1 else 's'}"
    first, last = firing_text(run.get("missed_from"), zone, now), firing_text(run.get("missed_to"), zone, now)
    span = first if first == last or last == "-" else f"{first} to {last}"
    return f"{said}: {count} ({span}) got no run while no server was running"


_MISSED_SHOWN_CAP = 1000

_SKIP_FIX: Mapping[str, str] = {
    "waiting": "by default a firing is skipped while the previous run still waits, so runs do not pile up behind "
               "it (--overlap allow queues a run for each firing)",
    "unfinished": "its overlap is skip_unfinished: a firing is skipped until the previous run ends (--overlap "
                  "skip_waiting lets one queue while the previous run runs)",
    "budget": "a run waiting on a spent GPU-hour budget holds the next firings whatever the overlap policy",
}


def skipped_text(definition: Mapping[str, Any], now: datetime | None) -> str:
    """A definition's skipped firings since its last scheduled run (wire ``skipped``), with why and the
    way to change it: ``skipped 2 firings (10:01 to 10:02 UTC): its run j-… still waits: …; by default a
    firing is skipped while …`` — "" when none. The CLI's ``definitions show`` / ``runs`` and the magics
    say it alike (new user 34, n1: runs piled up behind a long queue and nothing said so)."""
    skipped = definition.get("skipped")
    if not isinstance(skipped, Mapping):
        return ""
    count = skipped.get("count")
    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        return ""
    zone = definition.get("timezone")
    first, last = firing_text(skipped.get("first"), zone, now), firing_text(skipped.get("last"), zone, now)
    span = first if count == 1 or first == last else f"{first} to {last}"
    said = f"skipped {count} firing{'' if count == 1 else 's'} ({span}) since its last scheduled run"
    why = str(skipped.get("why") or "").strip().rstrip(".")  # a reason's own full stop before "; " (newuser35 n7)
    fix = _SKIP_FIX.get(str(skipped.get("cause") or ""), "")
    return said + (f": {why}" if why else "") + (f"; {fix}" if fix else "")
"""The most missed firings a run counts (:data:`~jupyter_sched.definitions.schedule.MAX_FIRINGS_PER_CALL`)."""


def no_model_text(models: Sequence[str]) -> str:
    """What a definition (or job) asking only for GPU models no GPU has now says, in ``definitions
    show/list``, GET definitions' ``warnings`` and the admin's (hubadmin26 B8: a retired model):
    ``L40S: no such GPU model here now — edit --model``."""
    return f"{', '.join(models)}: no such GPU model here now — edit --model"


def retired_model_warning(definitions: Sequence[tuple[str, str, str, Sequence[str]]],
                          jobs: Sequence[tuple[str, str, Sequence[str]]]) -> list[str]:
    """GET/PUT quotas' admin warnings for the definitions ``(id, owner, name, models)`` with a
    schedule and the pending jobs ``(id, owner, models)`` that ask only for GPU models no GPU has now
    — every firing would be a refused run, and those jobs never start (hubadmin26 B8); [] when none.
    At most 20 of each are named, then how many more."""
    said = []
    if definitions:
        named = "; ".join(f"{d_id} ({owner}, {name}: {', '.join(models)})"
                          for d_id, owner, name, models in definitions[:20])
        more = f"; and {len(definitions) - 20} more" if len(definitions) > 20 else ""
        said.append("definitions that ask only for a GPU model no GPU has now (every firing is a refused run): "
                    f"{named}{more} — their owners change it with jupyter-sched definitions edit ID --model")
    if jobs:
        named = "; ".join(f"{j_id} ({owner}: {', '.join(models)})" for j_id, owner, models in jobs[:20])
        more = f"; and {len(jobs) - 20} more" if len(jobs) > 20 else ""
        said.append(f"pending jobs that ask only for a GPU model no GPU has now (they never start): {named}{more} "
                    "— cancel them, or resubmit with another --model")
    return said


def schedule_text(definition: Mapping[str, Any], *, run: str) -> str:
    """``At 12:00 on Monday through Friday (Europe/Berlin)``; for a definition with no schedule,
    ``no schedule: runs only with RUN`` (``run``: how this surface starts a run of it, e.g.
    ``jupyter-sched definitions run d2``) — no time zone and no next firing for something that
    never fires (new user 13, N20: ``no schedule (run now only) (UTC)  next -``)."""
    when = definition.get("schedule_description") or definition.get("schedule")
    if not when:
        return f"no schedule: runs only with {run}"
    return f"{when} ({definition.get('timezone') or 'UTC'})"


def runs_parts(definition: Mapping[str, Any]) -> dict[str, str]:
    """What each firing runs, part by part in the order :func:`runs_text` says them: ``{"runs":
    "train.py 3", "gpus": "1 GPU", "team": "ml", "time limit": "5m", "in": "/tmp/nu20"}`` — from the
    definition's ``notebook`` / ``script`` + ``args``, ``team`` and its ``job`` request (only what it
    sets; a part it leaves to the defaults is left out, but for its GPUs: a run given none asks for 1 GPU, and is
    said so unless a profile sets them)."""
    job = definition.get("job") if isinstance(definition.get("job"), Mapping) else {}
    assert isinstance(job, Mapping)
    what = str(definition.get("notebook") or definition.get("script") or "")
    args = [str(a) for a in definition.get("args") or ()]
    parts: dict[str, str] = {}
    if what:
        parts["runs"] = " ".join(shlex.quote(w) for w in (what, *args))
    gpus = job.get("gpus")
    resources = job.get("resources") if isinstance(job.get("resources"), Mapping) else {}
    assert isinstance(resources, Mapping)
    if gpus is None and "gpus" in resources:
        gpus = resources.get("gpus")
    elif gpus is None and not job.get("profile"):
        # left out: each run asks for the job's default, 1 GPU (a profile's own count is the server's to say):
        # said as a definition given --gpus 1 says it (newuser37 n1: `definitions show` left it out)
        gpus = 1
    if isinstance(gpus, (int, float)) and not isinstance(gpus, bool):
        milli = job.get("gpu_milli")
        share = float(milli) / 1000 if gpus == 1 and isinstance(milli, (int, float)) and 0 < milli < 1000 else None
        parts["gpus"] = gpus_phrase(share if share is not None else float(gpus))
    elif isinstance(gpus, str) and gpus:
        parts["gpus"] = f"{gpus} GPU{'' if gpus == '1' else 's'}"
    model = job.get("model") or job.get("gpu_models")
    if model:
        parts["model"] = "/".join(model) if isinstance(model, list) else str(model)
    memory = job.get("mem_per_gpu") or (f"{job['min_memory_mib']} MiB" if job.get("min_memory_mib") else None)
    if memory:
        parts["memory per GPU"] = str(memory)
    # what else a run asks for, as submit's options say it (newuser42 n4: create/edit take them; show said none)
    for key in ("cpu", "memory"):
        if job.get(key) is not None and job.get(key) != "":
            parts[key] = str(job[key])
    if job.get("nvlink") is True:
        parts["nvlink"] = "NVLink GPUs"
    env = job.get("env")
    if isinstance(env, Mapping) and env:  # the names: a value may be a secret, and the owner knows it
        parts["env"] = ", ".join(str(name) for name in env)
    for key in ("priority", "profile"):
        if job.get(key):
            parts[key] = str(job[key])
    if job.get("no_preempt") is True:  # each run asks as `submit --no-preempt` (session 38)
        parts["no preempt"] = NO_PREEMPT_WORDS
    if definition.get("team"):
        parts["team"] = str(definition["team"])
    limit = job.get("time_limit") if job.get("time_limit") is not None else job.get("time_limit_s")
    if isinstance(limit, (int, float)) and not isinstance(limit, bool):
        parts["time limit"] = format_duration(float(limit)) if limit else "none"
    elif limit:
        parts["time limit"] = str(limit)
    elif "gpus" in parts and parts["gpus"] != gpus_phrase(0.0):
        # a GPU run that gives none runs unlimited, which only starts when nothing is reserved: said, not
        # left out (newuser34 N5: a definition made in the panel's form had none and nothing said so)
        parts["time limit"] = "none"
    if job.get("working_dir"):
        parts["in"] = str(job["working_dir"])
    return parts


def runs_text(definition: Mapping[str, Any]) -> str:
    """``runs train.py 3 · 1 GPU · team ml · time limit 5m · in /tmp/nu20``: what a firing runs, on what
    and for whom (new user 20, N9: ``definitions show`` said only the schedule; ``--json`` alone said
    the GPUs, team and time limit)."""
    parts = runs_parts(definition)
    said = ["no time limit" if key == "time limit" and value == "none" else
            f"{key}: {value}" if key == "no preempt" else
            f"{key} {value}" if key in ("runs", "team", "time limit", "in", "priority", "profile", "model",
                                          "memory per GPU", "cpu", "memory", "env") else value
            for key, value in parts.items()]
    return " · ".join(said)


def _value(value: Any) -> str:
    """A parameter's value as typed after ``-p NAME=``: a string as it is, anything else as JSON."""
    import json

    return value if isinstance(value, str) else json.dumps(value)


def _pairs(parameters: Mapping[str, Any]) -> str:
    return " ".join(shlex.quote(f"{name}={_value(value)}") for name, value in parameters.items())


def parameters_text(definition: Mapping[str, Any]) -> str:
    """``parameters steps=4 (passed as --steps 4 after its arguments)`` for a script (each run gets ``--NAME
    VALUE`` after the definition's ``args``), ``parameters epochs=1`` for a notebook (set after its 'parameters'
    cell, papermill's way); "" when it has none (newuser37 N4: no CLI line said them, and a script's ``runs …``
    line showed arguments that were not all it ran with)."""
    params = definition.get("parameters")
    if not isinstance(params, Mapping) or not params:
        return ""
    said = f"parameters {_pairs(params)}"
    if definition.get("script") and not definition.get("notebook"):
        # the words definitions.parameters.script_arguments gives the script (wording/ imports no core module)
        words = [w for name, value in params.items() for w in (f"--{name}", _value(value))]
        after = " after its arguments" if definition.get("args") else ""
        said += f" (passed as {' '.join(shlex.quote(w) for w in words)}{after})"
    return said


PARAMETERS_SHOWN = 60
"""Most characters of ``NAME=VALUE`` pairs a definitions list line shows (:func:`parameters_brief`)."""
_VALUE_SHOWN = 24


def parameters_brief(definition: Mapping[str, Any], *, width: int = PARAMETERS_SHOWN) -> str:
    """``parameters region=eu epochs=3``: a definition's parameters on its ``definitions list`` line and in the
    magics' list (session 38: the list said none, ``show`` alone did) — as ``show`` writes them (:func:`parameters_text`,
    without a script's ``--NAME`` words), compact: a value longer than 24 characters is cut with ``…``, and pairs past
    ``width`` characters are counted, ``parameters a=1 b=2 … and 3 more``; "" when it has none."""
    params = definition.get("parameters")
    if not isinstance(params, Mapping) or not params:
        return ""
    pairs = []
    for name, value in params.items():
        text = _value(value)
        cut = len(text) > _VALUE_SHOWN  # the mark outside the quotes: what is quoted is what was typed
        pairs.append(shlex.quote(f"{str(name)[:_VALUE_SHOWN]}={text[:_VALUE_SHOWN - 1] if cut else text}")
                     + ("…" if cut else ""))
    shown: list[str] = []
    for pair in pairs:
        if shown and len(" ".join([*shown, pair])) > width:
            break
        shown.append(pair)
    left = len(pairs) - len(shown)
    return f"parameters {' '.join(shown)}" + (f" … and {left} more" if left else "")


def run_parameters_text(run: Mapping[str, Any], definition: Mapping[str, Any]) -> str:
    """``parameters region=apac``: a run's parameters that differ from its definition's now (a ``run now -p`` run's,
    or the definition's before an edit); "" when it ran with the definition's own (newuser37 N4)."""
    params = run.get("parameters")
    if not isinstance(params, Mapping):
        return ""
    own = definition.get("parameters") if isinstance(definition.get("parameters"), Mapping) else {}
    assert isinstance(own, Mapping)
    differ = {name: value for name, value in params.items() if name not in own or own[name] != value}
    gone = [name for name in own if name not in params]
    said = _pairs(differ)
    if gone:
        said += (" " if said else "") + "without " + ", ".join(gone)
    return f"parameters {said}" if said else ""


def changes_text(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    """What an edit changed, ``team vision → ml; time limit 5m → 10m`` (new user 20, N9: ``edit --team
    ml`` echoed the schedule only); "" when nothing it shows changed."""
    def view(d: Mapping[str, Any]) -> dict[str, str]:
        shown = {"name": str(d.get("name") or ""), "schedule": schedule_text(d, run="a manual run"),
                 "missed": str(d.get("missed") or ""), "overlap": str(d.get("overlap") or "")}
        return {**shown, **runs_parts(d)}

    old, new = view(before), view(after)
    said = [f"{key} {old.get(key) or '(default)'} → {new.get(key) or '(default)'}"
            for key in dict.fromkeys([*old, *new]) if old.get(key) != new.get(key)]
    params = (before.get("parameters"), after.get("parameters"))
    if isinstance(params[0], Mapping) and isinstance(params[1], Mapping):
        said += _parameter_changes(params[0], params[1])
    return "; ".join(said)


def _parameter_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Each parameter an edit set, changed or removed, written as ``show`` writes them (newuser38 N1: the change
    line quoted ``region='eu'`` while ``show`` wrote ``region=eu``, and a dropped one read as a change):
    ``parameter region eu → us``, ``parameter steps=4 added``, ``parameter days removed (was 3)``."""
    said = []
    for name in dict.fromkeys([*old, *new]):
        if name not in new:
            said.append(f"parameter {name} removed (was {shlex.quote(_value(old[name]))})")
        elif name not in old:
            said.append(f"parameter {_pairs({name: new[name]})} added")
        elif old[name] != new[name]:
            said.append(f"parameter {name} {shlex.quote(_value(old[name]))} → {shlex.quote(_value(new[name]))}")
    return said


def run_made_text(run: Mapping[str, Any], definition: Mapping[str, Any] | None = None) -> str:
    """What a "run now" made, from its job's real state (``POST definitions/{id}/run``'s answer):
    ``queued run j-… (pending: waiting for 1 GPU …)`` while it waits, ``started run j-…`` once it runs,
    ``run j-… failed`` after (newuser34 N5 nit: a run held by a spent budget was said "started"). The server's
    reason's clocks in ``definition``'s zone (:func:`in_its_zone`, as the rest of its output; newuser38 n30), else
    the reader's."""
    job_id = str(run.get("job_id") or "")
    job = run.get("job") if isinstance(run.get("job"), Mapping) else None
    state = str(job.get("state") or "") if job else ""
    if state in ("pending", "admitted"):
        reason = job.get("reason") if job else None
        why = str(reason.get("message") or "") if isinstance(reason, Mapping) else ""
        if definition is not None:
            with in_its_zone(definition):
                why = said_to_reader(why)
        else:
            why = said_to_reader(why)
        return f"queued run {job_id}" + (f" (pending: {why})" if why else " (pending)")
    if state == "running":
        return f"started run {job_id}"
    return f"run {job_id} {state}" if state else f"made run {job_id}"

