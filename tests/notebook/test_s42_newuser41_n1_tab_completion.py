"""newuser41 n1: Tab after ``%gpu`` / ``%schedule`` / ``%%schedule`` offers the magics' own words.

Before: ``%gpu re<Tab>`` offered ``%recall, %rehashx, …`` and ``%schedule logs j-<Tab>`` Python's builtins.
The rule is checked in-process (:class:`~jupyter_sched.magics.completion.MagicCompleter` on its own), then once
end to end: one real kernel of a real server answering ``complete_request`` as JupyterLab sends it, with the
server's address first a socket that never answers (down) and then the server (up).
"""

from __future__ import annotations

import shlex
import socket
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from IPython.core.completer import CompletionContext
from nb_harness import TOKEN, Kernel, wait_for

from jupyter_sched.client import AsyncSchedClient, Connection, SchedClient
from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.completion import MagicCompleter
from jupyter_sched.magics.parsing import (
    GPU_SUBCOMMANDS,
    SCHEDULE_SUBCOMMANDS,
    command_parser,
    parse_gpu_line,
    parse_schedule_line,
)

StartKernel = Callable[..., Awaitable[Kernel]]


@dataclass(frozen=True)
class Case:
    line: str
    want_words: list[str] | None  # None: not these magics' place (the other matchers answer)
    want_fragment: str = ""


CASES = {
    "gpu subcommands, not IPython's magics": Case("%gpu re", ["request", "release"], "re"),
    "schedule subcommands": Case("%schedule ca", ["cancel"], "ca"),
    "an option of %gpu request, from its parser": Case("%gpu request 1 --mo", ["--model"], "--mo"),
    "%gpu N is %gpu request N": Case("%gpu 2 --no", ["--no-preempt", "--no-wait"], "--no"),
    "queue's options": Case("%schedule queue --", ["--all", "--limit", "--mine", "--summary"], "--"),
    "the cell header's options": Case("%%schedule --pri", ["--priority"], "--pri"),
    "priority classes": Case("%%schedule --gpus 1 --priority h", ["high"], "h"),
    "a parser's choices": Case("%schedule cancel --mine --state ", ["pending", "running"]),
    "job states after =": Case("%schedule jobs --state=ru", ["running"], "ru"),
    "a refused option is not offered": Case("%schedule run train.py --dry", ["--dry"], "--dry"),
    "a free value: the word as typed, no Python names": Case("%schedule run --name ab", ["ab"], "ab"),
    "an unknown subcommand: nothing else either": Case("%gpu zz", ["zz"], "zz"),
    "the script is the files' place": Case("%schedule run --gpus 1 tr", None),
    "-o FILE is the files' place too": Case("%schedule logs j-1 --notebook -o ru", None),
    "so is --workdir": Case("%%schedule --workdir no", None),
    "after a comment: not ours": Case("%gpu request 1  # re", None),
    "the magic's own name: IPython's": Case("%gp", None),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_newuser41_n1_the_magics_words_are_offered_without_asking_the_server(case: Case) -> None:
    """IPython's matcher call as its completer makes it; a place with nothing to offer answers the word as typed,
    alone (IPython silences the other matchers only for a matcher that has a completion)."""
    asked: list[str] = []
    completer = MagicCompleter(connect=lambda: asked.append("connect"))  # words of the magics: no server
    result = completer.matcher(CompletionContext(token="", full_text=case.line, cursor_position=len(case.line),
                                                 cursor_line=0, limit=None))
    words = [c.text for c in result["completions"]]
    if case.want_words is None:
        assert (words, result["suppress"]) == ([], False)
    else:
        assert (words, result["matched_fragment"], result["suppress"]) == (case.want_words, case.want_fragment, True)
    assert asked == []


def test_newuser41_n1_a_cell_header_completes_on_its_first_line_only() -> None:
    completer = MagicCompleter(connect=lambda: None)
    assert completer.complete("%%schedule --no-p", 17, first=True) == ("--no-p", ["--no-preempt"])
    assert completer.complete("%%schedule --no-p", 17, first=False) is None


def _every_option() -> Iterator[tuple[str, str, str]]:
    places = [("%gpu", head) for head in GPU_SUBCOMMANDS] + [("%schedule", h) for h in SCHEDULE_SUBCOMMANDS]
    for magic, head in [*places, ("%%schedule", "")]:
        line = f"{magic} {head} --".replace("  ", " ")
        found = MagicCompleter(connect=lambda: None).complete(line, len(line))
        assert found is not None, line
        for option in found[1]:
            yield magic, head, option


@pytest.mark.parametrize(("magic", "head", "option"), list(_every_option()))
def test_newuser41_n1_every_option_offered_is_one_the_magic_reads(magic: str, head: str, option: str) -> None:
    """Each option offered, with the first value offered for it (or ``1``), is read by the magic's parser: a
    refusal may name its value or a missing word, never an unknown argument."""
    parser = command_parser(magic, head)
    assert parser is not None
    action = next(a for a in parser._actions if option in a.option_strings)
    before = f"{head} {'train.py ' if head in ('run', 'serve') else 'a.ipynb ' if head == 'notebook' else ''}" \
             f"{'j-1 ' if head in ('logs', 'wait', 'hold', 'release', 'update', 'top') else ''}{option}"
    line = f"{magic} {before} ".replace("  ", " ")
    offered = MagicCompleter(connect=lambda: None).complete(line, len(line))
    value = (offered[1][:1] if offered else []) or ["1"]
    words = f"{before} {value[0]}" if action.nargs != 0 else before
    try:
        (parse_gpu_line if magic == "%gpu" else parse_schedule_line)(words, **({"cell": True} if head == "" else {}))
    except ValidationError as err:  # a missing --port, an id-less cancel --state: never an unknown argument
        assert "unknown argument" not in err.message and err.field != "subcommand", err.message


def test_newuser41_n1_ids_asked_once_of_the_callers_own_jobs_each_place_its_own() -> None:
    """At the wire boundary (httpx.MockTransport speaking the jobs route's JSON: another user's row can only come
    from a server that is wrong, which the real one is not): one ``GET jobs`` without ``all``/``user``, a row
    marked ``mine: false`` never offered, open jobs to cancel, held ones to release, any for logs."""
    sent: list[httpx.Request] = []
    rows = [{"id": "j-run1", "name": "train", "state": "running", "mine": True},
            {"id": "j-held", "name": "later run", "state": "pending", "held": True, "mine": True},
            {"id": "j-done", "name": "train", "state": "succeeded", "mine": True},
            {"id": "j-bobs", "name": "bobs", "state": "running", "mine": False}]

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        if request.url.path.endswith("/inventory"):
            return httpx.Response(200, json={"gpus": [{"model": "NVIDIA A100-SXM4-80GB"}, {"model": "H100"}]})
        return httpx.Response(200, json={"jobs": rows})

    client = SchedClient(Connection("http://127.0.0.1:20901/", "t"), transport=httpx.MockTransport(answer))
    completer = MagicCompleter(connect=lambda: client)
    assert completer.complete("%schedule logs ", 15) == ("", ["j-run1", "train", "j-held", "'later run'", "j-done"])
    assert completer.complete("%schedule cancel j-", 19) == ("j-", ["j-run1", "j-held"])
    assert completer.complete("%schedule release ", 18) == ("", ["j-held", "'later run'"])
    assert completer.complete("%schedule release la", 20) == ("la", ["'later run'"])  # the name as typed unquoted
    assert completer.complete("%schedule cancel j-run1 j-", 26) == ("j-", ["j-held"])  # not twice
    assert len(sent) == 1, sent  # kept for the next Tabs
    assert sent[0].url.path == "/api/sched/jobs" and not {"all", "user"} & set(sent[0].url.params), sent[0].url
    # --model as the magic checks it: a part of a model, any case; the last of a comma list
    assert completer.complete("%gpu request --model a100", 25) == ("a100", ["'NVIDIA A100-SXM4-80GB'"])
    assert completer.complete("%%schedule --model=H100,sxm", 27) == ("sxm", ["'NVIDIA A100-SXM4-80GB'"])
    assert [r.url.path for r in sent[1:]] == ["/api/sched/inventory"]


@pytest.fixture
def blackhole() -> Iterator[socket.socket]:
    """A listening socket nobody accepts on: a connection is taken, no answer ever comes (a hung server)."""
    from tests import ports

    sock = socket.socket()
    sock.bind(("127.0.0.1", ports.free_port()))
    sock.listen(8)
    sock.setblocking(False)
    yield sock
    sock.close()


def _connections(sock: socket.socket) -> int:
    taken = 0
    while True:
        try:
            conn, _ = sock.accept()
        except BlockingIOError:
            return taken
        conn.close()
        taken += 1


async def _complete(kernel: Kernel, code: str) -> dict[str, Any]:
    """``complete_request`` as JupyterLab sends it: the cell's text and the cursor at its end."""
    reply = await kernel.client.complete(code, len(code), reply=True, timeout=30)
    content: dict[str, Any] = reply["content"]
    assert content["status"] == "ok", content
    return content


@pytest.mark.slow
async def test_newuser41_n1_a_real_kernel_completes_the_magics_with_the_server_down_and_up(
        start_kernel: StartKernel, sched_app: Any, jp_http_port: int, blackhole: socket.socket) -> None:
    kernel = await start_kernel()
    hung = f"http://127.0.0.1:{blackhole.getsockname()[1]}/"
    ran = await kernel.run(f"import os; served = os.environ['JUPYTER_SCHED_URL']; os.environ['JUPYTER_SCHED_URL'] = {hung!r}")
    assert ran.error is None, ran.text

    # the magics' own words: no request at all (and none for a kernel that completes other code)
    assert (await _complete(kernel, "pri"))["matches"][:1] == ["print"]
    got = await _complete(kernel, "x = 1\n%gpu re")
    assert (got["matches"], got["cursor_start"]) == (["request", "release"], len("x = 1\n%gpu "))
    got = await _complete(kernel, "%schedule logs --")
    assert got["matches"] == ["--follow", "--notebook", "--output", "--tail"], got
    assert got["cursor_start"] == len("%schedule logs ")
    assert _connections(blackhole) == 0

    # server hung: asked once, answered without it, nothing of Python's
    got = await _complete(kernel, "%schedule logs j-")
    assert got["matches"] == ["j-"] and got["cursor_start"] == len("%schedule logs "), got
    got = await _complete(kernel, "%gpu request --model ")
    assert got["matches"] == [""], got
    assert _connections(blackhole) >= 1

    # server up: the caller's job ids and names, the inventory's models
    api = AsyncSchedClient(Connection(f"http://localhost:{jp_http_port}/", TOKEN))
    try:
        job = await api.submit({"name": "tab-train", "gpus": 0, "command": ["sleep", "600"]})
        inventory = await api.inventory()
    finally:
        await api.aclose()
    ran = await kernel.run("os.environ['JUPYTER_SCHED_URL'] = served")
    assert ran.error is None, ran.text

    async def offered() -> list[str]:
        return list((await _complete(kernel, "%schedule cancel "))["matches"])

    matches = await wait_for(lambda: offered(), timeout_s=30)  # the hung ask may still be in flight at first
    assert matches[:2] == [job["id"], "tab-train"], matches
    got = await _complete(kernel, "%schedule logs tab")
    assert (got["matches"], got["cursor_start"]) == (["tab-train"], len("%schedule logs ")), got
    models = [shlex.quote(m) for m in sorted({g["model"] for g in inventory["gpus"]})]
    got = await _complete(kernel, "%gpu request 1 --model ")
    assert models and got["matches"] == models, (got, models)
    ran = await kernel.run(f"%schedule cancel {job['id']}")
    assert ran.error is None, ran.text
