"""newuser31 n17: the README a newcomer reads in their first hour was 86 KB — one 2,346-character paragraph
on ``report_progress``, CLI comments past 150 columns, ~780 lines of admin and hub material after
"Configuring it". Now the README is the user's part (what it is, the two set-up commands, using it, what
the words mean) and links docs/admin.md (settings, hub, operations) and docs/details.md (the rules behind
users' answers). These tests keep it so: every relative link resolves, file and ``#anchor``; the README keeps
exactly two set-up commands; no paragraph of it runs on; code blocks fit 100 columns; the lines the newcomer
missed are there; and every message of the product that points at a README or docs section names one that
exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```.*?^```", flags=re.S | re.M)


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation (backticks, dots, arrows) dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", _text(path)), flags=re.M):
        slug = _slug(heading)
        found.add(slug if slug not in seen else f"{slug}-{seen[slug]}")  # GitHub numbers repeats: x, x-1, …
        seen[slug] = seen.get(slug, 0) + 1
    return found


def _headings(path: Path) -> set[str]:
    return {h.strip().replace("`", "").lower()
            for h in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", _text(path)), flags=re.M)}


def test_newuser31_n17_every_relative_link_in_the_readme_and_docs_resolves() -> None:
    assert (ROOT / "docs" / "admin.md").is_file() and (ROOT / "docs" / "details.md").is_file()
    broken, checked = [], 0
    for doc in DOC_FILES:
        for target in re.findall(r"\]\(([^)\s]+)\)", FENCE.sub("", _text(doc))):
            if re.match(r"[a-z]+:", target):  # https:, mailto: — not ours to resolve
                continue
            checked += 1
            path, _, anchor = target.partition("#")
            where = (doc.parent / path).resolve() if path else doc
            if not where.exists():
                broken.append(f"{doc.name}: {target} (no such file)")
            elif anchor and where.suffix == ".md" and anchor not in _anchors(where):
                broken.append(f"{doc.name}: {target} (no such heading in {where.name})")
    assert not broken, broken
    assert checked >= 10, checked  # the README links both docs, and they link back


def test_newuser31_n17_the_readme_keeps_exactly_two_set_up_commands() -> None:
    """One installs and runs JupyterLab, one runs the whole suite (what .ci/run calls); the other set-up lines
    (one test file, after a git pull) are words, not a third command to paste."""
    readme = _text(ROOT / "README.md")
    setting_up = [block.strip() for block in re.findall(r"^```\w*\n(.*?)^```", readme, flags=re.S | re.M)
                  if re.search(r"pip install|-m venv|test-all|pytest", block)]
    assert setting_up == ["python3 -m venv .venv && .venv/bin/pip install '.[all]' && .venv/bin/jupyter lab",
                          "bash scripts/test-all"], setting_up
    assert "bash scripts/test-all" in _text(ROOT / ".ci" / "run")


def test_newuser31_n17_the_readme_says_how_to_run_one_test_file_and_what_to_do_after_a_git_pull() -> None:
    readme = " ".join(_text(ROOT / "README.md").split())
    setup = readme[readme.index("## Set up on a fresh machine"):readme.index("## Using it")]
    assert "After a `git pull`, stop JupyterLab (Ctrl-C in its terminal), then run the same command again" in setup
    one_file = re.search(r"`\.venv/bin/pip install -e '\.\[test\]'`.*?`\.venv/bin/python -m pytest -q (\S+)`", setup)
    assert one_file and (ROOT / one_file.group(1)).is_file(), setup
    assert "test" in re.findall(r"^(\w+) = \[", _text(ROOT / "pyproject.toml"), flags=re.M)  # the extra it installs


def test_newuser31_n17_no_paragraph_of_the_readme_runs_on_and_code_fits_100_columns() -> None:
    readme = _text(ROOT / "README.md")
    prose = FENCE.sub("", readme)
    pieces = [piece for para in prose.split("\n\n") for piece in re.split(r"\n(?=- )", para)]  # list items apart
    long = [f"{len(p)}: {p[:60]!r}" for p in pieces if len(p) > 1200]
    assert not long, long
    wide = [f"{doc.name}: {line}" for doc in DOC_FILES for block in FENCE.findall(_text(doc))
            for line in block.splitlines() if len(line) > 100]
    assert not wide, wide
    progress = next(p for p in prose.split("\n\n") if "report_progress(step, steps)" in p)
    assert len(progress.splitlines()) <= 5 and "docs/details.md#progress-reports-and-learnt-runtimes" in progress
    assert len(readme) < 20_000, len(readme)  # the user's part; the rest is linked


def _messages(path: Path) -> list[str]:
    """The string constants of a module, docstrings left out (they are for its readers, not its users)."""
    tree = ast.parse(_text(path))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def test_newuser31_n17_every_message_pointing_at_a_doc_section_names_one_that_exists() -> None:
    """Failed before: the start-up log's "(README: one GPU machine, several people)", the store's "(README:
    Database)" and the time_limits error's "see jupyter-sched's README, Configuring it" named sections that
    moved to docs/admin.md."""
    pointer = re.compile(r"\b(README(?:\.md)?|docs/[\w-]+\.md)[:,] ([A-Za-z][^)\"\n]*?)\s*(?:\)|$)")
    wrong, found = [], 0
    for module in sorted((ROOT / "jupyter_sched").rglob("*.py")):
        if not re.search(r"README|docs/", _text(module)):  # parse only the modules that name one (CI's minutes)
            continue
        for message in _messages(module):
            for doc, title in pointer.findall(message):
                found += 1
                path = ROOT / ("README.md" if doc.startswith("README") else doc)
                if not path.is_file() or title.replace("`", "").lower() not in _headings(path):
                    wrong.append(f"{module.relative_to(ROOT)}: {doc}: {title}")
    assert not wrong, wrong
    assert found >= 3, found


def test_newuser31_n17_the_pace_warning_docs_details_shows_is_the_renderers_own() -> None:
    """The example moved with its paragraph to docs/details.md; it stays the words ``logs`` writes (the one
    renderer), so a wording change there shows here."""
    from datetime import datetime, timezone

    from jupyter_sched.wording.reported import over_limit_note

    details = " ".join(_text(ROOT / "docs" / "details.md").split())
    (shown,) = re.findall(r"`(jupyter_sched: at this pace [^`]+)`", details)
    said = over_limit_note(fraction=0.1, ran_s=40, needs_s=400, limit_s=120,
                           stops_at=datetime(2026, 12, 6, 11, 52, tzinfo=timezone.utc),
                           at=datetime(2026, 12, 6, 11, 50, tzinfo=timezone.utc))
    assert shown == said, (shown, said)
