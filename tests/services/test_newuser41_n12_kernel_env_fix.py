"""newuser41 n12: a notebook whose kernel is another environment's (``conda-env-torch-py``) was refused
at submit with the fix "install that kernel: <this venv>/bin/python -m ipykernel install --user --name
conda-env-torch-py" — which registers *this* Python under the torch env's name, so the job then runs
without torch while looking right. The fix now says the README's: install ipykernel and jupyter_sched
in that environment and register it from there (or change the notebook's kernel). In-process: the one
sentence (:func:`jupyter_sched.wording.kernels.install_in_its_env`) and the refusal that carries it;
the REST and runner paths are checked with it in tests/onboarding/test_newuser15_files.py,
tests/onboarding/test_hub_paths.py and tests/notebook/test_nb_outcomes.py."""

from __future__ import annotations

from pathlib import Path

from jupyter_sched.wording.kernels import CHANGE_KERNEL, install_in_its_env, kernel_missing, source_folder

ROOT = Path(__file__).resolve().parents[2]
VENV = "/tmp/newuser41/repo/.venv/bin/python3"


def test_newuser41_n12_the_fix_registers_the_kernel_from_its_own_environment() -> None:
    problem, fix = kernel_missing("conda-env-torch-py", "Python [conda env:torch]", ["python3"], VENV)
    assert problem.startswith("its kernel 'conda-env-torch-py' (Python [conda env:torch]) is not installed"), problem
    assert fix.startswith(f"{CHANGE_KERNEL} or install that kernel: in its own environment"), fix
    # the wrong command is never offered: this venv's Python registering itself under the env's name
    assert f"{VENV} -m ipykernel install" not in fix, fix
    assert f"not with {VENV}, which would run the notebook without that environment's packages" in fix, fix
    assert fix.endswith("/path/to/that-env/bin/python -m pip install ipykernel "
                        f"'{source_folder()}[lab]' && /path/to/that-env/bin/python -m ipykernel install --user "
                        "--name conda-env-torch-py"), fix
    assert fix == f"{CHANGE_KERNEL} or {install_in_its_env('conda-env-torch-py', VENV)}"  # one source


def test_newuser41_n12_the_pip_line_names_this_checkout_or_a_placeholder() -> None:
    assert source_folder() == str(ROOT)  # the tests run from the checkout (pyproject.toml beside the package)
    assert "'/somewhere/else[lab]'" in install_in_its_env("k", None, "/somewhere/else")
    assert "not with this Python," in install_in_its_env("k")
