"""Who is calling: map an authenticated jupyter_server user to a scheduler identity.

Embedded mode (a personal server): whoever authenticates — with the server token, a password
or the login cookie — is the server owner, the OS user running the server. That name is stable
across restarts, unlike jupyter_server's per-start anonymous user name, so jobs submitted
before a restart still belong to their owner afterwards.

With any other IdentityProvider (a hub's, or a test's), the identity is the username it
returns. Hub mode will plug its own resolver in here (one function, one seam).
"""

from __future__ import annotations

import getpass
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Identity", "IdentityResolver", "make_identity_resolver", "server_owner", "uses_builtin_provider"]


@dataclass(frozen=True, slots=True)
class Identity:
    """The scheduler's view of a caller.

    Attributes:
        name: the user name jobs are owned by.
        is_admin: may use admin endpoints and act on other users' jobs.
    """

    name: str
    is_admin: bool


IdentityResolver = Callable[[Any], Identity]
"""``resolver(jupyter_user) -> Identity``; ``jupyter_user`` is ``handler.current_user``."""


def server_owner() -> str:
    """The OS user running this server (``getpass.getuser()``), the embedded-mode owner and admin."""
    return getpass.getuser()


def uses_builtin_provider(identity_provider: Any) -> bool:
    """True when the server authenticates with jupyter_server's own token/password provider."""
    from jupyter_server.auth.identity import IdentityProvider, PasswordIdentityProvider

    return type(identity_provider) in (IdentityProvider, PasswordIdentityProvider)


def make_identity_resolver(
    *, source: str, identity_provider: Any, admin_users: Iterable[str], owner: str | None = None,
) -> IdentityResolver:
    """Build the resolver for this server.

    Args:
        source: ``"owner"``, ``"jupyter_user"`` or ``"auto"`` (see ``SchedApp.identity_source``).
        identity_provider: the server's IdentityProvider instance (decides ``"auto"``).
        admin_users: extra admin names; the owner is always admin.
        owner: the owner's name (default :func:`server_owner`).

    Returns:
        ``resolver(user) -> Identity``.
    """
    owner_name = owner or server_owner()
    admins = frozenset(admin_users) | {owner_name}
    if source == "auto":
        source = "owner" if uses_builtin_provider(identity_provider) else "jupyter_user"

    if source == "owner":
        def resolve_owner(user: Any) -> Identity:
            return Identity(name=owner_name, is_admin=True)
        return resolve_owner

    def resolve_user(user: Any) -> Identity:
        name = str(getattr(user, "username", None) or getattr(user, "name", None) or user)
        return Identity(name=name, is_admin=name in admins)
    return resolve_user
