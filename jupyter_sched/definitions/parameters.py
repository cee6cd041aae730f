"""Notebook and script parameters, in papermill's convention (pure functions; :func:`parameters_file_note`
alone reads a file).

The convention (papermill, https://papermill.readthedocs.io/en/latest/usage-parameterize.html):
the notebook's author tags one cell ``parameters`` and writes the defaults there; a run inserts
a new cell tagged ``injected-parameters`` right after it that assigns the run's values, so they
override the defaults and the executed notebook shows both. Without a tagged cell the injected
cell goes first. We write the injected cell ourselves rather than depend on papermill: for a
Python kernel it is one assignment per name, and nbclient (already our runner) executes it; papermill
would add its own engine stack and a dozen dependencies for the same cell.

Values are JSON (strings, numbers, booleans, null, lists, objects), written as Python literals.
Scripts get the same values as ``--name value`` arguments (strings as they are, anything else as
JSON), which ``argparse`` reads.
"""

from __future__ import annotations

import json
import keyword
import math
from collections.abc import Mapping, MutableMapping
from typing import Any

from .. import untrusted_json
from ..errors import ValidationError, json_kind, shown

__all__ = [
    "edited_parameters",
    "INJECTED_TAG",
    "MAX_PARAMETERS_BYTES",
    "NOTEBOOK_ARGS_HINT",
    "NOTEBOOK_ARGUMENT",
    "NO_PARAMETERS_CELL",
    "NOTED_CELL_BYTES",
    "NOTEBOOK_VALUES_HINT",
    "PARAMETERS_TAG",
    "PARAMETERS_RULE",
    "inject_parameters",
    "notebook_args_text",
    "no_parameters_cell_note",
    "parameter_defaults",
    "parameter_names",
    "parameters_cell_index",
    "parameters_file_note",
    "parameters_note",
    "parameters_text_note",
    "parse_parameter_words",
    "script_arguments",
    "unsaid_note",
    "validate_parameters",
]

PARAMETERS_TAG = "parameters"
INJECTED_TAG = "injected-parameters"
MAX_PARAMETERS_BYTES = 64 * 1024
"""Largest parameter set accepted (bytes of its JSON): parameters are values, not data."""


PARAMETERS_RULE = "-p sets values of a notebook's parameters cell"
"""The first clause of a refused ``-p`` where the job is no notebook (a command after ``--``, a
``%%schedule`` cell, before ``%schedule run``'s script); the caller adds what that job takes instead
(new user 14, N27). The server's rule is the same: parameters apply to a notebook, or to a script it
runs itself (``--NAME value``)."""

NOTEBOOK_ARGUMENT = "unexpected argument {word!r}: a notebook takes no command-line arguments"
"""A word after a notebook (``%schedule notebook NB x``, ``submit --notebook NB x``), said with
:data:`NOTEBOOK_VALUES_HINT`."""

NOTEBOOK_VALUES_HINT = "give its parameters cell values with -p NAME=VALUE, e.g. -p days=3"
"""What a notebook takes instead of arguments (new user 14, N27: "a notebook takes no arguments"
was said while ``-p`` was not accepted — untrue of the tool's own model)."""

NOTEBOOK_ARGS_HINT = ("give the notebook's values as parameters instead (-p NAME=VALUE, e.g. -p epochs=3; REST: "
                      "parameters), and no args")
"""What a notebook given arguments is told — a definition's (session 38: ``--args`` was taken and never passed) and
``POST jobs``' (the same: its ``args`` went to ``command``, which a notebook run never reads)."""


def notebook_args_text(args: tuple[str, ...] | list[str]) -> str:
    """``args '--epochs 3' are a script's arguments: a notebook takes none`` (shell-quoted, at most 200 characters
    of them): what a notebook definition given arguments is refused with, and what a stored one is told (pure)."""
    import shlex

    words = " ".join(shlex.quote(a) for a in args)
    words = words if len(words) <= 200 else words[:199] + "…"
    return f"args {words!r} are a script's arguments: a notebook takes none"


def parse_parameter_words(words: list[str] | tuple[str, ...], *, flag: str = "-p") -> dict[str, Any]:
    """``-p NAME=VALUE`` values as typed on a command line → a parameter set: the one reading of
    ``jupyter-sched submit``/``definitions``, ``%schedule notebook`` and ``%schedule define``.

    Each value is read as JSON when it parses (``3``, ``0.5``, ``true``, ``[1, 2]``, ``null``) and as
    text otherwise (``eu``); quote a number to keep it text (``-p code='"007"'``).

    Raises:
        ValidationError: a word without ``=`` or without a name (``field`` is ``flag``), or a name
            given twice (the last one won, and nothing said so — as ``--env`` refuses it).
    """
    out: dict[str, Any] = {}
    typed: dict[str, list[str]] = {}
    for text in words:
        name, sep, raw = text.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ValidationError(f"{flag} needs NAME=VALUE (got {text!r})", field=flag,
                                  hint=f"e.g. {flag} region=eu {flag} days=3")
        typed.setdefault(name, []).append(text)
        if len(typed[name]) > 1:
            raise ValidationError(f"{flag} {name} is given twice ({', '.join(typed[name])}): give it once",
                                  field=flag, hint="keep the one you mean")
        try:
            out[name] = untrusted_json.loads(raw)
        except ValueError:
            out[name] = raw
    return out


def edited_parameters(current: Mapping[str, Any] | None, given: Mapping[str, Any], unset: list[str] | tuple[str, ...],
                      *, flag: str = "--unset-parameter") -> dict[str, Any]:
    """The parameters an edit leaves a definition with: ``current`` (its stored set) with ``given`` (``-p NAME=VALUE``)
    set over it and the names in ``unset`` removed — an edit's ``-p`` changes the parameters it names, as every other
    edit option leaves what it does not name (newuser38 N1: ``edit rep -p region=us`` dropped ``days=3`` silently; the
    REST body's ``parameters`` is the whole set, which the CLI and the magic build here).

    Raises:
        ValidationError: a name in ``unset`` the definition does not have, or also given (``field`` is ``flag``).
    """
    have = dict(current or {})
    for name in unset:
        if name in given:
            raise ValidationError(f"{flag} {name} and -p {name}=… both given: give one", field=flag,
                                  hint=f"-p {name}=VALUE sets it; {flag} {name} removes it")
        if name not in have:
            listed = ", ".join(sorted(have)) or "none"
            raise ValidationError(f"{flag} {name}: the definition has no parameter {name!r} (it has: {listed})",
                                  field=flag, hint="name one it has; `definitions show DEF` lists them")
        del have[name]
    return {**have, **given}


def parameters_file_note(path: str, parameters: Mapping[str, Any]) -> str:
    """:func:`parameters_note` for the notebook at ``path`` when this machine can read it as one,
    else "" (a script, a file elsewhere: nothing can be said) — what the CLI and the magics print
    beside a job or definition that gets ``parameters``."""
    if not parameters:
        return ""
    from ..userfiles import NotRunnable, read_run_file

    try:  # a regular file in the runner's bound only: a FIFO hung the CLI, a huge file filled it (red39 R4's kind)
        nb = untrusted_json.loads(read_run_file(path).decode("utf-8"))
    except (OSError, ValueError, NotRunnable):
        return ""
    return parameters_note(nb, parameters, path.rsplit("/", 1)[-1]) if isinstance(nb, dict) else ""


NOTED_CELL_BYTES = 8 << 10
"""Most characters of a parameters cell the service parses for :func:`parameters_text_note` (the bound of a script
it compiles in its own process, :data:`~jupyter_sched.userfiles.IN_PROCESS_BYTES`: a parse holds the GIL of every
user's requests; red team 26, R2). A longer cell is not noted by the service; the CLI and the magics, which read
the file in the user's own process, and the run's log still say it."""


def parameters_text_note(text: bytes | str, parameters: Mapping[str, Any], path: str) -> str:
    """:func:`parameters_note` for a notebook's JSON ``text`` the service holds — the file a submit, a dry run
    (the panel's Check fit) or a definition's save names, read as its owner, or the carried ``notebook_json`` —
    in the CLI's words, for the answer's ``warnings`` (newuser39 n3: the panel said nothing of ``regoin=eu``).
    "" when no value is given, the text is no notebook, or its parameters cell is longer than
    :data:`NOTED_CELL_BYTES`. Any JSON is taken: a cell of another shape has no tags or source."""
    if not parameters:
        return ""
    try:
        nb = untrusted_json.loads(text)
    except ValueError:
        return ""
    if not isinstance(nb, dict):
        return ""
    cells = _cells(nb)
    index = parameters_cell_index(cells)
    if index is not None and len(_cell_text(cells[index]) or "") > NOTED_CELL_BYTES:
        return ""
    return parameters_note(nb, parameters, path.rsplit("/", 1)[-1])


def unsaid_note(note: str, said: Any) -> str:
    """``note`` unless the server's answer already says it among its ``warnings`` (``said``): the CLI and the
    magics read the file themselves where the service could not (another executor, a file only they reach),
    and say it once where both did (:func:`parameters_text_note` is the same wording)."""
    return "" if note and isinstance(said, (list, tuple)) and note in said else note


def _cells(nb: Mapping[str, Any]) -> list[Any]:
    cells = nb.get("cells")
    return cells if isinstance(cells, list) else []


def _check_value(value: Any, path: str, depth: int = 0) -> None:
    if depth > 16:
        raise ValidationError(f"{path} is nested too deeply", field=path, hint="pass at most 16 levels")
    if isinstance(value, str) and "\x00" in value:  # a script's argv cannot carry it: refused now, not at start
        raise ValidationError(f"{path} must not contain NUL bytes", field=path, hint="remove the \\u0000 characters")
    if value is None or isinstance(value, (bool, str, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValidationError(f"{path} must be a finite number (got {shown(value)})", field=path,
                                  hint="use a number, or a string such as 'inf' and convert it in the notebook")
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_value(item, f"{path}[{i}]", depth + 1)
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValidationError(f"{path} has a non-string key {key!r}", field=path, hint="use string keys")
            _check_value(item, f"{path}.{key}", depth + 1)
        return
    raise ValidationError(f"{path} must be a JSON value (got {json_kind(value)})", field=path,
                          hint="use strings, numbers, true/false, null, lists or objects")


def validate_parameters(value: Any, *, field: str = "parameters") -> dict[str, Any]:
    """Check a parameter set: an object whose keys are Python identifiers and whose values are JSON.

    Returns:
        A plain ``dict`` copy.

    Raises:
        ValidationError: not an object, a key that is not an identifier (or is a keyword),
            a value that is not JSON (NaN, infinity, a set), or more than 64 KiB in all.
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValidationError(f"{field} must be an object of name: value", field=field,
                              hint='e.g. {"learning_rate": 0.01, "epochs": 3}')
    for name in value:
        if isinstance(name, str) and keyword.iskeyword(name):  # `class` is an identifier (new user 16, N11)
            raise ValidationError(f"parameter name {name!r} is a Python keyword: a parameters cell cannot assign it",
                                  field=f"{field}.{name}", hint=f"rename it, e.g. {name}_")
        if not isinstance(name, str) or not name.isidentifier():
            raise ValidationError(f"parameter name {name!r} is not a Python identifier", field=f"{field}.{name}",
                                  hint="use letters, digits and underscores, not starting with a digit")
        _check_value(value[name], f"{field}.{name}")
    size = len(json.dumps(dict(value)))
    if size > MAX_PARAMETERS_BYTES:
        raise ValidationError(f"{field} is {size} bytes; at most {MAX_PARAMETERS_BYTES} allowed", field=field,
                              hint="pass large data as a file path parameter")
    return dict(value)


def _tags(cell: Any) -> list[str]:
    # any JSON: the service reads a submitted notebook's cells too (a cell or its metadata that is no object has no tags)
    meta = cell.get("metadata") if isinstance(cell, Mapping) else None
    tags = meta.get("tags") if isinstance(meta, Mapping) else None
    return [str(t) for t in tags] if isinstance(tags, list) else []


def _cell_text(cell: Any) -> str | None:
    """A cell's source as one text (nbformat: a string or a list of strings), None when it is neither."""
    source = cell.get("source", "") if isinstance(cell, Mapping) else None
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source)
    return source if isinstance(source, str) else None


def parameters_cell_index(cells: list[Any]) -> int | None:
    """Index of the first cell tagged ``parameters`` (None when the notebook has none)."""
    for index, cell in enumerate(cells):
        if PARAMETERS_TAG in _tags(cell):
            return index
    return None


def _parameter_cell(nb: Mapping[str, Any]) -> list[tuple[str, Any]] | None:
    """``(name, value node)`` of each assignment of the notebook's ``parameters`` cell, in order
    (the value node None for an annotation without a value); None when it has no such cell or the
    cell is not Python that parses."""
    import ast

    cells = _cells(nb)
    index = parameters_cell_index(cells)
    if index is None:
        return None
    source = _cell_text(cells[index])
    try:
        tree = ast.parse(source) if source is not None else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python that parses (a NUL, too deep)
        return None
    if tree is None:
        return None
    assigned: list[tuple[str, Any]] = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        assigned += [(t.id, getattr(node, "value", None)) for t in targets if isinstance(t, ast.Name)]
    return assigned


def parameter_names(nb: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The names the notebook's ``parameters`` cell assigns, in order; None when it has no such
    cell or the cell is not Python that parses (then no name can be said to be unknown)."""
    assigned = _parameter_cell(nb)
    return None if assigned is None else tuple(dict.fromkeys(name for name, _ in assigned))


def parameter_defaults(nb: Mapping[str, Any]) -> dict[str, Any]:
    """Name → the value the ``parameters`` cell gives it last, for the values written as literals
    (``days = 7``; ``days = compute()`` is left out: its type is not known before it runs)."""
    import ast

    defaults: dict[str, Any] = {}
    for name, node in _parameter_cell(nb) or []:
        try:
            defaults[name] = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            defaults.pop(name, None)  # the last assignment is what runs: not a literal, not known
    return defaults


def _fits(default: Any, given: Any) -> bool:
    """Whether a run's value is of the kind the notebook's default is (an int where a float is
    expected fits; None on either side fits: "none" is a value any parameter may take)."""
    if default is None or given is None:
        return True
    if isinstance(default, bool) or isinstance(given, bool):
        return isinstance(default, bool) and isinstance(given, bool)
    if isinstance(default, float) and isinstance(given, int):
        return True
    if isinstance(default, (list, tuple)) and isinstance(given, (list, tuple)):
        return True
    return type(default) is type(given)


def parameters_note(nb: Mapping[str, Any], parameters: Mapping[str, Any], notebook: str) -> str:
    """What a person should know about ``parameters`` against the notebook's ``parameters`` cell
    (papermill warns the same way), in sentences, else "" — the one wording of the CLI, the magics
    and a run's log:

    * a name the cell does not set: ``parameter 'regoin' is not in daily_report.ipynb's parameters
      cell (region, days) — did you mean 'region'? It is injected anyway; the notebook's own value
      of any name it sets is what runs.`` (new user 6, F10: a typo'd name ran every night with the
      default, and nothing said so);
    * a value of another type than the cell's default: ``days is 7 (int) in daily_report.ipynb's
      parameters cell; the value given, 'notanumber', is a str, and the notebook gets it as it is.``
      (new user 13, N20: accepted silently; the run failed inside the notebook at 07:00).
    """
    import difflib

    if parameters and parameters_cell_index(_cells(nb)) is None:
        return no_parameters_cell_note(notebook, parameters)
    names = parameter_names(nb)
    if names is None:
        return ""
    sentences: list[str] = []
    unknown = [str(p) for p in parameters if p not in names]
    if unknown:
        # the first few named and guessed: the service says it too, holding every user's requests (a 64 KiB set of
        # names against a long cell was seconds of difflib)
        guesses = [g for p in unknown[:_NAMED] for g in difflib.get_close_matches(p[:100], names, n=1)]
        which = ", ".join(f"'{p[:100]}'" for p in unknown[:_NAMED]) + \
            (f" and {len(unknown) - _NAMED} more" if len(unknown) > _NAMED else "")
        one = len(unknown) == 1
        listed = ", ".join(names[:_LISTED]) + (f", … ({len(names)} in all)" if len(names) > _LISTED else "")
        said = (f"parameter{'' if one else 's'} {which} {'is' if one else 'are'} not in {notebook}'s parameters cell "
                f"({listed or 'it sets none'})")
        said += f" — did you mean {' or '.join(repr(g) for g in dict.fromkeys(guesses))}?" if guesses else "."
        sentences.append(said + (" It is" if one else " They are") + " injected anyway; the notebook's own value "
                         "of any name it sets is what runs.")
    defaults = parameter_defaults(nb)
    for name, value in parameters.items():
        if name in defaults and not _fits(defaults[name], value) and len(sentences) <= _NAMED:
            default, kind = defaults[name], type(value).__name__
            sentences.append(f"{name} is {_literal(default)[:40]} ({type(default).__name__}) in {notebook}'s parameters "
                             f"cell; the value given, {_literal(value)[:40]}, is {'an' if kind[0] in 'aeiou' else 'a'} "
                             f"{kind}, and the notebook gets it as it is."
                             # text that reads as a number (1.10 → 1.1): how to pass it as text (newuser27 n10)
                             + (f" To pass it as text, quote it as a JSON string: -p '{name}=\"…\"'."
                                if isinstance(default, str) and not isinstance(value, str) else ""))
    return " ".join(sentences)


_NAMED = 5
"""Most unknown names (and values of another type) a note names: the rest are counted."""
_LISTED = 30
"""Most of the cell's own names a note lists."""

NO_PARAMETERS_CELL = "has no cell tagged 'parameters'"
"""The words of :func:`no_parameters_cell_note` another sentence may look for (the magics' "assigned after")."""


def no_parameters_cell_note(notebook: str, parameters: Mapping[str, Any]) -> str:
    """The note for ``parameters`` given to a notebook with no cell tagged ``parameters`` (new user
    25, N10: injected silently, as a new first cell, and failures then named cells one off), as
    papermill warns: ``r.ipynb has no cell tagged 'parameters': the values given (x) go into a new
    first cell, before the notebook's own code, so a name the notebook sets itself keeps the
    notebook's value — tag the cell that sets the defaults 'parameters' to put them after it.``"""
    names = ", ".join(str(p) for p in parameters)
    return (f"{notebook} {NO_PARAMETERS_CELL}: the values given ({names}) go into a new first cell, before the "
            "notebook's own code, so a name the notebook sets itself keeps the notebook's value — tag the cell "
            "that sets the defaults 'parameters' to put them after it (papermill's convention).")


def _literal(value: Any) -> str:
    # repr of JSON-decoded values (str, int, float, bool, None, list, dict) is a Python literal
    return repr(value)


def inject_parameters(nb: MutableMapping[str, Any], parameters: Mapping[str, Any]) -> int | None:
    """Insert (or replace) the ``injected-parameters`` cell of ``nb`` in place.

    Args:
        nb: an nbformat v4 notebook (dict-like, with ``cells`` and ``metadata``).
        parameters: validated values (:func:`validate_parameters`).

    Returns:
        The index of the injected cell, or None when there was nothing to inject.

    Raises:
        ValidationError: parameters were given but the notebook's kernel is not Python
            (the assignments would not parse there).
    """
    cells: list[Any] = nb["cells"]
    cells[:] = [c for c in cells if INJECTED_TAG not in _tags(c)]
    if not parameters:
        return None
    language = (nb.get("metadata", {}).get("kernelspec", {}).get("language")
                or nb.get("metadata", {}).get("language_info", {}).get("name") or "python")
    if str(language).lower() != "python":
        raise ValidationError(f"parameters can be injected into Python notebooks only (this one is {language})",
                              field="parameters", hint="leave parameters out, or use a Python kernel")
    lines = ["# Parameters (injected by jupyter_sched)"]
    lines += [f"{name} = {_literal(value)}" for name, value in parameters.items()]
    cell: dict[str, Any] = {"cell_type": "code", "execution_count": None, "outputs": [], "source": "\n".join(lines) + "\n",
            "metadata": {"tags": [INJECTED_TAG]}}
    if "id" in (cells[0] if cells else {}):
        cell["id"] = "injected-parameters"
    tagged = parameters_cell_index(cells)
    at = 0 if tagged is None else tagged + 1
    cells.insert(at, _as_node(cell, nb))
    return at


def _as_node(cell: dict[str, Any], nb: Any) -> Any:
    """A NotebookNode when ``nb`` is one (nbformat's writer expects attribute access)."""
    try:
        from nbformat import from_dict

        return from_dict(cell) if type(nb).__name__ == "NotebookNode" else cell  # type: ignore[no-untyped-call]
    except ImportError:  # plain dicts in, plain dicts out
        return cell


def script_arguments(parameters: Mapping[str, Any]) -> list[str]:
    """``--name value`` pairs for a script (strings as they are, other values as JSON)."""
    out: list[str] = []
    for name, value in parameters.items():
        out += [f"--{name}", value if isinstance(value, str) else json.dumps(value)]
    return out
