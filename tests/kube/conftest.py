"""Fixtures: the in-process fake API server and the official client pointed at it.

A real Kubernetes API server cannot run on the development and CI machines (none is
installable, no Docker); see ``fake_apiserver.py`` for what the double implements.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client

from .fake_apiserver import FakeKubernetes


@pytest.fixture
def fake() -> Iterator[FakeKubernetes]:
    server = FakeKubernetes()
    server.start()
    yield server
    server.close()


@pytest.fixture
def api_client(fake: FakeKubernetes) -> Iterator[client.ApiClient]:
    configuration = client.Configuration()
    configuration.host = fake.url  # loopback only
    api = client.ApiClient(configuration)
    yield api
    api.close()
