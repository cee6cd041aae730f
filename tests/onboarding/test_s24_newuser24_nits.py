"""New user 24's small items: ``audit --since 12:30`` / ``usage --since yesterday`` answered "'12:30' is
not an ISO 8601 timestamp" without the option; the ``%%schedule … --wait`` refusal said "where job =
%schedule run …", which a ``%%schedule`` cell has no place for."""

from __future__ import annotations

import contextlib
import io

import pytest

from jupyter_sched.cli.main import build_parser
from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.parsing import parse_schedule_line


@pytest.mark.parametrize(("command", "option", "value"), [("audit", "--since", "12:30"), ("usage", "--since", "yesterday"),
                                                          ("usage", "--until", "tomorrow")])
def test_newuser24_nit_an_unreadable_time_names_its_option(command: str, option: str, value: str) -> None:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit):
        build_parser().parse_args([command, option, value])
    said = err.getvalue()
    assert f"{option}: '{value}' is no date or time" in said and "2026-12-05T12:30:00Z" in said, said
    ok = build_parser().parse_args([command, option, "2026-12-05T12:30Z"])
    assert getattr(ok, option.lstrip("-")) == "2026-12-05T12:30Z"


def test_newuser24_nit_a_cells_wait_refusal_says_where_its_id_is() -> None:
    with pytest.raises(ValidationError) as refused:
        parse_schedule_line("--gpus 1 --wait", cell=True)
    assert "%%schedule cell's output" in str(refused.value.hint) and "%schedule wait {_}" in str(refused.value.hint)


def test_newuser24_nit_cancel_of_an_ended_job_says_cancelled_once() -> None:
    from jupyter_sched.wording.jobs import nothing_to_cancel

    said = nothing_to_cancel({"id": "j-1", "name": "waitml", "state": "cancelled", "message": "cancelled by root"}, None)
    assert said == "nothing to do: it had already ended — job j-1 (waitml): cancelled by root", said  # newuser26 n9
    assert said.count("cancelled") == 1


def test_newuser24_nit_audit_action_preempt_names_the_actions_preemptions_are_recorded_under() -> None:
    import argparse
    from types import SimpleNamespace

    from jupyter_sched.cli.admin_views import audit

    class _Empty:
        def call(self, req: object) -> list[object]:
            return []

    for action, said in (("preempt", "try --action reclaim"), ("admit", None)):
        out = io.StringIO()
        args = argparse.Namespace(limit=50, action=action, user=None, since=None, until=None, exclude=[], json=False)
        assert audit(_Empty(), args, SimpleNamespace(out=out, err=io.StringIO())) == 0
        text = out.getvalue()
        assert text.startswith("no audit rows match") and (said in text if said else text == "no audit rows match\n"), text
