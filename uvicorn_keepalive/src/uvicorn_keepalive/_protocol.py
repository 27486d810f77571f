"""uvicorn's HTTP protocols with TCP keepalive on every connection they accept."""

from __future__ import annotations

import asyncio
import copyreg
import functools
from collections.abc import Callable
from typing import Any, ClassVar, cast

from uvicorn.protocols.http.h11_impl import H11Protocol as _UvicornH11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from uvicorn_keepalive import _socket
from uvicorn_keepalive._log import logger
from uvicorn_keepalive._settings import KeepaliveSettings

# The exit status of a server that failed to start: uvicorn's STARTUP_FAILURE (in
# uvicorn.main before 0.36, uvicorn.config since) and gunicorn's WORKER_BOOT_ERROR,
# on which both stop instead of respawning the worker.
STARTUP_FAILURE = 3


class _KeepaliveProtocolType(type):
    """Metaclass of the keepalive protocols.

    It exists so that ``copyreg`` can pickle the classes: a class made by
    ``protocol()`` has no importable name, and uvicorn pickles its ``Config``,
    ``http`` included, into every worker it spawns.
    """


class _Keepalive(asyncio.Protocol, metaclass=_KeepaliveProtocolType):
    """Turns TCP keepalive on in ``connection_made``, before anything else runs."""

    #: The settings applied to every accepted connection; ``None`` on the two
    #: public classes until they are looked up on the package, which reads them
    #: from the ``UVICORN_KEEPALIVE_*`` environment variables.
    keepalive: ClassVar[KeepaliveSettings | None] = None
    _keepalive_steps: ClassVar[_socket.Steps | None] = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Apply keepalive to the transport's TCP socket, then let uvicorn proceed."""
        sock = transport.get_extra_info("socket")
        if sock is not None:
            steps = type(self)._keepalive_steps
            if steps is None:
                steps = _environment_steps_or_none()
            if steps is not None:
                try:
                    # The transport's address is cached (asyncio) or one call (uvloop), where
                    # sock.family builds an enum member (~1.5 us): a (host, port, ...) tuple
                    # is TCP, a path is a Unix socket.
                    sockname = transport.get_extra_info("sockname")
                    if (
                        isinstance(sockname, tuple)
                        if sockname is not None
                        else _socket.is_tcp(sock)
                    ):
                        _socket.configure_connection(sock, steps)
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


_BARE: dict[str, type[_Keepalive]] = {"Protocol": Protocol, "H11Protocol": H11Protocol}
_BASES: dict[str, type[_Keepalive]] = {"httptools": Protocol, "h11": H11Protocol}

for _cls in _BARE.values():
    # Shown and documented as uvicorn_keepalive.Protocol, its public name.
    _cls.__module__ = "uvicorn_keepalive"


def _read_environment() -> KeepaliveSettings:
    """Read the environment once per process into the two public classes.

    Raises:
        ValueError: A ``UVICORN_KEEPALIVE_*`` variable is invalid (named).
    """
    settings = Protocol.keepalive
    if settings is None:
        settings = KeepaliveSettings.from_environment()
        steps = _socket.plan(settings)
        for cls in _BARE.values():
            cls.keepalive = settings
            cls._keepalive_steps = steps
    return settings


def environment_class(name: str) -> type[_Keepalive]:
    """Return the public class ``name`` with its settings read from the environment.

    This is the startup hook: uvicorn looks the class up (``--http
    uvicorn_keepalive:Protocol``) in every worker before it accepts a connection.
    A bad variable is logged at ERROR and ends the process with uvicorn's
    STARTUP_FAILURE status (3), on which uvicorn's supervisor and gunicorn stop
    instead of respawning the worker.
    """
    try:
        _read_environment()
    except ValueError as exc:
        logger.error("%s", exc)
        raise SystemExit(STARTUP_FAILURE) from None
    return _BARE[name]


_environment_failed = False


def _environment_steps_or_none() -> _socket.Steps | None:
    # Only reached by a subclass imported from this private module without the
    # startup hook; a bad variable can no longer stop startup, so it disables
    # keepalive for this process instead of failing every connection.
    global _environment_failed  # noqa: PLW0603 - a once-per-process flag
    if _environment_failed:
        return None
    try:
        _read_environment()
    except ValueError as exc:
        _environment_failed = True
        logger.error("%s; TCP keepalive stays off in this process", exc)
        return None
    return Protocol._keepalive_steps


@functools.cache
def configured_class(http: str, settings: KeepaliveSettings) -> type[_Keepalive]:
    """The subclass of the ``http`` protocol that applies ``settings``; one per process."""
    base = _BASES[http]
    fields = f"idle={settings.idle}, interval={settings.interval}, count={settings.count}"
    if settings.user_timeout is not None:
        fields += f", user_timeout={settings.user_timeout}"
    namespace: dict[str, Any] = {
        "__module__": "uvicorn_keepalive",
        "__qualname__": f"{base.__name__}({fields})",
        "__doc__": base.__doc__,
        "keepalive": settings,
        "_keepalive_steps": _socket.plan(settings),
        "_keepalive_origin": (http, settings),
    }
    return cast("type[_Keepalive]", _KeepaliveProtocolType(base.__name__, (base,), namespace))


def _reduce_class(cls: _KeepaliveProtocolType) -> str | tuple[Callable[..., Any], tuple[Any, ...]]:
    if cls in _BARE.values():
        return environment_class, (cls.__name__,)
    origin = cls.__dict__.get("_keepalive_origin")
    if origin is not None:
        return configured_class, origin
    # A user's subclass: pickled by reference to its module, as usual.
    return cls.__qualname__


copyreg.pickle(_KeepaliveProtocolType, _reduce_class)
