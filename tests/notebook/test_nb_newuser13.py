"""New user 13, N19 in a real kernel: a refusal names the field as the magic's own option, once —
``%gpu request 0.05`` said ``N: gpus 0.05 is below …``, ``%%schedule --gpus 0.05`` said ``gpus 0.05 …``
and ``%%schedule --priority high`` ``priority 'high' …`` (the CLI: ``--gpus 0.05 …``, ``--priority
'high' …``). The same sentences through the CLI and the in-process magics: tests/onboarding/
test_newuser13_flags.py."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.mark.slow
async def test_newuser13_n19_a_kernels_refusals_say_the_magics_option_once(start_kernel: Any) -> None:
    kernel = await start_kernel()
    said = {}
    for line in ("%%schedule --gpus 0.05\nprint(1)", "%gpu request 0.05 --no-wait",
                 "%%schedule --gpus 1 --priority high\nprint(1)", "%gpu request 1 --priority high --no-wait",
                 "%%schedule --gpus 1 --env NVIDIA_VISIBLE_DEVICES=all\nprint(1)"):
        result = await kernel.run(line)
        assert result.error is not None, f"{line!r}: {result.text}"
        said[line.split("\n")[0]] = str(result.error.get("evalue"))
    share = "0.05 is below the smallest share of a GPU this server gives, 0.1. Ask for at least 0.1 of a GPU"
    assert said["%%schedule --gpus 0.05"].startswith(f"--gpus {share}"), said
    # the count's name, once: REST's and the CLI's "gpus" after the magic's name (newuser15 N12, b4f2391)
    assert said["%gpu request 0.05 --no-wait"].startswith(f"%gpu request: gpus {share}"), said
    granted = "--priority 'high' is not granted to"
    assert said["%%schedule --gpus 1 --priority high"].startswith(granted), said
    assert said["%gpu request 1 --priority high --no-wait"].startswith(granted), said
    env = said["%%schedule --gpus 1 --env NVIDIA_VISIBLE_DEVICES=all"]
    assert env.startswith("--env NVIDIA_VISIBLE_DEVICES is read by") and "ask for GPUs with --gpus N" in env, env
