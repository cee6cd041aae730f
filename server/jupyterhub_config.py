"""Snippet for jupyterhub_config.py: run the jupyter_sched engine as a JupyterHub service (hub mode).

`jupyter-sched serve` runs the engine and REST API as a hub service (HubOAuth, PostgreSQL via
``--db-url`` or ``JUPYTER_SCHED_DB_URL``); on Kubernetes it runs as the Deployment of
server/hub-service.yaml and the hub reaches it through its Service URL. Each user's server
extension forwards the REST calls to this one service (``JUPYTER_SCHED_HUB_URL`` below, read by
``c.SchedApp.hub_service_url``).
"""

import os

c = get_config()  # type: ignore[name-defined]  # noqa: F821  (provided by traitlets when loaded)

c.JupyterHub.services = [
    {
        "name": "jupyter-sched",
        # On Kubernetes: the Service of server/hub-service.yaml (the hub does not start it).
        "url": "http://jupyter-sched.jupyter-sched.svc.cluster.local:10101",
        "api_token": os.environ["JUPYTER_SCHED_HUB_TOKEN"],  # same value as secret jupyter-sched-hub/api-token
        # no "oauth_no_confirm": users' servers reach the service with tokens; a browser that opens it is asked
        # first (red38 R5: with it, a page on the hub's origin got a scheduler session in a hidden frame)
        "display": False,
    },
    # Without Kubernetes, let the hub start and supervise it instead of giving "url" alone. As root it
    # runs each job as its owner's OS account (the local executor refuses hub mode otherwise); the
    # job folder and interpreter must be reachable by every account, secrets stay in the environment.
    # Its port is below 1024, which only root may bind: users' servers send it their hub tokens, and
    # while the service is down (a crash, an upgrade) any local account could take an unprivileged port
    # and collect them (red team 25, R5; `jupyter-sched serve` warns about such a port):
    # {"name": "jupyter-sched", "command": ["jupyter-sched", "serve", "--allow-root",
    #      "--SchedApp.log_dir=/var/lib/jupyter_sched/jobs", "--HubSchedApp.job_python=/opt/jobs-venv/bin/python"],
    #  "url": "http://127.0.0.1:1010",
    #  "timeout": 120,
    #  "environment": {"JUPYTER_SCHED_DB_URL": "postgresql+psycopg://sched@/sched?host=/var/run/postgresql"}},
    # "timeout" (JupyterHub >= 6.0): the hub waits that long for the service to answer at its start and EXITS when it
    # does not (its default 30 s; the service's start, imports and store check, took ~40 s on a loaded 2-core host,
    # leaving `jupyter-sched serve` running with no hub).
    # The store over PostgreSQL's Unix socket: a folder only postgres may write, and a socket only the service
    # may connect to (postgresql.conf: listen_addresses = '', unix_socket_group = a group of the service's account,
    # unix_socket_permissions = 0770): any account that reaches it can hold every connection slot before a
    # password is asked, and the service's next reconnect fails (red team 38, R2; docs/admin.md "Database").
    # On 127.0.0.1:5432 (a port any account may bind while PostgreSQL restarts) the service checks who accepted each
    # connection and refuses another account's (red team 31, R3): root, the service's own account and "postgres"
    # are believed, others only when listed in c.SchedApp.db_server_uids.
]
# Users who do not trust each other: each user's server and this service on an origin of its own (JupyterHub's
# security overview; red38 R5). Without it the hub, every server and the service share one origin, and a page a
# user serves from their own server (a kernelspec's resource file is sent as HTML) runs its script as the hub and
# the service for whoever opens it: an admin who opens one acts as a scheduler admin. It needs a wildcard DNS name
# (*.hub.example.org) and TLS certificate; the service's start-up log WARNs "one origin for the hub, …" without it.
# c.JupyterHub.subdomain_host = "https://hub.example.org"
# The hub's own API, which the service asks who each caller is (admin, groups): on a port below 1024 too. On
# 8081 (the default, any account may bind it while the hub restarts) the service and users' servers refuse a
# connection another account accepted (red team 31, R4); a hub that runs as its own account, not root, is
# named to the service with c.HubSchedApp.hub_uids = [<its uid>] (users' servers: JUPYTER_SCHED_HUB_UIDS).
# c.JupyterHub.hub_bind_url = "http://127.0.0.1:1081"

# Local hosts only (the "command" form above: users' servers, kernels and jobs on the GPU host), as root: the
# spawner that fences users' notebook servers, kernels and terminals from the GPUs — each opens only the GPUs of
# its user's granted kernel leases (%gpu request). JupyterHub's stock LocalProcessSpawner leaves them open to
# every GPU, a job's or a lease's, and the service WARNs "user servers are not fenced" at every start.
# On Kubernetes (the "url" form above) it does not apply: it fences processes of this host, not pods.
# c.JupyterHub.spawner_class = "jupyter_sched.hub.fence.FencedLocalProcessSpawner"
# Hub users' jobs run as the OS account of the same name (as either spawner does for their servers); map
# other names in the service's config, e.g. c.HubSchedApp.run_as_accounts = {"alice@example.org": "alice"}.

# User servers forward their api/sched/ calls to the service (the URL includes the service prefix),
# straight to its address: through the proxy (http://127.0.0.1:8000/…) they could not see who holds the
# service's port. Before each request to a loopback address a server checks that root (or a uid of
# c.SchedApp.hub_service_uids) listens there; a non-loopback address must be https unless
# c.SchedApp.hub_service_network_trusted = True (a network only the hub's pods share, e.g. Kubernetes:
# "http://jupyter-sched.jupyter-sched.svc.cluster.local:10101/services/jupyter-sched/").
c.Spawner.environment = {"JUPYTER_SCHED_HUB_URL": "http://127.0.0.1:1010/services/jupyter-sched/"}

# Each user's server gets, from the hub at spawn, $JUPYTER_SCHED_SERVICE_TOKEN: a token of its owner that may
# only call the scheduler (access:services!service=jupyter-sched, 30 days, older ones of that server deleted).
# The server's forwarder and the CLI/client in its terminals and kernels send that one, never the server's own
# token (which opens the server: files, kernels). With a hook of your own:
# c.Spawner.pre_spawn_hook = chain_hooks(my_hook, scheduler_token_hook).
# The token dies with the server: the post_stop_hook deletes it at every stop (a user's, an admin's, an idle
# cull; verify27 V1) — the scheduler refuses it within c.HubIdentityProvider.token_cache_s (30 s). With a hook of your
# own: c.Spawner.post_stop_hook = chain_hooks(my_stop_hook, revoke_token_hook).
from jupyter_sched.hub.spawn_token import revoke_token_hook, scheduler_token_hook  # noqa: E402

c.Spawner.pre_spawn_hook = scheduler_token_hook
c.Spawner.post_stop_hook = revoke_token_hook

c.JupyterHub.load_roles = [
    # Every user (and each user's server, which forwards REST calls) may call the scheduler service.
    # These override JupyterHub's default "user" and "server" roles: their default scopes are kept.
    # The "server" role has NO "tokens" scope: with "tokens!user" any server token (a terminal's
    # $JUPYTERHUB_API_TOKEN, a log, a printed environment) could mint a lasting token with all of its
    # user's scopes (verify26 V3). The scheduler-only token comes from the pre_spawn_hook above.
    {"name": "user", "scopes": ["self", "access:services!service=jupyter-sched"]},
    {"name": "server", "scopes": ["users:activity!user", "access:servers!server",
                                  "access:services!service=jupyter-sched"]},
    # The service reads users and groups (teams) to resolve identities and admins, lists users with
    # active servers and their server names (releasing leases of stopped servers, reporting activity),
    # and posts activity for users with running jobs or live leases (POST /users/{name}/activity)
    # so that the idle culler does not stop their servers; and reads the hub's spawner class (GET info,
    # read:hub) to say at start whether users' servers are fenced from the GPUs.
    {"name": "jupyter-sched", "scopes": ["read:users", "list:users", "read:groups", "read:servers",
                                         "users:activity", "read:hub"],
     "services": ["jupyter-sched"]},
]
