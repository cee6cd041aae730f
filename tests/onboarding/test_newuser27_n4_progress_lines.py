"""New user 27, N4: `jupyter-sched logs` turned each `\\r` progress update into a line of its own and
`--tail N` counted only `\\n`: a tqdm-style job's `logs --tail 2` printed every update. A line a progress
bar rewrote is now printed as its last state, as a terminal shows it; a carriage return still cannot
hide a line of words (red team 6)."""

from __future__ import annotations

import argparse
import io
from types import SimpleNamespace
from typing import Any

import pytest

from jupyter_sched.cli.commands import logs
from jupyter_sched.cli.main import Streams
from jupyter_sched.errors import ValidationError
from jupyter_sched.textsafe import printable_log

BAR = "".join(f"\r{i + 1}/20 [{'#' * (i + 1):<20}]" for i in range(20)) + "\n"
TQDM = "".join(f"\r{p:3d}%|{'█' * (p // 10):<10}| {p // 5}/20 [00:0{p // 20}<00:09, 2.00it/s]"
               for p in range(0, 101, 5)) + "\n"
LOG = "setup ok\n" + BAR + "epoch 1 loss 0.5\n" + TQDM + "done\n"


class _Client:
    """The log route as a client sees it, in slices of ``size`` bytes (the text is ASCII-free of splits)."""

    def __init__(self, text: str, size: int) -> None:
        self.data, self.size = text.encode(), size

    def job_named(self, ref: str, command: str = "") -> Any:
        return SimpleNamespace(id=ref, note="")

    def logs(self, job_id: str, offset: int = 0, limit: int | None = None, tail: int | None = None) -> dict[str, Any]:
        if tail is not None:  # a server from before tail (newuser35 N2): `--tail` reads the log through
            raise ValidationError("unknown query argument 'tail'", field="tail")
        end = min(len(self.data), offset + min(limit or self.size, self.size))
        while end < len(self.data) and self.data[end] & 0xC0 == 0x80:  # never split a character
            end -= 1
        return {"text": self.data[offset:end].decode(), "next_offset": end, "notes": []}

    def job(self, job_id: str) -> dict[str, Any]:
        return {"id": job_id, "state": "succeeded", "kind": "batch"}


def _run(client: _Client, **options: Any) -> str:
    out = io.StringIO()
    args = argparse.Namespace(**{"job_id": "j-tq", "follow": False, "raw": False, "tail": None, **options})
    assert logs(client, args, Streams(out=out, err=io.StringIO(), stdin=io.StringIO())) == 0
    return out.getvalue()


@pytest.mark.parametrize("size", [1 << 20, 37], ids=["one slice", "slices of 37 bytes"])
def test_newuser27_n4_logs_shows_a_progress_bar_as_its_last_state(size: int) -> None:
    shown = _run(_Client(LOG, size))
    assert shown == ("setup ok\n20/20 [####################]\nepoch 1 loss 0.5\n"
                     "100%|██████████| 20/20 [00:05<00:09, 2.00it/s]\ndone\n"), shown


def test_newuser27_n4_logs_tail_counts_a_rewritten_line_once() -> None:
    assert _run(_Client(LOG, 1 << 20), tail=2) == "100%|██████████| 20/20 [00:05<00:09, 2.00it/s]\ndone\n"
    assert _run(_Client("\r1/3\r2/3\r3/3\n", 1 << 20), tail=2) == "3/3\n"  # was 4 lines: an empty one, then 1/3 …
    raw = _run(_Client(BAR, 1 << 20), tail=1, raw=True)
    assert raw == BAR  # --raw: the bytes as written (a terminal then shows the bar in place)


@pytest.mark.parametrize("text, want", [
    pytest.param("\r1/20 [#   ]\r2/20 [##  ]\r20/20 [####]\n", "20/20 [####]\n", id="a bar: its last state"),
    pytest.param("Epoch 1:  50%|#  | 1/2\rEpoch 1: 100%|## | 2/2\n", "Epoch 1: 100%|## | 2/2\n",
                 id="a bar with words: the same words, its last state"),
    pytest.param("rm -rf ~\r        \rall good\n", "rm -rf ~\nall good\n", id="words are never hidden"),
    pytest.param("secret\rcover\n", "secret\ncover\n", id="red team 6 holds: a line of words stays"),
])
def test_newuser27_n4_printable_log_keeps_a_bars_last_state_and_every_line_of_words(text: str, want: str) -> None:
    assert printable_log(text, line_start=True) == want


def test_newuser27_n4_a_followed_chunk_that_goes_on_rewriting_starts_a_line_of_its_own() -> None:
    assert printable_log("\r3/20\r4/20") == "\n4/20"  # after "2/20" printed from the chunk before
