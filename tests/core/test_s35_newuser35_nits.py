"""newuser35's wording nits, at the renderer that writes each (the one place its words live)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from jupyter_sched.engine.idle import IdleLadders
from jupyter_sched.executors.runas import why_others_cannot_run
from jupyter_sched.model import JobKind
from jupyter_sched.reclaim.idle import KERNEL_KEPT
from jupyter_sched.scheduling.snapshot import IdleAction
from jupyter_sched.wording.definitions import skipped_text
from tests.core.core_builders import make_job


def test_newuser35_n6_a_lease_reclaimed_under_the_busy_kernel_rule_says_its_kernel_keeps_running_once() -> None:
    """"… while the kernel is busy (the kernel keeps running); GPUs released, the kernel keeps running"."""
    job = make_job("l-1")
    lease = replace(job, spec=replace(job.spec, kind=JobKind.LEASE, kernel_id="k-1", command=()))
    busy = IdleAction("l-1", "reclaim", f"GPU < 5 % for 1.5 min while the kernel is busy ({KERNEL_KEPT})")
    said = IdleLadders.message(lease, busy, "release")
    assert said.count(KERNEL_KEPT) == 1 and said.endswith("; GPUs released"), said
    idle = IdleAction("l-1", "reclaim", "kernel idle and GPU < 5 % for 4 min")  # the other rules say it after
    assert IdleLadders.message(lease, idle, "release").endswith(f"; GPUs released, {KERNEL_KEPT}")


def test_newuser35_n7_a_skip_line_never_reads_full_stop_semicolon() -> None:
    """``definitions show``: "…its run j-… still waits: needs 1 Simulated GPU 80GB, 0 free.; by default …"."""
    definition = {"timezone": "UTC", "skipped": {
        "count": 2, "first": "2026-12-07T01:13:00Z", "last": "2026-12-07T01:14:00Z", "cause": "waiting",
        "why": "its run j-1 still waits: needs 1 Simulated GPU 80GB, 0 free."}}
    said = skipped_text(definition, None)
    assert ".;" not in said and "0 free; by default a firing is skipped" in said, said


def test_newuser35_n5_a_job_python_behind_a_link_names_the_private_folder_of_its_target(tmp_path: Path) -> None:
    """``c.HubSchedApp.job_python`` of the README's own .venv (every folder above it 0755; its ``python`` a link into
    /root/.pyenv, /root 0700) was refused with "a folder above it is private": the admin had to find the link."""
    private = tmp_path / "root" / "bin"
    private.mkdir(parents=True)
    (tmp_path / "root").chmod(0o700)
    target = private / "python3.11"
    target.write_text("#!/bin/sh\n")
    target.chmod(0o755)
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").symlink_to(target)
    said = why_others_cannot_run(str(venv / "python"))
    assert said == (f"its interpreter {target} (where {venv / 'python'} links) is under {tmp_path / 'root'}, mode 0700: "
                    "other accounts cannot enter it"), said
    target.chmod(0o750)
    assert why_others_cannot_run(str(target)) == f"{target} is not readable and executable by others (mode 0750)"
    assert why_others_cannot_run("/bin/sh") is None


def test_newuser35_n8_a_pasted_word_with_its_own_punctuation_is_quoted_in_the_refusal() -> None:
    """``%schedule wait j-… (the newest)`` (pasted with the CLI's own comment) said ``unknown argument (the. See …``."""
    import pytest

    from jupyter_sched.errors import ValidationError
    from jupyter_sched.magics.parsing import parse_schedule_line

    with pytest.raises(ValidationError) as pasted:
        parse_schedule_line("wait j-1m971a8en-hqb827 (the newest)")
    assert str(pasted.value).startswith("%schedule wait: unknown argument '(the' "), pasted.value
    with pytest.raises(ValidationError) as flag:  # a plain word reads as typed
        parse_schedule_line("jobs -f")
    assert str(flag.value).startswith("%schedule jobs: unknown argument -f "), flag.value
