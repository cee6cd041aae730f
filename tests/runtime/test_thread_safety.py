"""The pure core's memo of pristine ledgers is shared by the engine's thread and the API's threads
(dry runs, never-fits checks): building ledgers from many threads at once must never fail."""

from __future__ import annotations

import sys
import threading

from jupyter_sched.model import GPU, Inventory, Node
from jupyter_sched.placement.state import ClusterState


def inventory(tag: int) -> Inventory:
    nodes = tuple(Node(name=f"n{tag}-{i}", gpus=tuple(GPU(uuid=f"GPU-{tag}-{i}-{k}", index=k, node=f"n{tag}-{i}",
                                                          model="A100", memory_mib=81920) for k in range(8)))
                  for i in range(4))
    return Inventory(nodes=nodes, source="simulated")


def test_ledgers_built_from_eight_threads_over_five_inventories_never_fail() -> None:
    inventories = [inventory(t) for t in range(5)]  # more than the memo keeps: constant eviction
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def work(offset: int) -> None:
        start.wait()
        try:
            for i in range(1000):
                inv = inventories[(i + offset) % len(inventories)]
                state = ClusterState(inv)
                assert state.inventory is inv and len(state.gpu_uuid) == 32
        except BaseException as exc:  # collected: the assertion below names it
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races show at once
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
