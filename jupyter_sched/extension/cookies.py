"""A signed cookie is checked once per request, however often the server's auth asks (issue 17).

jupyter_server's ``IdentityProvider._get_user`` reads the login cookie twice on a request that
carries both the token and the cookie (the CLI, the panel behind a token URL, any ``httpx`` or
``requests`` session: each keeps the cookie the first answer set): once inside
``get_user_token`` (the token says *that* the caller may enter, the cookie *who* they are) and
once more for itself. Each read verifies the cookie's HMAC-SHA256 signature and decodes it again:
12.6 % of the server's GIL samples under ``benchmarks/status_bench.py``'s load went to that auth.

:class:`CookieOnce` keeps what one request's signed-cookie reads returned, for that request only
(a handler object lives for one request): nothing is kept between requests, so a revoked token,
a rotated cookie secret or a cleared cookie takes effect on the very next request, exactly as
without it. The answer for the same cookie name and arguments cannot change within a request:
tornado reads the *request's* cookies, which a ``set_signed_cookie`` on the answer does not touch.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CookieOnce"]


class CookieOnce:
    """Handler mixin: ``get_signed_cookie`` (alias ``get_secure_cookie``) verified once per
    request and argument set (module docstring). Put it before the tornado handler in the bases."""

    _signed_read: dict[tuple[Any, ...], bytes | None] | None = None

    def get_signed_cookie(self, name: str, value: str | None = None, max_age_days: float = 31,
                          min_version: int | None = None) -> bytes | None:
        """As tornado's, verified once per request for the same arguments."""
        key = (name, value, max_age_days, min_version)
        if self._signed_read is None:
            self._signed_read = {}
        elif key in self._signed_read:
            return self._signed_read[key]
        read: bytes | None = super().get_signed_cookie(  # type: ignore[misc]
            name, value, max_age_days=max_age_days, min_version=min_version)
        self._signed_read[key] = read
        return read

    get_secure_cookie = get_signed_cookie
    """Tornado's older name, which jupyter_server's IdentityProvider calls (an alias bound at
    class creation: overriding ``get_signed_cookie`` alone would not reach it)."""
