"""New user 23, N13: a refused ``warning_s`` was told "e.g. 900 for 15 min" beside a 240 s window — an
example itself refused. The hint's example is below the window (pure: the codec alone)."""

from __future__ import annotations

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.reclaim.codec import idle_policy_from_dict
from jupyter_sched.reclaim.policy import IdlePolicy


def test_s23_newuser23_n13_a_refused_warning_s_gets_an_example_below_the_window() -> None:
    """New user 23, N13: ``warning_s`` 100000 with a 240 s window was told "e.g. 900 for 15 min" — itself refused."""
    for window, example in ((240, 120), (60, 30), (7200, 900)):
        with pytest.raises(ValidationError) as refused:
            idle_policy_from_dict({"window_s": window, "warning_s": 100000}, base=IdlePolicy(), where="idle.default")
        hint = refused.value.hint or ""
        assert hint.startswith(f"e.g. {example}"), hint
        idle_policy_from_dict({"window_s": window, "warning_s": example}, base=IdlePolicy(),
                              where="idle.default")  # the example itself is accepted
