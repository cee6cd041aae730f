"""newuser26 n6 (session 27): ``jupyter-sched submit --gpus 0 --time-limit 1m slow.py`` (slow.py in the current
folder, not executable) read "'slow.py' is not a program on the job's PATH on this server — give its full path,
or check the spelling": the file is right there. Now it is said as a file, with how to run it by its kind.

Real parts: a SQLite store, the local executor's submit check on real files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest


@pytest.mark.parametrize("command, hint", [
    (["slow.py"], "run it with its interpreter (CLI: -- python slow.py, or --script slow.py)"),
    (["run.sh", "-x"], "run it with its interpreter (CLI: -- bash run.sh)"),
    (["two words.py"], "run it with its interpreter (CLI: -- python 'two words.py', or --script 'two words.py')"),
    (["tool"], "give its path (CLI: -- ./tool), or run it with its interpreter"),
], ids=["python", "shell", "quoted", "other"])
def test_newuser26_n6_a_bare_file_name_here_is_said_as_a_file_with_how_to_run_it(
        services: Services, tmp_path: Path, command: list[str], hint: str) -> None:
    for name in ("slow.py", "run.sh", "two words.py", "tool"):
        (tmp_path / name).write_text("print(1)\n")
    bo = services.caller("bo", admin=False)
    for submit in (services.jobs.submit, services.jobs.dryrun):  # the panel's Check fit says the same
        with pytest.raises(ValidationError) as info:
            submit(bo, SubmitJobRequest(gpus=0, command=command, working_dir=str(tmp_path)))
        err = info.value
        assert (err.field, err.message, err.hint) == (
            "command", f"command: {command[0]!r} is a file in the job's working directory, not a program on its PATH",
            hint), (err.message, err.hint)


def test_newuser26_n6_a_name_that_is_no_file_here_is_still_not_a_program(services: Services, tmp_path: Path) -> None:
    bo = services.caller("bo", admin=False)
    with pytest.raises(ValidationError) as info:
        services.jobs.submit(bo, SubmitJobRequest(gpus=0, command=["nosuch-n6"], working_dir=str(tmp_path)))
    assert info.value.message == "command: 'nosuch-n6' is not a program on the job's PATH on this server"
