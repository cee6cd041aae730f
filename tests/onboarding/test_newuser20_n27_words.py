"""New user 20, N27 (CLI and magics leftovers): ``jupyter-sched --url notaurl status`` asked "is the
Jupyter server still running?" for a host name that does not resolve (a wrong URL, not a stopped
server); ``cancel --mine`` asked "Cancel 1 of root's jobs" of root himself; the CUDA-initialised
refusal put "(evidence …)" after its full stop."""

from __future__ import annotations

import io

from jupyter_sched.cli.main import main
from jupyter_sched.magics.core import CUDA_ALREADY_INITIALISED, SchedMagics


def test_newuser20_n27_a_host_that_does_not_resolve_is_called_a_wrong_url() -> None:
    err = io.StringIO()
    code = main(["--url", "notaurl.invalid", "status"], out=io.StringIO(), err=err)
    said = err.getvalue()
    assert code != 0 and "its host name does not resolve" in said, said
    assert "check the host name given with --url" in said and "still running" not in said, said


def test_newuser20_n27_the_cuda_refusal_says_its_evidence_as_a_sentence() -> None:
    class State:
        initialized_by = ("torch.cuda.is_initialized()",)

    said = SchedMagics._cuda_refusal(State(), None)  # type: ignore[arg-type]
    assert said.startswith(CUDA_ALREADY_INITIALISED + " Evidence: torch.cuda.is_initialized(). Nothing"), said
    assert "(evidence" not in said
