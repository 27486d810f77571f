"""uvicorn's HTTP protocols with TCP keepalive on every connection they accept."""

from __future__ import annotations

import asyncio
import copyreg
import functools
from collections.abc import Callable
from typing import Any, ClassVar, Literal, cast, overload

from uvicorn.protocols.http.h11_impl import H11Protocol as _UvicornH11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from uvicorn_keepalive import _listener, _socket
from uvicorn_keepalive._log import announce, logger
from uvicorn_keepalive._settings import KeepaliveSettings

# The exit status of a server that failed to start: uvicorn's STARTUP_FAILURE (in
# uvicorn.main before 0.36, uvicorn.config since) and gunicorn's WORKER_BOOT_ERROR,
# on which both stop instead of respawning the worker.
STARTUP_FAILURE = 3


class _KeepaliveProtocolType(type):
    """The metaclass by which ``copyreg`` pickles the classes ``protocol()`` makes.

    They have no importable name, and uvicorn pickles its ``Config`` into each worker.
    """


class _Keepalive(asyncio.Protocol, metaclass=_KeepaliveProtocolType):
    """Turns TCP keepalive on in ``connection_made``, before anything else runs."""

    #: The settings applied to every accepted connection. ``None`` on the two public
    #: classes until they are looked up on the package (uvicorn's startup does), which
    #: reads them from the ``UVICORN_KEEPALIVE_*`` environment variables. A class
    #: without settings applies nothing.
    keepalive: ClassVar[KeepaliveSettings | None] = None
    _keepalive_plan: ClassVar[_socket.Plan | None] = None
    server_state: Any  # uvicorn's ServerState, one per uvicorn.Server

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Apply keepalive to the transport's TCP socket, then let uvicorn proceed."""
        plan = self._keepalive_plan
        sock = transport.get_extra_info("socket")
        # A TCP socket's address is a (host, port, ...) tuple, a Unix socket's a path.
        # The transport has it at hand; sock.family would build an enum member.
        address = transport.get_extra_info("sockname")
        if plan is not None and sock is not None and isinstance(address, tuple):
            try:
                if _listener.keep_alive(self.server_state, address[1], sock, plan):
                    announce(self.keepalive)  # if logging did not show it at startup
            except Exception:  # never let keepalive break a connection
                logger.exception("TCP keepalive: unexpected failure, connection served without")
        super().connection_made(transport)


class Protocol(_Keepalive, HttpToolsProtocol):
    """uvicorn's httptools protocol with TCP keepalive on every TCP connection.

    Use it as ``uvicorn --http uvicorn_keepalive:Protocol app:app`` or
    ``uvicorn.run(app, http=uvicorn_keepalive.Protocol)``. The settings come from
    ``UVICORN_KEEPALIVE_IDLE``, ``_INTERVAL``, ``_COUNT`` and ``_USER_TIMEOUT``
    (defaults 60 s, 10 s, 3 probes, off), read and validated once per process when
    the class is looked up on the ``uvicorn_keepalive`` package, which uvicorn does
    at startup. Use `uvicorn_keepalive.protocol` to set them in Python.
    """


class H11Protocol(_Keepalive, _UvicornH11Protocol):
    """uvicorn's h11 protocol with TCP keepalive on every TCP connection.

    The same as `Protocol` in every other respect:
    ``uvicorn --http uvicorn_keepalive:H11Protocol app:app``.
    """


_PUBLIC: dict[str, type[_Keepalive]] = {"Protocol": Protocol, "H11Protocol": H11Protocol}
_BASES: dict[str, type[_Keepalive]] = {"httptools": Protocol, "h11": H11Protocol}

for _cls in _PUBLIC.values():
    # Shown and documented as uvicorn_keepalive.Protocol, its public name.
    _cls.__module__ = "uvicorn_keepalive"


def environment_class(name: str) -> type[_Keepalive]:
    """Return the public class ``name`` with its settings read from the environment.

    This is the startup hook: uvicorn looks the class up (``--http
    uvicorn_keepalive:Protocol``) in every worker before it accepts a connection.
    The environment is read once per process. A bad variable is logged at ERROR and
    ends the process with uvicorn's STARTUP_FAILURE status (3), on which uvicorn's
    supervisor and gunicorn stop instead of respawning the worker.
    """
    if Protocol.keepalive is None:
        try:
            settings = KeepaliveSettings.from_environment()
        except ValueError as exc:
            logger.error("%s", exc)
            raise SystemExit(STARTUP_FAILURE) from None
        for cls in _PUBLIC.values():
            cls.keepalive = settings
            cls._keepalive_plan = _socket.plan_for(settings)
        announce(settings)
    return _PUBLIC[name]


@functools.cache
def configured_class(http: str, settings: KeepaliveSettings) -> type[_Keepalive]:
    """The subclass of the ``http`` protocol that applies ``settings``; one per process."""
    base = _BASES[http]
    fields = ", ".join(f"{k}={v}" for k, v in vars(settings).items() if v is not None)
    namespace: dict[str, Any] = {
        "__module__": "uvicorn_keepalive",
        "__qualname__": f"{base.__name__}({fields})",
        "__doc__": base.__doc__,
        "keepalive": settings,
        "_keepalive_plan": _socket.plan_for(settings),
        "_keepalive_origin": (http, settings),
    }
    return cast("type[_Keepalive]", _KeepaliveProtocolType(base.__name__, (base,), namespace))


@overload
def protocol(
    idle: int | None = ...,
    interval: int | None = ...,
    count: int | None = ...,
    *,
    user_timeout: int | None = ...,
    http: Literal["httptools"] = ...,
) -> type[Protocol]: ...


@overload
def protocol(
    idle: int | None = ...,
    interval: int | None = ...,
    count: int | None = ...,
    *,
    user_timeout: int | None = ...,
    http: Literal["h11"],
) -> type[H11Protocol]: ...


def protocol(
    idle: int | None = None,
    interval: int | None = None,
    count: int | None = None,
    *,
    user_timeout: int | None = None,
    http: Literal["httptools", "h11"] = "httptools",
) -> type[Protocol] | type[H11Protocol]:
    """Return a protocol class that applies these keepalive settings.

    Pass the result as ``http=`` to ``uvicorn.run()`` or ``uvicorn.Config``; it
    pickles (by its settings), so ``workers > 1`` works too. The class is a
    subclass of `Protocol` (or of `H11Protocol` with
    ``http="h11"``), created once per process for each distinct set of settings:
    calling ``protocol()`` again with the same values returns the same class.

    A setting left at ``None`` is taken from its ``UVICORN_KEEPALIVE_*`` variable
    when that is set, else from its default (60 s, 10 s, 3 probes, off); a setting
    given explicitly always wins.

    Args:
        idle: Seconds without data before the first probe, 1 to 32767.
        interval: Seconds between unanswered probes, 1 to 32767.
        count: Unanswered probes before the connection is reset, 1 to 127.
        user_timeout: Milliseconds sent data may stay unacknowledged before the
            connection is reset (``TCP_USER_TIMEOUT``, RFC 5482, Linux).
        http: ``"httptools"`` (the default) for uvicorn's httptools protocol,
            ``"h11"`` for its h11 protocol.

    Returns:
        The protocol class.

    Raises:
        TypeError: A setting is not an int.
        ValueError: A setting is out of range, or a ``UVICORN_KEEPALIVE_*``
            variable it reads is invalid; the message names the argument or the
            variable. ``http`` is neither ``"httptools"`` nor ``"h11"``.
    """
    if http not in _BASES:
        raise ValueError(f'http must be "httptools" or "h11", got {http!r}')
    given = {"idle": idle, "interval": interval, "count": count, "user_timeout": user_timeout}
    explicit = {name: value for name, value in given.items() if value is not None}
    settings = KeepaliveSettings.from_environment(**explicit)
    announce(settings)
    return configured_class(http, settings)  # type: ignore[return-value]


def _reduce_class(cls: _KeepaliveProtocolType) -> str | tuple[Callable[..., Any], tuple[Any, ...]]:
    if cls in _PUBLIC.values():
        return environment_class, (cls.__name__,)
    origin = cls.__dict__.get("_keepalive_origin")
    if origin is not None:
        return configured_class, origin
    # A user's subclass: pickled by reference to its module, as usual.
    return cls.__qualname__


copyreg.pickle(_KeepaliveProtocolType, _reduce_class)
