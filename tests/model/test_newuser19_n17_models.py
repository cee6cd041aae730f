"""New user 19, N17: ``model`` as a list ("A100,H100", ["A100", "H100"]) means any of these models —
accepted when at least one is here (the absent ones said in the answer's warnings), refused only
when none is. Before the fix ``--model H100,simulated`` was refused "unknown GPU model 'H100'" on a
host of simulated GPUs only (REST, CLI), and ``%gpu request --model H100,simulated`` likewise."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.parsing import check_model
from jupyter_sched.model import spec_from_request

HERE = frozenset({"Simulated GPU 80GB"})


@pytest.mark.parametrize("model", ["H100,simulated", ["H100", "simulated"], " simulated , H100 "])
@pytest.mark.parametrize("field", ["model", "gpu_models"])
def test_newuser19_n17_a_model_list_with_one_model_here_is_taken_and_the_absent_ones_said(
        model: Any, field: str) -> None:
    warnings: list[str] = []
    spec = spec_from_request({"gpus": 1, "command": ["true"], field: model}, user="ann",
                             known_models=HERE, warnings=warnings)
    assert sorted(m.strip() for m in spec.resources.gpu_models) == ["H100", "simulated"], spec.resources
    assert any("no GPU here is 'H100'" in w and "'simulated'" in w and "Simulated GPU 80GB" in w
               for w in warnings), warnings


def test_newuser19_n17_a_model_list_with_no_model_here_is_refused_naming_them() -> None:
    with pytest.raises(ValidationError) as err:
        spec_from_request({"gpus": 1, "command": ["true"], "model": "A100,H100"}, user="ann", known_models=HERE)
    assert err.value.field == "model" and "'A100', 'H100'" in err.value.message, err.value
    assert err.value.hint == "models here: Simulated GPU 80GB", err.value
    with pytest.raises(ValidationError) as one:
        spec_from_request({"gpus": 1, "command": ["true"], "model": "H100"}, user="ann", known_models=HERE)
    assert one.value.message == "unknown GPU model 'H100'", one.value


def test_newuser19_n17_the_magic_takes_a_list_with_one_model_here() -> None:
    inventory = {"gpus": [{"model": "Simulated GPU 80GB"}]}
    check_model("H100,simulated", inventory)  # before: refused as "unknown GPU model 'H100,simulated'"
    check_model("simulated", inventory)
    with pytest.raises(ValidationError) as err:
        check_model("A100,H100", inventory)
    assert err.value.field == "--model" and "Simulated GPU 80GB" in err.value.hint, err.value
