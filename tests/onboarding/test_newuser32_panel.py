"""New user 32's panel and wording findings of branch s32-panel (/work/coord/notes/newuser32.md): N2 (submit's own
options typed in the panel's Arguments field went to the script unsaid) and n1 (99 GPUs said in several shapes),
against one real embedded server (2 simulated GPUs), the installed ``jupyter-sched`` command and the magics driven
in this process with a real client. The panel's side of each is pinned in
labextension/test/s32_newuser32_panel.test.ts, on the answers this server gives."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.cli.main import EXIT_OK, EXIT_REFUSED
from jupyter_sched.magics.core import MagicError
from tests.onboarding.test_cli_firsthour import api, module_server
from tests.onboarding.test_newuser10 import _env
from tests.onboarding.test_newuser11 import _cli, _magics
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu32panel", USERS)


# ---- n1: a request that can never fit, one sentence shape ---------------------------------------------------

NEVER = "needs 99 GPUs of any model on one node but the largest node has 2 — ask for at most 2 GPUs"


def test_newuser32_n1_99_gpus_reads_one_shape_on_cli_and_magics_refusals_and_dry_runs(
        server: EmbeddedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """n1: the CLI said "… has 4 — ask for at most 4 GPUs", the magics "… has 4. Ask for at most 4 GPUs.", the dry
    runs "… has 4. Ask for …" and the panel "— Ask for …" (its Check fit no fix at all). Now every surface says what
    blocks it, a dash and the fix as a clause (wording.reasons.refusal_line); the panel's twin is pinned in vitest
    on the reason this server sends (the same text, checked here)."""
    rest = api(server, "tok-ann").post("jobs", json={"gpus": 99, "command": ["true"]})
    assert rest.status_code == 422, rest.text
    text = rest.json()["error"]["details"]["reason"]["text"]
    # what the panel joins (labextension/test/s32_newuser32_panel.test.ts pins its sentence on these words)
    assert (text["summary"], text["unblock"]) == (NEVER.split(" — ")[0] + ".", "Ask for at most 2 GPUs."), text
    env = _env(tmp_path, server)
    refused = _cli(env, "submit", "--gpus", "99", "--", "true")
    assert refused.returncode == EXIT_REFUSED, refused
    assert refused.stderr.strip().splitlines()[-1] == f"jupyter-sched submit: --gpus: {NEVER} [unschedulable]"
    dry = _cli(env, "submit", "--dry-run", "--gpus", "99", "--", "true")
    assert dry.returncode == EXIT_OK and dry.stdout.strip() == f"Would never start here: {NEVER}", dry
    magics = _magics(server)
    with pytest.raises(MagicError) as cell:
        magics.schedule("--gpus 99", "print('never runs')")
    assert str(cell.value) == f"--gpus: {NEVER}.", cell.value
    with pytest.raises(MagicError) as lease:
        magics.gpu("request 99 --no-wait")
    assert str(lease.value) == f"%gpu request: {NEVER}.", lease.value
    capsys.readouterr()
    magics.schedule("dryrun --gpus 99", None)
    assert capsys.readouterr().out.strip() == f"Would never start here: {NEVER}"
