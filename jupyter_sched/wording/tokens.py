"""Where a token comes from, said for the kind of server that refused one: a Jupyter server's own
token (the URL JupyterLab printed, ``jupyter server list``) or, on a JupyterHub, a token from the
hub's token page. One renderer for the CLI's refused-token line and the REST API's 401/403 hint
(new user 13, N13: a hub user was told to look in "the URL JupyterLab printed", which a hub never
prints)."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["credentials_hint", "hub_token_page", "token_page_for", "token_source", "unset_token"]

_HUB_MARKERS = ("/services/", "/user/")
"""Where a JupyterHub serves its services and its users' servers, below the hub's base URL."""


def hub_token_page(url: str) -> str:
    """``http://hub:8000/hub/token`` for the URL of a JupyterHub's service (``…/services/NAME/``) or of a
    user's server on it (``…/user/NAME/``); "" for any other URL (a Jupyter server of its own)."""
    parts = urlsplit(url)
    at = min((i for marker in _HUB_MARKERS if (i := parts.path.find(marker)) >= 0), default=-1)
    if at < 0:
        return ""
    return f"{parts.scheme}://{parts.netloc}{parts.path[:at]}/hub/token" if parts.netloc else f"{parts.path[:at]}/hub/token"


def token_page_for(url: str, source: str) -> str:
    """:func:`hub_token_page` of ``url``, or ``HUB/hub/token`` for a hub's service found at an address of its own
    (``source``: how the connection was found, ``hub-service``/``hub-user``); "" for a Jupyter server of its own."""
    page = hub_token_page(url)
    return page or ("HUB/hub/token" if source.startswith("hub") else "")


def unset_token(variable: str) -> str:
    """``JUPYTER_SCHED_HUB_URL is set but JUPYTER_SCHED_TOKEN is not``: no token was sent, said by the variable
    that named the server (the CLI's refusal and the Python client's, newuser42 n12)."""
    return f"{variable} is set but JUPYTER_SCHED_TOKEN is not"


def token_source(token_page: str = "") -> str:
    """Where the right token is: ``a token from your hub's token page, http://hub/hub/token`` on a hub
    (``token_page`` set), else the token a Jupyter server prints."""
    if token_page:
        return f"a token from your hub's token page, {token_page}"
    return "the token in the URL JupyterLab printed, or from `jupyter server list`"


def credentials_hint(token_page: str = "") -> str:
    """The hint of a request whose credentials the server refused (401/403 before the scheduler saw it)."""
    if token_page:
        return f"send Authorization: token <token> with {token_source(token_page)}"
    return ("send the server token (Authorization: token <token>) or, from a browser session, "
            "the _xsrf cookie value in the X-XSRFToken header")
