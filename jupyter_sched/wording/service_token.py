"""What the hub service says when the hub refuses its own API token (hub admin 22's probe).

Pure words: the start-up refusal and the ERROR line name the setting on both sides
(``JUPYTERHUB_API_TOKEN`` of ``jupyter-sched serve``, the service's ``api_token`` in
``jupyterhub_config.py``) and the fix; the users' 503 says the admin must act, not "retry".
"""

from __future__ import annotations

__all__ = ["NO_LONGER_A_USER", "NO_LONGER_A_USER_HINT", "TOKEN_REFUSED_HINT", "TOKEN_REFUSED_MESSAGE",
           "missing_scopes_line", "no_longer_a_user", "token_refused_line", "token_unchecked_line", "token_user_line"]

NO_LONGER_A_USER = " is no longer a user of this hub (the hub has no such user)"
"""The end of the 403 for a token whose user the hub deleted (its answer to the token is cached a while)."""

NO_LONGER_A_USER_HINT = ("not fixed by retrying: nothing was done; a hub admin can add the user back on the hub "
                         "(their held work may then start)")
"""The hint of that 403 (hubadmin25 B21: it read "retry in 5 seconds", and a script retried forever)."""


def no_longer_a_user(name: str) -> str:
    """``h259ff02f is no longer a user of this hub (the hub has no such user)``."""
    return f"{name}{NO_LONGER_A_USER}"

TOKEN_REFUSED_MESSAGE = ("the scheduler service cannot ask the hub about you: the hub refuses the service's own API "
                         "token (a setting of the hub admin's), so nothing that needs your hub groups can be done now")
"""The message of the 503 a user gets while the hub refuses the service's token (reads still work:
the hub checks each user's own token)."""

TOKEN_REFUSED_HINT = ("not fixed by retrying: tell your hub admin — jupyter-sched serve's JUPYTERHUB_API_TOKEN must "
                      "be the api_token of its service in jupyterhub_config.py (c.JupyterHub.services); the "
                      "service's log says so too")
"""The hint of that 503 (instead of "retry in 5 seconds")."""


def token_refused_line(api_url: str, service: str, status: int) -> str:
    """The one line (start-up refusal, ERROR while running) for a hub that answers ``status`` (401/403)
    to ``GET {api_url}/user`` with the service's token; ``service``: its name in the hub's config."""
    return (f"the hub at {api_url} refuses this service's API token ({status} to GET user): JUPYTERHUB_API_TOKEN "
            f"is not the api_token of the service {service!r} in the hub's jupyterhub_config.py "
            "(c.JupyterHub.services) — users' requests that need the hub (submit, leases, their teams) are "
            "answered 503. Fix: give both the same value (e.g. `openssl rand -hex 32`), restart the hub after "
            "changing its config, then restart this service")


def token_unchecked_line(api_url: str, why: str) -> str:
    """The start-up line when the hub did not answer the token check (it may start after the service)."""
    return (f"could not check JUPYTERHUB_API_TOKEN with the hub at {api_url} ({why}); starting anyway — the token "
            "is checked again at every hub poll (c.HubSchedApp.hub_poll_interval_s) and an ERROR says so if the "
            "hub refuses it")


def token_user_line(kind: str, name: str, service: str) -> str:
    """The WARNING when the token is accepted but is not this service's (a user's token, another service's)."""
    return (f"JUPYTERHUB_API_TOKEN is the token of {kind} {name!r}, not of the service {service!r}: the service acts "
            f"with {name!r}'s permissions. Fix: use the api_token of the service {service!r} in jupyterhub_config.py")


def missing_scopes_line(service: str, missing: list[str]) -> str:
    """The WARNING when the service's token lacks scopes the service needs (its role in ``load_roles``)."""
    return (f"this service's hub token lacks the scope(s) {', '.join(missing)}: without them the hub refuses the "
            "service's group lookups (every submit and lease), the hub poll (leases of stopped servers), "
            f"activity reports or offboarding. Fix: give the role of the service {service!r} in "
            "c.JupyterHub.load_roles the scopes read:users, list:users, read:groups, read:servers, users:activity "
            "(server/jupyterhub_config.py) and restart the hub")
