"""uvicorn's HTTP protocols applying the settings to every TCP connection they accept."""

from __future__ import annotations

import ast
import asyncio
import functools
from typing import ClassVar, Literal, cast, overload

from uvicorn.protocols.http.h11_impl import H11Protocol as _UvicornH11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from uvicorn_keepalive._settings import KeepaliveSettings, announce, from_arguments, logger
from uvicorn_keepalive._socket import Plan, apply, is_tcp, plan

# uvicorn's STARTUP_FAILURE (in uvicorn.main before 0.36, uvicorn.config since) and
# gunicorn's WORKER_BOOT_ERROR: both stop on it instead of respawning the worker.
STARTUP_FAILURE = 3


class _Keepalive(asyncio.Protocol):
    keepalive: ClassVar[KeepaliveSettings]
    _plan: ClassVar[Plan]
    _announced: ClassVar[bool] = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Apply the settings to the transport's TCP socket, then let uvicorn proceed."""
        sock = transport.get_extra_info("socket")
        # The transport has the address at hand; a Unix socket's is a path.
        if sock is not None and is_tcp(transport.get_extra_info("sockname")):
            try:
                apply(sock, self._plan)
            except Exception:  # never let the options break a connection
                logger.exception("TCP keepalive: unexpected failure, connection served without")
            # The class may have been made before logging was set up; by the first connection
            # it is, and whether INFO shows is settled: one try, not one per connection.
            # Written only once: assigning a class attribute invalidates the interpreter's
            # attribute caches of the class.
            if not self._announced:
                announce(self.keepalive)
                type(self)._announced = True
        super().connection_made(transport)


class Protocol(_Keepalive, HttpToolsProtocol):
    """uvicorn's httptools protocol applying the settings to every TCP connection.

    ``uvicorn --http uvicorn_keepalive:Protocol app:app``, or ``uvicorn.run(app,
    http=uvicorn_keepalive.Protocol)``. The settings come from the ``UVICORN_KEEPALIVE_*``
    variables, read when the package is imported (by uvicorn at startup, in each worker); a
    bad one is logged at ERROR and ends the process with status 3, on which uvicorn and
    gunicorn stop. `protocol` chooses the settings in Python.
    """


class H11Protocol(_Keepalive, _UvicornH11Protocol):
    """uvicorn's h11 protocol applying the settings: the same as `Protocol` otherwise."""


_BASES: dict[str, type[_Keepalive]] = {"httptools": Protocol, "h11": H11Protocol}
# Importing this package is the only code of it that uvicorn runs before it accepts
# connections (--http uvicorn_keepalive:Protocol), in each worker, and gunicorn's arbiter
# runs before it forks: a bad variable ends the process there, as uvicorn does for a bad
# option, with the status on which uvicorn's supervisor and gunicorn stop.
try:
    _ENVIRONMENT = KeepaliveSettings.from_environment()
except ValueError as exc:
    logger.error("%s", exc)
    raise SystemExit(STARTUP_FAILURE) from None
for _cls in _BASES.values():
    _cls.__module__ = "uvicorn_keepalive"  # documented and pickled under its public name
    _cls.keepalive, _cls._plan = _ENVIRONMENT, plan(_ENVIRONMENT)
    _cls._announced = announce(_ENVIRONMENT) if _cls is Protocol else Protocol._announced


@functools.cache
def _subclass(http: str, settings: KeepaliveSettings) -> type[_Keepalive]:
    base = _BASES[http]
    fields = ", ".join(f"{k}={v}" for k, v in vars(settings).items() if v is not None)
    name = f"{base.__name__}({fields})"
    namespace = {"__module__": __name__, "__qualname__": name, "__doc__": base.__doc__}
    cls = cast("type[_Keepalive]", type(name, (base,), namespace))
    cls.keepalive, cls._plan, cls._announced = settings, plan(settings), announce(settings)
    return cls


def __getattr__(name: str) -> type[_Keepalive]:
    # Unpickling a class of protocol() in a worker that uvicorn spawns: pickle refers to it
    # by this module and its name, which holds its settings.
    base, _, fields = name.partition("(")
    http = {"Protocol": "httptools", "H11Protocol": "h11"}.get(base)
    if http is None or not fields.endswith(")"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    pairs = (field.split("=") for field in fields[:-1].split(", "))
    return _subclass(http, KeepaliveSettings(**{k: ast.literal_eval(v) for k, v in pairs}))


@overload
def protocol(
    idle: int | None = ...,
    interval: int | None = ...,
    count: int | None = ...,
    *,
    user_timeout: int | None = ...,
    nodelay: bool | None = ...,
    http: Literal["httptools"] = ...,
) -> type[Protocol]: ...


@overload
def protocol(
    idle: int | None = ...,
    interval: int | None = ...,
    count: int | None = ...,
    *,
    user_timeout: int | None = ...,
    nodelay: bool | None = ...,
    http: Literal["h11"],
) -> type[H11Protocol]: ...


def protocol(
    idle: int | None = None,
    interval: int | None = None,
    count: int | None = None,
    *,
    user_timeout: int | None = None,
    nodelay: bool | None = None,
    http: Literal["httptools", "h11"] = "httptools",
) -> type[Protocol] | type[H11Protocol]:
    """A subclass of `Protocol` (``http="h11"``: of `H11Protocol`) with these settings.

    The settings, and their errors, are those of `KeepaliveSettings.from_environment`; an
    ``http`` other than ``"httptools"`` and ``"h11"`` raises ValueError. The same settings
    give the same class within a process; it pickles by reference to its name, which holds
    the settings, so uvicorn's ``workers > 1`` rebuilds it in each worker. Pass it as
    ``http=`` to ``uvicorn.run()`` or ``uvicorn.Config``.
    """
    if http not in _BASES:
        raise ValueError(f'http must be "httptools" or "h11", got {http!r}')
    settings = from_arguments(idle, interval, count, user_timeout, nodelay)
    return _subclass(http, settings)  # type: ignore[return-value]
