"""Settings of a user's server in hub mode, the client side of the central service (:mod:`jupyter_sched.hub.forward`)."""

from __future__ import annotations

import os

from traitlets import Bool, Float, Int, List, Unicode, default
from traitlets.config import Configurable

__all__ = ["HubClientConfig"]


class HubClientConfig(Configurable):
    """``c.SchedApp.hub_service_*`` and ``kernel_report_interval_s`` (a part of ``SchedApp``)."""

    hub_service_url = Unicode(
        config=True,
        help="""Hub mode, per-user server side: base URL of the central jupyter_sched service
        (e.g. "http://127.0.0.1:10101/services/jupyter-sched/"). When set, this server runs no
        engine and forwards every api/sched/ call there with the server's hub token
        (see jupyter_sched.hub.forward). Default: $JUPYTER_SCHED_HUB_URL, else "" (embedded mode).""",
    )
    hub_service_token = Unicode(
        config=True,
        help="""Hub mode: the token sent to the central service (identifies this server's owner).
        Default: $JUPYTERHUB_API_TOKEN, the token JupyterHub gives each user server.""",
    )
    hub_service_uids = List(
        Int(),
        config=True,
        help="""Hub mode, per-user server side: uids besides root (and this server's own account) that may
        hold the central service's loopback address. Before sending its token to a loopback
        hub_service_url the server checks who listens there (/proc/net/tcp) and sends nothing to a
        port another account took while the service was down (red team 25, R5). Default: [] (the
        service runs as root).""",
    )
    hub_service_network_trusted = Bool(
        False,
        config=True,
        help="""Hub mode, per-user server side: allow plain http to a hub_service_url that is not a
        loopback address (a cluster network only the hub's pods share). Default False: such a URL
        must be https (certificates verified), else nothing is sent.""",
    )

    hub_service_narrow_token = Bool(
        True,
        config=True,
        help="""Hub mode, per-user server side: send the scheduler a token of the owner whose only scope
        is the scheduler service's, never the server's own token (which opens this server: red team 25,
        R5): $JUPYTER_SCHED_SERVICE_TOKEN, which the hub's pre_spawn_hook
        jupyter_sched.hub.spawn_token.scheduler_token_hook mints at spawn; without it the server asks
        the hub at start (a hub whose "server" role may make tokens), and when the hub gives none,
        sends nothing (said in the log: verify26 V3). False: send the server's own token. Default True.""",
    )

    kernel_report_interval_s = Float(
        30.0,
        config=True,
        help="""Hub mode, per-user server side: seconds between reports of this server's live kernels
        to the central service, which releases leases whose kernel is gone (jupyter_sched.hub.liveness).
        Default 30 s (a gone kernel's GPUs are free within a minute, also after either side
        restarted); 0 disables.""",
    )

    @default("hub_service_url")
    def _default_hub_service_url(self) -> str:
        return os.environ.get("JUPYTER_SCHED_HUB_URL", "")

    @default("hub_service_token")
    def _default_hub_service_token(self) -> str:
        return os.environ.get("JUPYTERHUB_API_TOKEN", "")

