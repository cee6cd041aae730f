"""Parameters in papermill's convention: an injected cell after the 'parameters' cell."""

from __future__ import annotations

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from jupyter_sched.definitions.parameters import (
    INJECTED_TAG,
    inject_parameters,
    script_arguments,
    validate_parameters,
)
from jupyter_sched.errors import ValidationError


def notebook(*cells: object, language: str = "python") -> nbformat.NotebookNode:
    nb = new_notebook(cells=list(cells))
    nb.metadata["kernelspec"] = {"name": "python3", "language": language, "display_name": "k"}
    return nb


def tagged(source: str, tag: str = "parameters") -> nbformat.NotebookNode:
    cell = new_code_cell(source)
    cell.metadata["tags"] = [tag]
    return cell


def test_values_are_injected_right_after_the_parameters_cell_and_override_the_defaults() -> None:
    nb = notebook(new_markdown_cell("# report"), tagged("region = 'us'\nlimit = 10"), new_code_cell("print(region)"))
    at = inject_parameters(nb, {"region": "eu", "limit": 3, "flags": [True, None], "conf": {"a": 1.5}})
    assert at == 2
    injected = nb.cells[2]
    assert injected.metadata.tags == [INJECTED_TAG]
    namespace: dict[str, object] = {}
    exec(nb.cells[1].source + "\n" + injected.source, namespace)  # the kernel runs both, in this order
    assert (namespace["region"], namespace["limit"], namespace["flags"], namespace["conf"]) == (
        "eu", 3, [True, None], {"a": 1.5})
    nbformat.validate(nb)


def test_without_a_parameters_cell_the_injected_cell_goes_first_and_a_rerun_replaces_it() -> None:
    nb = notebook(new_code_cell("print(1)"))
    inject_parameters(nb, {"x": 1})
    inject_parameters(nb, {"x": 2})
    assert [c.metadata.get("tags") for c in nb.cells] == [[INJECTED_TAG], None]
    assert "x = 2" in nb.cells[0].source


def test_parameters_for_a_non_python_kernel_are_refused() -> None:
    with pytest.raises(ValidationError) as err:
        inject_parameters(notebook(new_code_cell("x"), language="R"), {"x": 1})
    assert err.value.field == "parameters" and "Python notebooks only" in err.value.message


@pytest.mark.parametrize(("value", "field"), [
    ({"1x": 1}, "parameters.1x"),
    ({"class": 1}, "parameters.class"),
    ({"x": float("nan")}, "parameters.x"),
    ({"x": {1, 2}}, "parameters.x"),
    ({"x": {"deep": [float("inf")]}}, "parameters.x.deep[0]"),
    (["x"], "parameters"),
    ({"x": "a" * 70_000}, "parameters"),
    ({"x": "a\x00b"}, "parameters.x"),
    ({"x": {"deep": ["\x00"]}}, "parameters.x.deep[0]"),
], ids=["starts with a digit", "keyword", "NaN", "a set", "nested infinity", "a list", "too big",
        "red team 6: a NUL byte (saved, then every run failed: embedded null byte)", "a nested NUL byte"])
def test_bad_parameters_name_the_field(value: object, field: str) -> None:
    with pytest.raises(ValidationError) as err:
        validate_parameters(value)
    assert err.value.field == field


def test_scripts_get_name_value_arguments() -> None:
    assert script_arguments({"epochs": 3, "name": "bert", "layers": [1, 2]}) == [
        "--epochs", "3", "--name", "bert", "--layers", "[1, 2]"]


def test_newuser6_finding_10_unknown_parameter_names_against_the_parameters_cell() -> None:
    from jupyter_sched.definitions.parameters import parameter_names, parameters_note

    def nb(source: str | None) -> dict:
        cells = [{"cell_type": "code", "source": "print(1)", "metadata": {}}]
        if source is not None:
            cells.insert(0, {"cell_type": "code", "source": source, "metadata": {"tags": ["parameters"]}})
        return {"cells": cells}

    cell = nb("region = 'us'\ndays: int = 7\nregion = 'eu'")
    assert parameter_names(cell) == ("region", "days")
    assert parameters_note(cell, {"region": "x", "days": 3}, "r.ipynb") == ""
    two = parameters_note(cell, {"regoin": "x", "dayz": 3}, "r.ipynb")
    assert two.startswith("parameters 'regoin', 'dayz' are not in r.ipynb's parameters cell (region, days) — did you "
                          "mean 'region' or 'days'? They are injected anyway"), two
    # no cell: every name is new; where the values go is said (new user 25, N10)
    assert parameters_note(nb(None), {"anything": 1}, "r.ipynb").startswith("r.ipynb has no cell tagged 'parameters'")
    assert parameters_note(nb("region = ("), {"x": 1}, "r.ipynb") == ""  # not Python that parses
