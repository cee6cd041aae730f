"""s30 (closing note 29, item 4): paths where a stored name reached a terminal or a notebook's table unescaped.

red29 R2 escaped invisible and bidi characters in the CLI's tables; the one-line wording (``status JOB``, ``wait``,
``logs -f``'s outcome, ``submit``'s duplicate-name note, a planned preemption) went through ``printable_line``,
which shows controls and bidi overrides but keeps U+200B and the like (a log's emoji joiner), so a job named
``train\\u200b`` read as ``train``; ``jupyter-sched doctor`` printed a quarantined row's user and error as stored (the
row most likely to hold a hostile value: an ESC sequence commanded the admin's terminal, a newline forged a line);
the magics' DataFrames (``%schedule queue``, ``%gpu status``, ``define list``) showed names as stored.

Real parts: the wording every CLI line and the magics use, doctor's printers over the store's own ``Quarantined``
and ``RunawayUsage`` records, the magics' frame builders.
"""

from __future__ import annotations

import io
from datetime import datetime, timezone

import pytest

from jupyter_sched.accounting.runaway import RunawayUsage
from jupyter_sched.accounting.usage import UsageInterval
from jupyter_sched.cli.doctor import _print_entries, _runaways_check
from jupyter_sched.store.quarantine import Quarantined
from jupyter_sched.textsafe import escaped_line, printable_name
from jupyter_sched.wording import job_line
from jupyter_sched.wording.jobs import preemptor

NOW = datetime(2026, 12, 6, 9, 0, tzinfo=timezone.utc)
HOSTILE = "ann\x1b]52;c;cm0gLXJmIH4=\x07\u200b\nroot ok"


def test_red30_job_lines_show_a_names_invisible_characters() -> None:
    """Failed before: ``job j-1 (train)`` for a job named ``train\\u200b`` (and its preemptor ``mal\\u2060``)."""
    job = {"id": "j-1", "name": "train\u200b", "kind": "training", "state": "preempted", "resources": {"gpus": 1},
           "preempted_by": "j-2", "preempted_by_name": "mal\u2060", "reason": None}
    line = job_line(job, NOW)
    assert line.startswith("job j-1 (train<U+200B>): "), line
    assert preemptor(job) == "mal<U+2060> (j-2)"
    assert printable_name("\u202eevil\u200b\x1b[2J") == "<U+202E>evil<U+200B>"
    assert "\u200b" not in line and "\u2060" not in line


def test_red30_doctor_prints_a_quarantined_rows_names_escaped_on_one_line() -> None:
    """Failed before: the user's OSC 52 (clipboard write) and its newline reached the terminal as stored."""
    out = io.StringIO()
    entry = Quarantined(table="jobs", key="j-\x1b[31m1", error=f"jobs row j-1: user {HOSTILE!s} is not a name",
                        attributes={"user": HOSTILE, "team": "ml\u202e"}, id=7)
    _print_entries([entry], out, False, {"jobs": 1})
    lines = out.getvalue().splitlines()
    assert len(lines) == 3, lines  # the count, the row, the repair hint: no forged line
    assert lines[1].startswith("  [7] jobs row j-\\x1b[31m1: jobs row j-1: user ann\\x1b]52;"), lines[1]
    assert "user=ann\\x1b]52;c;cm0gLXJmIH4=\\x07\\u200b\\nroot ok, team=ml\\u202e" in lines[1], lines[1]
    assert not any(c in out.getvalue() for c in "\x1b\x07\u200b\u202e")


def test_red30_doctor_prints_a_runaway_usage_rows_user_escaped() -> None:
    out = io.StringIO()
    iv = UsageInterval(job_id="j-1", attempt=1, user=HOSTILE, team="ml", gpu_model="A100", gpu_uuid="GPU-0",
                       share=1.0, started_at=NOW, ended_at=None, kind="training")
    check = _runaways_check([RunawayUsage(row_id=3, interval=iv, job_state=None, job_attempt=None, job_end=None)])
    out.writelines(line + "\n" for line in check.lines)  # as the text report writes a check
    text = out.getvalue()
    assert "(attempt 1, ann\\x1b]52;" in text and "\\nroot ok)" in text, text
    assert not any(c in text for c in "\x1b\x07\u200b") and len(text.splitlines()) == 3, text


def test_red30_escaped_line_keeps_plain_text() -> None:
    assert escaped_line("ana · team ml: 2 GPUs") == "ana · team ml: 2 GPUs"
    assert escaped_line("a\tb\nc") == "a\\tb\\nc"


def test_red30_magics_tables_show_names_escaped() -> None:
    """Failed before: ``%schedule queue`` / ``%schedule define list`` cells held the names as stored."""
    pytest.importorskip("pandas")
    from jupyter_sched.magics.define import definitions_frame
    from jupyter_sched.magics.render import queue_frame

    frame = queue_frame([{"id": "j-1", "name": "train\u200b", "user": "\u202ebob", "kind": "training",
                          "state": "pending", "priority": "normal", "resources": {"gpus": 1}, "reason": None}], NOW)
    row = frame.iloc[0]
    assert (row["name"], row["user"]) == ("train\\u200b", "\\u202ebob"), row.to_dict()
    defs = definitions_frame([{"id": "d-1", "name": "daily\u2066", "notebook": "a.ipynb", "schedule": "0 6 * * *",
                               "timezone": "UTC", "paused": False, "next_run_at": None, "last_run": None}])
    assert defs.iloc[0]["name"] == "daily\\u2066" and defs.iloc[0]["id"] == "d-1"


def _notebook_functions(names: tuple[str, ...]) -> dict[str, object]:
    """The admin notebook's own functions ``names`` (its code cells' source, as the notebook runs them), defined here
    without the server its first cell connects to."""
    import ast
    import json
    from pathlib import Path

    import pandas as pd

    from jupyter_sched.magics.render import shown_frame

    cells = json.loads((Path(__file__).parents[2] / "notebooks" / "admin_quotas.ipynb").read_text(encoding="utf-8"))
    from jupyter_sched.textsafe import chart_label

    space: dict[str, object] = {"pd": pd, "shown_frame": shown_frame, "chart_label": chart_label,
                                "QUOTA_COLUMNS": ["team", "user", "gpu_model", "guaranteed", "borrowing_limit"]}
    for cell in cells["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        tree = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith("%")))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in names:
                exec(compile(ast.Module(body=[node], type_ignores=[]), "admin_quotas.ipynb", "exec"), space)
    return space


def test_red30_admin_notebook_tables_show_names_escaped() -> None:
    """Failed before: the admin notebook's quota tables (``quota_table``, ``quota_diff``) showed team and user names
    as stored, so ``ml\\u200b`` read as ``ml`` beside it (a DataFrame's HTML escapes markup, not these)."""
    pytest.importorskip("pandas")
    space = _notebook_functions(("gpus_text", "quota_table", "quota_diff"))
    lines = [{"team": "ml\u200b", "user": "\u202ebob", "gpu_model": "*", "guaranteed": 2, "borrowing_limit": None}]
    table = space["quota_table"](lines)  # type: ignore[operator]
    assert (table.iloc[0]["team"], table.iloc[0]["user"]) == ("ml\\u200b", "\\u202ebob"), table
    diff = space["quota_diff"]([], lines)  # type: ignore[operator]
    assert (diff.iloc[0]["team"], diff.iloc[0]["change"]) == ("ml\\u200b", "added"), diff


def test_red30_admin_notebook_chart_shows_markup_in_names_as_text() -> None:
    """Failed before: the usage chart drew a team named ``<a href="https://evil.example">ml</a>`` as a link (plotly
    reads that markup in trace names, ticks and hover text); now as the entities plotly shows as ``<`` ``>``."""
    pytest.importorskip("plotly")
    import pandas as pd
    import plotly.express as px

    from jupyter_sched.textsafe import chart_label

    space = _notebook_functions(("usage_chart",))
    space.update(px=px, value="gpu_seconds")
    team = '<a href="https://evil.example">ml</a>'
    usage = pd.DataFrame([{"team": team, "user": "<b>ann</b>\u200b", "gpu_seconds": 7200.0}])
    fig = space["usage_chart"](usage)  # type: ignore[operator]
    assert fig.data[0].name == '&lt;a href="https://evil.example"&gt;ml&lt;/a&gt;', fig.data[0].name
    assert list(fig.data[0].x) == ["&lt;b&gt;ann&lt;/b&gt;\\u200b"], list(fig.data[0].x)
    assert chart_label("R&D") == "R&amp;D" and chart_label("ml") == "ml"


def test_red30_admin_cli_work_lists_print_names_escaped_on_one_line() -> None:
    """Failed before: ``nodes drain``/``nodes list``, ``teams move`` and ``users rename`` printed a user's, node's or
    model's name as the server sent it (an OSC 52 clipboard write reached the admin's terminal, a newline forged a
    line of the plan)."""
    import argparse
    from types import SimpleNamespace

    from jupyter_sched.cli import nodes, teams, users

    def said(show: object, *args: object) -> str:
        out = io.StringIO()
        show(*args, SimpleNamespace(out=out, err=io.StringIO()))  # type: ignore[operator]
        return out.getvalue()

    item = {"id": "j-1", "user": HOSTILE, "kind": "training", "gpus": 1, "fate": "requeued", "state": "running",
            "outcome": "move", "why": f"owned by {HOSTILE}"}
    texts = [said(nodes._print, {"text": "node a drains", "work": [item]}, argparse.Namespace(json=False)),
             said(teams._show, {"items": [item], "holding": {"text": "ml holds 1 GPU"}}),
             said(users._show, {"items": [item], "text": "1 job moves", "notes": [f"{HOSTILE} keeps it"]})]

    class Inventory:
        def call(self, req: object) -> object:
            return {"nodes": [{"name": "node\u200b-a\x1b[2J", "gpus": [{"uuid": "g", "model": "A100\u202e"}]}],
                    "allocations": {}}

    texts.append(said(nodes._list, Inventory(), argparse.Namespace(json=False)))
    for text in texts:
        assert not any(c in text for c in "\x1b\x07\u200b\u202e"), text
    assert texts[0].splitlines()[1] == ("  j-1  ann\\x1b]52;c;cm0gLXJmIH4=\\x07\\u200b\\nroot ok  training  1 GPU: "
                                        "requeued"), texts[0]
    assert [len([line for line in text.splitlines() if line]) for text in texts[1:3]] == [2, 3], texts[1:3]
    assert texts[3].startswith("node\\u200b-a\\x1b[2J  1 x A100\\u202e (0 in use)  ready"), texts[3]
