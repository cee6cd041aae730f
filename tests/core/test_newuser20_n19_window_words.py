"""New user 20, N19: ``PUT idle-policy {"default": {"window_s": -5}}`` was refused "window_s must be
more than 0 (got -5)" while its own hint said 0 turns idle reclamation off — and 0 is accepted.
The rule now says what is allowed: 0 (off) or more seconds."""

from __future__ import annotations

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.reclaim.codec import idle_policies_from_dict


def test_newuser20_n19_a_negative_window_is_refused_saying_0_turns_it_off() -> None:
    with pytest.raises(ValidationError) as refused:
        idle_policies_from_dict({"default": {"window_s": -5}})
    assert refused.value.message == "idle.default.window_s must be 0 (off) or more seconds (got -5)", refused.value.message
    assert refused.value.field == "idle.default.window_s"
    off = idle_policies_from_dict({"default": {"window_s": 0}})  # what the words promise
    assert off.default.enabled is False
