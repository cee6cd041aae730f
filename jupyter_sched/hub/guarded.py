"""httpx transports that check each CONNECTED socket before its first byte (verify26 V5, verify27 V2).

:func:`guarded_transport` / :func:`guarded_sync_transport` run ``check(sock)`` on every new TCP connection
(:func:`.peer.connected_refusal`: who accepted it); a refusal closes it and raises :class:`ListenerRefused`
(nothing sent), or ``check`` raises its own error. The forwarder of a user's server (:mod:`.forward`) and the
clients a user runs (:mod:`jupyter_sched.client`: the async client, the event stream) take them. Only httpx and
httpcore: importing this pulls nothing of the server (the clients import it).
"""

from __future__ import annotations

import ssl
import typing
from collections.abc import Callable, Iterable
from typing import Any

import httpcore
import httpx

__all__ = ["Check", "ListenerRefused", "guarded_sync_transport", "guarded_transport"]


class ListenerRefused(httpx.ConnectError):
    """Nothing was sent: the service's address is not the service's (:func:`refusal` says why)."""


Check = Callable[[Any], "str | None"]
"""``check(connected socket) -> why nothing may be sent over it, or None`` (:func:`.peer.connected_refusal`)."""

_SocketOptions = Iterable[tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]]


class _GuardedAsyncBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend that runs ``check`` on each new TCP connection before anything is sent."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend, check: Check) -> None:
        self._inner, self._check = inner, check

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: _SocketOptions | None = None) -> httpcore.AsyncNetworkStream:
        stream = await self._inner.connect_tcp(host, port, timeout=timeout, local_address=local_address,
                                               socket_options=socket_options)
        sock = stream.get_extra_info("socket")
        said = self._check(sock) if hasattr(sock, "getpeername") else None  # asyncio: a TransportSocket
        if said is not None:
            await stream.aclose()
            raise ListenerRefused(said)
        return stream

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: _SocketOptions | None = None) -> httpcore.AsyncNetworkStream:
        return await self._inner.connect_unix_socket(path, timeout=timeout, socket_options=socket_options)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _GuardedSyncBackend(httpcore.NetworkBackend):
    """The sync twin of :class:`_GuardedAsyncBackend` (a server's exit hook)."""

    def __init__(self, inner: httpcore.NetworkBackend, check: Check) -> None:
        self._inner, self._check = inner, check

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: _SocketOptions | None = None) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(host, port, timeout=timeout, local_address=local_address,
                                         socket_options=socket_options)
        sock = stream.get_extra_info("socket")
        said = self._check(sock) if hasattr(sock, "getpeername") else None  # asyncio: a TransportSocket
        if said is not None:
            stream.close()
            raise ListenerRefused(said)
        return stream

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: _SocketOptions | None = None) -> httpcore.NetworkStream:
        return self._inner.connect_unix_socket(path, timeout=timeout, socket_options=socket_options)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _GuardedAsyncTransport(httpx.AsyncHTTPTransport):
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return await super().handle_async_request(request)
        except ListenerRefused as exc:
            exc.request = request
            raise


class _GuardedSyncTransport(httpx.HTTPTransport):
    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return super().handle_request(request)
        except ListenerRefused as exc:
            exc.request = request
            raise


def guarded_transport(check: Check, *, verify: ssl.SSLContext | bool = True) -> httpx.AsyncHTTPTransport:
    """An httpx transport (the network, as httpx's default) whose every new connection passes ``check`` before its
    first byte; a refused one raises :class:`ListenerRefused` (nothing sent)."""
    transport = _GuardedAsyncTransport(verify=verify)
    pool = typing.cast(typing.Any, transport._pool)  # httpcore.AsyncConnectionPool: its connections take this backend
    pool._network_backend = _GuardedAsyncBackend(pool._network_backend, check)
    return transport


def guarded_sync_transport(check: Check, *, verify: ssl.SSLContext | bool = True) -> httpx.HTTPTransport:
    """The sync twin of :func:`guarded_transport`."""
    transport = _GuardedSyncTransport(verify=verify)
    pool = typing.cast(typing.Any, transport._pool)
    pool._network_backend = _GuardedSyncBackend(pool._network_backend, check)
    return transport
