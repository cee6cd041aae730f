"""newuser29's nits (issue 20: a new user's first hour turns up nothing odd in the CLI's words, the magics, the
panel, the README). Each test failed before its fix and asserts what a new user now reads.

Real parts: the services over a real SQLite store, the CLI commands over a client double at the wire (``call(Req)
-> JSON``, the server's answers as they come), the wording renderers, the README.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def test_newuser29_n6_a_program_path_that_is_not_there_is_said_without_the_path_sentence(tmp_path: Path) -> None:
    """Failed before: ``submit -- ./noexec.sh`` (no such file; a name with a ``/``) was told "give its full path, or
    check the spelling: the job runs with the PATH sent with it (… first, 3 folders) and none of its folders holds
    it" — no PATH is searched for a name with a ``/``. Now the path's own words; a file there that cannot be run
    says chmod, neither names PATH; a bare name still says the PATH searched."""
    from jupyter_sched.errors import ValidationError
    from jupyter_sched.services import build_services
    from jupyter_sched.services.models import SubmitJobRequest

    services = build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                               "inventory_source": "simulated", "simulated_gpus": 1, "telemetry_source": "off"})
    ana = services.caller("ana", admin=False)
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "noexec.sh").write_text("echo hi\n")
    sent = {"PATH": "/usr/bin:/bin"}
    fix = ("check the path and its spelling: a program named with a / is run from that path (a relative one from the "
           "job's working directory), not looked up on PATH")
    try:
        for command, working_dir, shown in ((["./nosuch.sh"], str(proj), proj / "nosuch.sh"),
                                            ([str(tmp_path / "bin" / "tool"), "--x"], None, tmp_path / "bin" / "tool")):
            with pytest.raises(ValidationError) as told:
                services.jobs.submit(ana, SubmitJobRequest(gpus=0, command=command, working_dir=working_dir, env=sent))
            assert told.value.field == "command", told.value
            assert told.value.message == f"command: '{shown}' does not exist on this server", told.value.message
            assert told.value.hint == fix, told.value.hint
        with pytest.raises(ValidationError) as told:  # there, not executable: chmod, by its kind
            services.jobs.submit(ana, SubmitJobRequest(gpus=0, command=["./noexec.sh"], working_dir=str(proj), env=sent))
        assert told.value.message == f"command: '{proj / 'noexec.sh'}' is not executable on this server", told.value.message
        assert told.value.hint.startswith("chmod +x it, or run it") and "PATH" not in told.value.hint, told.value.hint
        with pytest.raises(ValidationError) as told:  # a bare name: looked up on the PATH sent, said so
            services.jobs.submit(ana, SubmitJobRequest(gpus=0, command=["nosuchcmd-n6"], env=sent))
        assert told.value.hint == ("give its full path, or check the spelling: the job runs with the PATH sent with it "
                                   "(/usr/bin first, 2 folders) and none of its folders holds it"), told.value.hint
    finally:
        services.store.close()
