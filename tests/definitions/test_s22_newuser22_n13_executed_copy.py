"""New user 22, N13's kind on the REST side: ``POST jobs/{id}/notebook/open`` copied the executed
notebook to ``<root>/scheduled-runs/<job id>/<name>`` with ``open(target, "wb")`` — over a copy the
user had opened and edited, and through a link planted there. The copy is now reused when it holds
these bytes, else written beside it (``<stem>-2.ipynb``, …); a link is never written through."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyter_sched.errors import ConflictError
from jupyter_sched.services.executed_copy import MAX_COPIES, copy_without_overwrite

RUN = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n'


def test_s22_newuser22_n13_an_edited_copy_is_kept_and_the_run_goes_beside_it(tmp_path: Path) -> None:
    first = copy_without_overwrite(tmp_path, "report.ipynb", RUN)
    assert first == tmp_path / "report.ipynb" and first.read_bytes() == RUN
    assert copy_without_overwrite(tmp_path, "report.ipynb", RUN) == first  # opened again: the same file
    first.write_bytes(b'{"cells": [{"cell_type": "markdown", "source": "my notes"}]}')  # the user's edits
    second = copy_without_overwrite(tmp_path, "report.ipynb", RUN)
    assert second == tmp_path / "report-2.ipynb" and second.read_bytes() == RUN
    assert b"my notes" in first.read_bytes()  # before: written over


def test_s22_newuser22_n13_a_link_there_is_not_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    folder = tmp_path / "j-1"
    folder.mkdir()
    os.symlink(victim, folder / "report.ipynb")
    made = copy_without_overwrite(folder, "report.ipynb", RUN)
    assert made == folder / "report-2.ipynb" and victim.read_text() == "precious\n"


def test_s22_newuser22_n13_every_name_taken_is_a_conflict_naming_the_fix(tmp_path: Path) -> None:
    for n in range(1, MAX_COPIES + 1):
        (tmp_path / ("report.ipynb" if n == 1 else f"report-{n}.ipynb")).write_text("other")
    with pytest.raises(ConflictError) as refused:
        copy_without_overwrite(tmp_path, "report.ipynb", RUN)
    assert refused.value.field == "job_id" and "delete some" in (refused.value.hint or ""), refused.value
