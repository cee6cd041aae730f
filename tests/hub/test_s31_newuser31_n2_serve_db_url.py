"""newuser31 N2: ``jupyter-sched serve --SchedApp.db_url=sqlite:///…`` said "no store; set
JUPYTER_SCHED_DB_URL …" although ``serve --help`` says any setting of the service may be given as
``--SchedApp.NAME=VALUE`` and the README configures ``c.SchedApp.db_url`` first: the option was checked for
a password and never read. It is now the store named on the command line (as ``--db-url``), the store
``serve`` checks is the one it opens, and two different stores named are refused."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from jupyter_sched.hub.serve import _without_db_url, main, store_url

NO_URL = argparse.Namespace(db_url=None, db_url_file=None)


@pytest.mark.parametrize("rest", [["--SchedApp.db_url=sqlite:////srv/sched.sqlite"],
                                  ["--SchedApp.db_url", "sqlite:////srv/sched.sqlite"]], ids=["with =", "as two words"])
def test_newuser31_n2_serve_takes_the_store_from_sched_app_db_url(rest: list[str]) -> None:
    assert store_url(NO_URL, rest, {}) == "sqlite:////srv/sched.sqlite"
    # the environment still comes first, as before (file, environment, command line); traitlets is not
    # left to open the command line's store over it
    assert store_url(NO_URL, rest, {"JUPYTER_SCHED_DB_URL": "sqlite:////env.sqlite"}) == "sqlite:////env.sqlite"
    assert _without_db_url([*rest, "--SchedApp.simulated_gpus=8"]) == ["--SchedApp.simulated_gpus=8"]


def test_newuser31_n2_two_stores_named_are_refused() -> None:
    args = argparse.Namespace(db_url="sqlite:////a.sqlite", db_url_file=None)
    with pytest.raises(ValueError, match=r"--db-url and --SchedApp\.db_url name two stores"):
        store_url(args, ["--SchedApp.db_url=sqlite:////b.sqlite"], {})
    assert store_url(args, ["--SchedApp.db_url=sqlite:////a.sqlite"], {}) == "sqlite:////a.sqlite"


def test_newuser31_n2_serve_goes_past_the_store_with_only_sched_app_db_url(monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path: Path) -> None:
    for name in ("JUPYTER_SCHED_DB_URL", "JUPYTER_SCHED_DB_URL_FILE", "JUPYTERHUB_API_URL", "JUPYTERHUB_API_TOKEN",
                 "JUPYTERHUB_SERVICE_URL"):
        monkeypatch.delenv(name, raising=False)
    err = io.StringIO()
    assert main([f"--SchedApp.db_url=sqlite:///{tmp_path}/sched.sqlite"], err=err) == 2
    said = err.getvalue()
    assert "no store" not in said, said
    assert "JUPYTERHUB_API_URL and JUPYTERHUB_API_TOKEN must be set" in said  # the next thing serve needs
    err = io.StringIO()
    assert main([], err=err) == 2
    assert "--SchedApp.db_url" in err.getvalue()  # the "no store" line names this way too
