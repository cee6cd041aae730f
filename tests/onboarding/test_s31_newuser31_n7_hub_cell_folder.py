"""newuser31 N7: on a hub, ``%%schedule`` said "Runs this cell … with your default Python, in your home directory
there" while the job ran in the notebook's folder (``~/proj``, as the README says and the body sends): a user who
reads it moves their files or expects ``import helper`` to fail. It now names the folder the body carries, and
the Python as the hub's job Python."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_sched.magics import core
from jupyter_sched.magics.carry import home_working_dir


@pytest.mark.parametrize(("cwd", "said"), [
    ("/home/n31a/proj", "in ~/proj there (this notebook's folder)"),
    ("/home/n31a", "in your home folder there (this notebook's folder)"),
    ("/srv/shared", "in your home folder there (this notebook's folder is outside your home)"),
], ids=["a folder in the home", "the home", "outside the home"])
def test_newuser31_n7_a_hub_cell_is_said_to_run_where_its_body_says(cwd: str, said: str) -> None:
    sent = home_working_dir(Path(cwd), Path("/home/n31a"))  # what _hub_body sends as working_dir
    assert core._hub_folder(sent) == said


def test_newuser31_n7_the_hub_cell_line_names_the_folder_its_body_carries(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real ``%%schedule`` path of a hub kernel in ``~/proj``, up to the submit (what is sent and said)."""
    from jupyter_sched.magics.parsing import parse_schedule_line

    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home / "proj")
    magics = core.SchedMagics(None)
    magics._through_hub, magics._sends_mine = True, False  # a hub kernel: config mode "hub", no PATH sent
    sent: list[tuple[dict[str, object], str | None]] = []
    monkeypatch.setattr(magics, "_submit", lambda options, body, note=None: sent.append((dict(body), note)) or "j-1")
    magics._submit_cell(parse_schedule_line("--gpus 0 --name sub-cell", cell=True), "import helper\nhelper.hi()\n")
    ((body, note),) = sent
    assert body["working_dir"] == "~/proj"
    assert note is not None and "in ~/proj there (this notebook's folder)" in note, note
    assert "home directory" not in note and "job Python" in note, note
