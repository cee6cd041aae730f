"""red38 R5, the rest: ``server/hub-service.yaml`` (the hub-mode service as a Kubernetes Deployment, which the hub does
not start) passed neither ``JUPYTERHUB_HOST`` nor ``JUPYTERHUB_PUBLIC_URL``, so on Kubernetes the service's start-up
origin check (:mod:`jupyter_sched.hub.origins`) always said "origins: not known to this service" at INFO, and an admin
with one origin for the hub, every user's server and the service was never warned. The Deployment now passes both,
documented in its comment and docs/admin.md; the values the file gives are read by the service's own check here.
"""

from __future__ import annotations

import re
from typing import Any

from jupyter_sched.hub.origins import ENV_HOST, ENV_PUBLIC_URL, origin_line

from .test_server_files import DOCS, SERVER


def _scheduler_env() -> dict[str, Any]:
    deployment = next(d for _, d in DOCS if d["kind"] == "Deployment" and d["metadata"]["name"] == "jupyter-sched")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e.get("value") for e in container["env"]}


def test_red38_r5_the_hub_service_deployment_passes_the_hubs_origins() -> None:
    env = _scheduler_env()
    assert isinstance(env.get(ENV_HOST), str) and env[ENV_HOST], env
    assert isinstance(env.get(ENV_PUBLIC_URL), str) and env[ENV_PUBLIC_URL], env
    assert env[ENV_PUBLIC_URL].endswith(env["JUPYTERHUB_SERVICE_PREFIX"]), env  # the service's own path
    values = {k: v for k, v in env.items() if isinstance(v, str)}
    warn, said = origin_line(values)
    assert "not known" not in said, said
    assert warn and said.startswith("one origin for the hub"), said  # the file's values: no subdomain_host


def test_red38_r5_the_subdomain_form_its_comment_gives_reads_as_an_origin_of_its_own() -> None:
    text = (SERVER / "hub-service.yaml").read_text()
    assert "docs/admin.md" in text and ENV_HOST in text
    subdomain = re.search(r"service's URL is\s*#?\s*(https://\S+)", text)
    assert subdomain is not None, "the comment names the service's URL with subdomain_host"
    warn, said = origin_line({**{k: v for k, v in _scheduler_env().items() if isinstance(v, str)},
                              ENV_PUBLIC_URL: subdomain.group(1)})
    assert not warn and said.startswith("origins: this service has an origin of its own"), said
