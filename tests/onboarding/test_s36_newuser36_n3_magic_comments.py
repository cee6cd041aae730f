"""newuser36 N3: the README's notebook blocks failed when pasted into a cell. Each magic line there carried a trailing
``# comment``, which IPython hands to the magic with the rest of the line: ``%load_ext jupyter_sched   # admins: …``
said ``No module named 'jupyter_sched   # admins: c'`` (the very error the README says means "wrong kernel"),
``%gpu   # … this kernel's lease`` "No closing quotation", the others "unknown argument '#'".

The magics now read an unquoted ``#`` that begins a word as a comment, as a shell does; ``%load_ext`` (IPython's)
cannot, so the README's lost its comment. Every notebook block of the README, docs/*.md and the example notebooks
is run here through IPython's own input transformation and each magic call through the parser it reaches, so
what they show runs as shown. Pure parsing: no kernel, no server."""

from __future__ import annotations

import ast
import importlib.util
import json
import re
from pathlib import Path

import pytest
from IPython.core.inputtransformer2 import TransformerManager

from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.define import parse_define
from jupyter_sched.magics.parsing import _split, comment_start, parse_gpu_line, parse_schedule_line

from .test_readme import example_notebooks

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("line", "words"), [
    ("request 1 --mem-per-gpu 20GiB   # sets CUDA_VISIBLE_DEVICES (UUIDs) in this kernel",
     ["request", "1", "--mem-per-gpu", "20GiB"]),
    ("                             # inventory and this kernel's lease, as a DataFrame", []),  # the apostrophe
    ("cancel JOB             # or --mine (lists them; add --yes to cancel)", ["cancel", "JOB"]),
    ("#comment at once", []),
    ("--name run#3 --gpus 1", ["--name", "run#3", "--gpus", "1"]),  # inside a word: the argument's, as in bash
    ("--name '#3' # the name", ["--name", "#3"]),
    ('--name "a # b" x', ["--name", "a # b", "x"]),
    ('--name "say \\" # still quoted" # gone', ["--name", 'say " # still quoted']),
    ("--name \\#3 # gone", ["--name", "#3"]),
    ("--name it\\'s # gone", ["--name", "it's"]),
    ("--env A=1\t# a tab before it", ["--env", "A=1"]),
])
def test_newuser36_n3_an_unquoted_hash_word_starts_a_comment_as_in_a_shell(line: str, words: list[str]) -> None:
    assert _split(line, "%gpu") == words


def test_newuser36_n3_a_comment_after_each_magic_form_is_left_out_and_quotes_before_it_still_count() -> None:
    assert parse_gpu_line("   # inventory and this kernel's lease").action == "status"
    assert parse_gpu_line("release                     # give this kernel's GPUs back").action == "release"
    cell = parse_schedule_line("--gpus 2 --name bert-ft   # the run's name", cell=True)
    assert cell.action == "cell" and cell.options.name == "bert-ft"
    assert parse_schedule_line("queue                  # pending and running work: why it waits, ETA").action == "queue"
    assert parse_define(_split("list           # also: show, runs", "%schedule define")).action == "list"
    with pytest.raises(ValidationError, match="No closing quotation"):  # a quote the line itself leaves open
        parse_schedule_line("--name 'bert # one", cell=True)
    assert comment_start("a 'b # c' d # e") == len("a 'b # c' d ")


def _magic_calls(source: str) -> list[tuple[str, str, str | None]]:
    """``(magic, line, cell body or None)`` of each magic ``source`` calls, as IPython hands them over: its own
    transformation of the cell into Python (``get_ipython().run_line_magic('gpu', 'request 1   # …')``)."""
    code = TransformerManager().transform_cell(source)
    calls = []
    for node in ast.walk(ast.parse(code)):  # a SyntaxError here: the block is not even a cell IPython can run
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("run_line_magic", "run_cell_magic"):
            args = [ast.literal_eval(arg) for arg in node.args]
            calls.append((args[0], args[1], args[2] if node.func.attr == "run_cell_magic" else None))
    return calls


def _notebook_blocks() -> list[tuple[str, str]]:
    """``(where, source)`` of every Python block of README.md and docs/*.md that calls a magic, and every code cell
    of the example notebooks."""
    blocks = []
    for path in (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))):
        for n, block in enumerate(re.findall(r"```(?:python|ipython)\n(.*?)```", path.read_text(encoding="utf-8"),
                                             flags=re.S)):
            if re.search(r"^\s*(\w+\s*=\s*)?%", block, flags=re.M):
                blocks.append((f"{path.name} block {n + 1}", block))
    for notebook in example_notebooks():
        for n, cell in enumerate(json.loads(notebook.read_text(encoding="utf-8"))["cells"]):
            if cell["cell_type"] == "code":
                blocks.append((f"{notebook.name} cell {n + 1}", "".join(cell["source"])))
    return blocks


def _check_call(magic: str, line: str, body: str | None) -> None:
    """Parse one magic call as the magic would; raises its ValidationError (or AssertionError) where it would fail."""
    if magic == "load_ext":  # IPython's: the whole line is the module's name
        assert importlib.util.find_spec(line.strip()) is not None if re.fullmatch(r"\s*[\w.]+\s*", line) else False, \
            f"%load_ext {line!r}: IPython takes the whole line as the module's name"
    elif magic == "gpu":
        parse_gpu_line(line)
    elif magic == "schedule" and body is not None:
        parse_schedule_line(line, cell=True)
        compile(body, "<cell>", "exec")  # the body runs as a Python file
    elif magic == "schedule" and line.split(None, 1)[:1] == ["define"]:
        parse_define(_split(line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else "", "%schedule define"))
    elif magic == "schedule":
        parse_schedule_line(line)
    elif magic not in ("pip", "env", "time", "timeit", "matplotlib", "writefile"):  # IPython's own, which take such lines
        raise AssertionError(f"%{magic}: a magic this test does not know how to check")


def test_newuser36_n3_every_notebook_block_of_the_readme_docs_and_examples_parses_as_shown() -> None:
    blocks = _notebook_blocks()
    assert any(where.startswith("README.md") for where, _ in blocks), "the README's notebook blocks were not found"
    wrong, checked = [], 0
    for where, source in blocks:
        for magic, line, body in _magic_calls(source):
            checked += 1
            try:
                _check_call(magic, line, body)
            except (ValidationError, AssertionError, SyntaxError) as exc:
                wrong.append(f"{where}: %{magic} {line!r}: {exc}")
    assert checked > 10 and not wrong, "\n".join(wrong)
