"""The notebook harness tells a kernel whose port was taken at start from any other kernel death.

CI once failed with "Kernel died before replying to kernel_info" (case 015's test): jupyter_client picks a kernel's
ports by binding port 0 and closing, and another process of the parallel run can take one before the kernel binds it.
``Kernel.launch`` starts such a kernel again once; here its shell port is held for both starts, so both die the same
way and the error carries the kernel's own words.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from nb_harness import PORT_TAKEN, Kernel


@pytest.fixture
def held_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


@pytest.fixture
def jp_server_config(held_port: int) -> dict[str, Any]:
    return {"KernelManager": {"shell_port": held_port, "ip": "127.0.0.1", "cache_ports": False}}


async def test_s40_a_kernel_whose_port_is_taken_is_started_again_and_says_why_when_it_dies_twice(
        jp_serverapp: Any) -> None:
    with pytest.raises(RuntimeError) as died:
        await Kernel.launch(jp_serverapp)
    assert "Kernel died before replying to kernel_info" in str(died.value)
    assert PORT_TAKEN in str(died.value)
    assert "(start 2 of 2)" in str(died.value)  # started again once on fresh ports (only the shell port is held)
    assert jp_serverapp.kernel_manager.list_kernel_ids() == []  # both starts shut down
