"""A user server's token for the scheduler only (red team 25, R5: least privilege).

JupyterHub gives each user server a token (``$JUPYTERHUB_API_TOKEN``) whose scopes open that server
(``access:servers!server=<user>/``: files, kernels — code run as the user). Whatever receives what the
server sends the scheduler must not get that. So at start the server asks the hub for a token of its
owner whose only scope is ``access:services!service=<the scheduler>`` (the hub adds the scopes that
identify the owner) and sends that one instead; it is deleted when the server stops.

Since verify26 V3 the hub mints that token at spawn (:mod:`.spawn_token`) and the ``server`` role holds no
``tokens`` scope (with it any server token could mint a lasting token with all of its user's scopes); this
mint is only for hubs still configured so. A hub that refuses leaves the server sending nothing (:mod:`.forward`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from urllib.parse import quote

import httpx

from .guarded import guarded_transport
from .hub_peer import hub_refusal

__all__ = ["NarrowTokens", "ScopedToken"]

log = logging.getLogger(__name__)

_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class ScopedToken:
    """A token the hub issued: its value and its id (``a123``, for deleting it)."""

    token: str
    id: str


class NarrowTokens:
    """Mint and delete the scheduler-only token of one user server at the hub's REST API.

    Args:
        api_url: the hub's API (``$JUPYTERHUB_API_URL``, e.g. ``http://127.0.0.1:8081/hub/api``).
        user: the server's owner (``$JUPYTERHUB_USER``).
        server_token: the server's own token (``$JUPYTERHUB_API_TOKEN``), which asks.
        service: the scheduler's service name (``jupyter-sched``).
        server_name: the server's name on the hub ("" = default), for the token's note.
        transport: an httpx transport (None = the network, loopback squatters refused).
    """

    def __init__(self, api_url: str, user: str, server_token: str, service: str, *, server_name: str = "",
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.url = api_url.rstrip("/") + f"/users/{quote(user, safe='')}/tokens"
        self.user = user
        self.server_token = server_token
        self.service = service
        self.server_name = server_name
        # the server's own token goes to the hub only: a loopback hub API held by another account is refused
        # before the first byte (red31 R4, :mod:`.hub_peer`)
        self._transport = transport if transport is not None else guarded_transport(hub_refusal)

    @property
    def scopes(self) -> list[str]:
        """What the minted token may do: call the scheduler service, nothing else."""
        return [f"access:services!service={self.service}"]

    def _client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=_TIMEOUT_S, transport=self._transport, trust_env=False,
                                 headers={"Authorization": f"token {self.server_token}"})

    async def mint(self) -> ScopedToken | str:
        """A new token with :attr:`scopes` only, or why the hub gave none (one sentence with the fix)."""
        body = {"scopes": self.scopes,
                "note": f"jupyter-sched: calls of {self.user}'s server {self.server_name or '(default)'}"}
        try:
            async with self._client() as http:
                answer = await http.post(self.url, json=body)
        except httpx.HTTPError as exc:
            return f"the hub did not answer ({type(exc).__name__}: {exc})"
        if answer.status_code == 201:
            try:
                model = answer.json()
                return ScopedToken(token=str(model["token"]), id=str(model["id"]))
            except (ValueError, KeyError, TypeError):
                return "the hub's answer named no token"
        if answer.status_code == 403:
            return "the hub lets this server make no token (403; its \"server\" role rightly has no \"tokens\" scope)"
        return f"the hub answered {answer.status_code}: {answer.text[:200]}"

    async def revoke(self, token: ScopedToken) -> None:
        """Delete ``token`` at the hub (best effort: logged at debug level when it fails)."""
        try:
            async with self._client() as http:
                answer = await http.delete(f"{self.url}/{quote(token.id, safe='')}")
            if answer.status_code not in (204, 404):
                log.debug("jupyter_sched: deleting the scheduler token %s answered %s", token.id, answer.status_code)
        except httpx.HTTPError:
            log.debug("jupyter_sched: deleting the scheduler token %s failed", token.id, exc_info=True)
