"""In-process server fixtures for the authorization matrix: the web tests' real jupyter_server
(pytest-jupyter) with per-user tokens, reused rather than duplicated (see tests/web/conftest.py).

The pytest-jupyter plugin is imported here, in a sub-package, so its autouse fixtures apply to
these tests only (the other reliability tests run servers in subprocesses).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pytest_jupyter.jupyter_server import *  # noqa: E402,F403  (fixtures + async test hooks)

from tests.web.conftest import api, jp_server_config, kernel, sched_app  # noqa: E402,F401  (fixtures reused)
