"""The README's first hour stays true: its two set-up commands, what it says about root, the
extras it names and the terminal commands it shows (issue 20, finding 6) — and docs/admin.md's and
docs/details.md's, where the admin material and the rules moved (newuser31 n17)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import tomllib

from jupyter_sched.cli.main import _check_usage, build_parser

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
ADMIN = (ROOT / "docs" / "admin.md").read_text(encoding="utf-8")  # settings, hub, operations (newuser31 n17)
DETAILS = (ROOT / "docs" / "details.md").read_text(encoding="utf-8")  # the rules behind users' answers
DOCS = {"README.md": README, "docs/admin.md": ADMIN, "docs/details.md": DETAILS}


def section(title: str, text: str = README) -> str:
    """``## title`` up to the next level-2 heading (its ``###`` subsections included)."""
    start = text.index(f"\n## {title}") + 1
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def bash_blocks(text: str) -> list[str]:
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S)]


def test_set_up_is_exactly_two_commands_install_and_run_then_test() -> None:
    blocks = bash_blocks(section("Set up on a fresh machine"))
    assert blocks == ["python3 -m venv .venv && .venv/bin/pip install '.[all]' && .venv/bin/jupyter lab",
                      "bash scripts/test-all"]


def test_the_readme_says_what_happens_as_root_in_jupyters_own_words() -> None:
    """As root the first command ends with Jupyter's refusal; the README quotes it and the way out."""
    import jupyter_server.serverapp as serverapp

    source = Path(serverapp.__file__).read_text(encoding="utf-8")
    quoted = "Running as root is not recommended. Use --allow-root to bypass."
    assert quoted in source  # still Jupyter's wording
    setup = section("Set up on a fresh machine")
    assert quoted in setup and "add `--allow-root` after `jupyter lab`" in setup


def test_the_extras_named_are_the_extras_declared() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    named = set(re.findall(r"`\[([a-z]+)\]`", section("Set up on a fresh machine")))
    assert named and named <= set(extras), named - set(extras)
    assert extras["all"] == ["jupyter_sched[lab,sim,fgd,kubernetes,postgres]"]
    heavy = {"pandas", "plotly", "scipy", "jupyterlab"}
    core = {re.split(r"[<>=\[ ]", dep)[0].lower() for dep in
            tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]}
    assert not heavy & core, heavy & core  # a slim `pip install .` leaves them out


TERMINAL = [line.split("#")[0].strip() for block in bash_blocks(section("Using it")) for line in block.splitlines()
            if line.startswith("jupyter-sched ")]
ADMIN_TERMINAL = [line.split("#")[0].strip() for block in bash_blocks(ADMIN) for line in block.splitlines()
                  if line.startswith("jupyter-sched ")]


@pytest.mark.parametrize("line", TERMINAL + ADMIN_TERMINAL, ids=TERMINAL + ADMIN_TERMINAL)
def test_each_terminal_command_shown_is_valid_cli_syntax(line: str) -> None:
    parser = build_parser()
    args = parser.parse_args(shlex.split(line)[1:])
    _check_usage(parser, args)  # exits 2 on a usage error


def test_the_readme_shows_the_terminal_commands_of_the_first_hour() -> None:
    shown = {line.split()[1] for line in TERMINAL}
    assert {"status", "submit", "queue", "jobs", "logs", "wait", "cancel"} <= shown


def example_notebooks(root: Path = ROOT) -> list[Path]:
    """The example notebooks of the checkout ``root``: ``notebooks/*.ipynb`` but those the example notebooks write
    when run, which ``.gitignore`` names (newuser34 N7: after Run All of definitions.ipynb, its ``daily_report.ipynb``
    failed the README test of a newcomer who tried the examples first, and the committed-without-outputs test)."""
    ignored = {line.strip() for line in (root / ".gitignore").read_text(encoding="utf-8").splitlines()}
    return sorted(path for path in (root / "notebooks").glob("*.ipynb") if f"/notebooks/{path.name}" not in ignored)


def test_newuser34_n7_a_notebook_the_examples_write_is_not_taken_for_an_example(tmp_path: Path) -> None:
    """newuser34 N7: running notebooks/definitions.ipynb writes notebooks/daily_report.ipynb (ignored by git), and the
    README's test command then failed ("AssertionError: daily_report.ipynb"). The examples are the notebooks git
    keeps: a checkout where the examples ran (here a copy of this one's) lists the same ones."""
    (tmp_path / "notebooks").mkdir()
    (tmp_path / ".gitignore").write_text((ROOT / ".gitignore").read_text(encoding="utf-8"), encoding="utf-8")
    for path in example_notebooks():
        (tmp_path / "notebooks" / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "notebooks" / "daily_report.ipynb").write_text('{"cells": [{"outputs": [1]}]}', encoding="utf-8")
    names = [path.name for path in example_notebooks(tmp_path)]
    assert names == [path.name for path in example_notebooks()] and "daily_report.ipynb" not in names, names
    assert "definitions.ipynb" in names, names


def test_newuser6_finding_17_the_readme_points_to_every_example_notebook_and_the_sidebar() -> None:
    """New user 6, F17: the README named only definitions.ipynb (not quickstart.ipynb, the best first
    hour, nor admin_quotas.ipynb) and not where the GPUs sidebar is; running the notebooks left
    untracked files in the checkout."""
    notebooks = [path.name for path in example_notebooks()]
    assert notebooks, "no example notebooks"
    for name in notebooks:
        assert f"notebooks/{name}" in README, name
    # the tooltip names the panel's shortcut as the File Browser's does (session 42, newuser41 n10): its words,
    # then the default keys of schema/plugin.json as JupyterLab shows them
    caption = re.search(r"trans\.__\('([^'%]+) \(%1\)', keys\)",
                        (ROOT / "labextension" / "src" / "sidebar.ts").read_text(encoding="utf-8"))
    plugin = json.loads((ROOT / "labextension" / "schema" / "plugin.json").read_text(encoding="utf-8"))
    keys = next(s["keys"][0] for s in plugin["jupyter.lab.shortcuts"] if s["command"] == "jupyter-sched:open")
    assert caption and f'"{caption.group(1)} ({keys.replace(" ", "+")})"' in README, \
        "the README quotes the sidebar's tooltip as it is"
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    for written in ("/notebooks/quickstart_train.py", "/notebooks/checkpoints/", "/notebooks/daily_report.ipynb"):
        assert written in ignored, written
    quickstart = (ROOT / "notebooks" / "quickstart.ipynb").read_text(encoding="utf-8")
    assert "%%writefile quickstart_train.py" in quickstart  # what the ignore lines are for


def test_newuser6_finding_17_the_settings_help_names_no_internal_test_case() -> None:
    """New user 6, F17: the README's `SchedApp.class_get_help()` printed "(case 016)", "(case 012)"…,
    references to the project's own test cases a reader cannot look up."""
    from jupyter_sched.extension import SchedApp

    said = " ".join(SchedApp.class_get_help().split())
    assert "GPU UUIDs" in said and not re.search(r"\bcase \d{3}\b", said), re.findall(r".{40}case \d{3}.{5}", said)


def test_newuser7_finding_7_the_readme_says_notebook_jobs_need_jupyter_sched_in_job_python() -> None:
    """New user 7, F7 (hub mode): with job_python a venv of the users' packages only, a notebook job failed
    with "No module named 'jupyter_sched'"; the README said so for Kubernetes images only. The local
    executor runs a notebook through ``python -m jupyter_sched.executors.run_notebook`` in job_python."""
    from jupyter_sched.executors import local

    assert "run_notebook" in Path(local.__file__).read_text(encoding="utf-8")
    text = " ".join(ADMIN.split())  # the JupyterHub section moved there (newuser31 n17)
    assert "Notebook jobs (`%%schedule` of a notebook, `--notebook`, job definitions) run through `jupyter_sched` in " \
           "that venv: install it there too" in text
    assert "No module named 'jupyter_sched'" in text


def test_newuser7_finding_12_the_terminal_block_puts_jupyter_sched_on_path_first() -> None:
    """New user 7, F12: after the README's install, a new terminal said ``jupyter-sched: command not
    found`` (the venv was never activated; only the simulate line said ``.venv/bin/jupyter-sched``)."""
    block = next(b for b in bash_blocks(section("Using it")) if "jupyter-sched status" in b)
    lines = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert lines[0] == "source .venv/bin/activate", lines
    assert "python3 -m venv .venv" in README  # the install makes exactly that venv


def _options_of_each_command() -> dict[str, set[str]]:
    import argparse

    def every_option(parser: argparse.ArgumentParser) -> set[str]:  # its own and its subcommands' (nodes cordon)
        found = {"--help", "-h"}
        for action in parser._actions:
            found |= set(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):
                for inner in action.choices.values():
                    found |= every_option(inner)
        return found

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    # serve, doctor and the simulator parse their own arguments (cli.main hands them over whole)
    return {name: every_option(p) for name, p in sub.choices.items()
            if name not in ("serve", "doctor", "simulate", "fetch-traces")}


def test_newuser29_n3_every_option_the_readme_names_for_a_command_is_one_of_its_options() -> None:
    """newuser29 n3: the README said "(a team's total is admin-only, as `usage --all`)" — `usage` has no --all.
    Every inline command of the README (`jupyter-sched CMD …` or `CMD --opt …` for a CLI command) names only
    options its parser knows (global options such as --url too)."""
    options = _options_of_each_command()
    common = {o for action in build_parser()._actions for o in action.option_strings}
    wrong = []
    for span in re.findall(r"`([^`\n]+)`", "\n".join(DOCS.values())):
        words = span.split()
        if words and words[0] == "jupyter-sched":
            words = [w for w in words[1:] if not (w.startswith("--") and w.split("=")[0] in common)]
        if len(words) < 2 or words[0] not in options:
            continue
        for word in words[1:]:
            flag = word.split("=")[0].rstrip(",.;:)")
            if flag.startswith("--") and len(flag) > 2 and flag not in options[words[0]]:
                wrong.append(f"`{span}`: {flag}")
    assert not wrong, wrong


def test_newuser34_n1_every_magic_option_the_docs_use_is_in_its_help_and_wait_says_both_ends() -> None:
    """newuser34 N1: the README said ``%schedule wait JOB --for 2h  # raises unless it succeeded, so Run All stops``
    while a ``--for`` that runs out prints "still running" and goes on (new user 17, N12), and ``%schedule?`` did
    not list ``--no-raise-error``, which the README and notebooks/definitions.ipynb use. Every option a README,
    docs or example-notebook line gives ``%schedule``/``%%schedule``/``%gpu`` is in that magic's help; the README's
    wait line says both ends."""
    import json

    from jupyter_sched.magics.core import SchedMagics

    helps = {"schedule": SchedMagics.schedule.__doc__ or "", "gpu": SchedMagics.gpu.__doc__ or ""}
    lines = [(path.name, line) for path in (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
             for line in path.read_text(encoding="utf-8").splitlines()]
    for notebook in example_notebooks():
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            lines += [(notebook.name, line) for line in "".join(cell["source"]).splitlines()]
    missing = {(magic, flag, where) for where, line in lines
               for _, magic, rest in re.findall(r"(%%?)(schedule|gpu)\b([^`#]*)", line)
               for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]*", rest) if flag not in helps[magic]}
    assert not missing, sorted(missing)
    wait = README[README.index("%schedule wait JOB --for"):][:300]
    assert "raises if it ends other than succeeded" in wait and "still running" in wait, wait
