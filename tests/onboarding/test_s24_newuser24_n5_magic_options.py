"""New user 24, N5: the magics lacked options ``jupyter-sched submit`` has — ``--memory``, ``--cpu``,
``--nvlink``, ``--workdir`` — and refused the prefixes the CLI accepts: ``%%schedule --gpu 1`` was an
"unknown argument" (the CLI: ``--gpus``), ``--mem`` was "unknown" (the CLI: "ambiguous option: --mem
could match --mem-per-gpu, --memory"). Now ``%%schedule``, ``%gpu request`` and ``%schedule dryrun``
take the CLI's options and prefixes and say "ambiguous" in the CLI's words; the request body carries
the fields ``jupyter-sched submit`` sends."""

from __future__ import annotations

import contextlib
import io
import os

import pytest

from jupyter_sched.cli.main import build_parser
from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.parsing import job_body, lease_body, parse_gpu_line, parse_schedule_line


def _cli_error(*words: str) -> str:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit):
        build_parser().parse_args(["submit", *words, "--", "true"])
    return err.getvalue()


@pytest.mark.parametrize(("header", "want"), [
    ("--gpus 1 --memory 20GiB", {"gpus": 1, "memory": "20GiB"}),
    ("--cpu 2", {"cpu": 2}),
    ("--cpu 0.5", {"cpu": 0.5}),
    ("--nvlink --gpus 2", {"gpus": 2, "nvlink": True}),
    ("--workdir /tmp", {"working_dir": "/tmp"}),
    ("--workdir data", {"working_dir": os.path.abspath("data")}),
    ("--gpu 1", {"gpus": 1}),
    ("--mem-p 20GiB", {"mem_per_gpu": "20GiB"}),
], ids=["memory", "cpu", "cpu fraction", "nvlink", "workdir", "relative workdir", "gpu prefix", "mem-p prefix"])
def test_newuser24_n5_schedule_cell_takes_the_cli_submit_options(header: str, want: dict[str, object]) -> None:
    body = job_body(parse_schedule_line(header, cell=True).options, working_dir="/kernel/cwd")
    assert {k: v for k, v in body.items() if k in want} == want, body
    if "working_dir" not in want:
        assert body["working_dir"] == "/kernel/cwd"


def test_newuser24_n5_gpu_request_and_dryrun_take_them_too() -> None:
    lease = lease_body(parse_gpu_line("request 1 --memory 20GiB --cpu 4 --nv").options, kernel_id="k")
    assert lease["memory"] == "20GiB" and lease["cpu"] == 4 and lease["nvlink"] is True, lease
    dry = job_body(parse_schedule_line("dryrun --gpu 2 --memory 8GiB").options)
    assert dry["gpus"] == 2 and dry["memory"] == "8GiB", dry
    with pytest.raises(ValidationError) as caught:
        parse_gpu_line("request 1 --workdir /tmp")
    assert caught.value.field == "--workdir" and "%%schedule --workdir" in str(caught.value.hint)


@pytest.mark.parametrize("line", ["%%schedule --mem 20GiB", "%gpu request 1 --mem 20GiB", "%schedule dryrun --mem 2GiB"])
def test_newuser24_n5_an_ambiguous_prefix_is_said_as_the_cli_says_it(line: str) -> None:
    magic, _, rest = line.partition(" ")
    with pytest.raises(ValidationError) as caught:
        if magic == "%%schedule":
            parse_schedule_line(rest, cell=True)
        elif magic == "%gpu":
            parse_gpu_line(rest)
        else:
            parse_schedule_line(rest)
    said = "ambiguous option: --mem could match --mem-per-gpu, --memory"
    assert said in _cli_error("--mem", "2GiB"), _cli_error("--mem", "2GiB")  # the CLI's words
    assert said in caught.value.message and caught.value.field == "--mem", caught.value.message


def test_newuser24_n5_script_words_after_the_target_stay_the_scripts() -> None:
    """``run``'s options may follow the script, so a prefix there is the script's (``--e 3``), not ``--env``."""
    command = parse_schedule_line("run train.py --e 3 --cpu 2")
    assert command.args == ("--e", "3") and command.options.cpu == 2, command


def test_newuser41_n5_the_magics_say_their_own_workdir_rule_not_the_servers(tmp_path: os.PathLike[str]) -> None:
    """newuser41 n5: ``%schedule run x.py --workdir ../nowhere`` was read (and jobs start) in the notebook's folder,
    but the refusal passed on the server's hint: "a relative one is read in the server's root directory, /srv …
    leave --workdir out (jobs start in the server's root directory, /srv)". The REST hint as the server words it
    (its clauses, services/jobs.py) is said by the magics with their own rule."""
    from jupyter_sched.magics.core import _one_line
    from jupyter_sched.wording.workdir import relative_clause, start_clause

    server = "the server's root directory, /srv/root41"
    rest = ValidationError("working_dir: '/x/nowhere' does not exist on this server", field="working_dir",
                           hint=f"give an existing directory you can enter {relative_clause(server)}, "
                                f"or leave working_dir out {start_clause(server)}")
    before = os.getcwd()
    os.chdir(tmp_path)
    try:
        line = _one_line(rest)
    finally:
        os.chdir(before)
    here = f"this notebook's folder, {tmp_path}"
    assert f"(a relative one is read in {here})" in line, line
    assert f"leave --workdir out (jobs start in {here}; a notebook job's in its own folder)" in line, line
    assert "/srv/root41" not in line and "server's root" not in line, line
