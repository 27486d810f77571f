"""uvicorn's HTTP protocols applying the settings to every TCP connection they accept."""

from __future__ import annotations

import ast
import asyncio
import functools
from typing import TYPE_CHECKING, ClassVar, Literal, overload

from uvicorn.protocols.http.h11_impl import H11Protocol as _UvicornH11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from uvicorn_keepalive._settings import Fields, KeepaliveSettings, logger, resolve
from uvicorn_keepalive._socket import Plan, apply, is_tcp, plan

if TYPE_CHECKING:
    from typing_extensions import Unpack


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
            # The one place the settings are said: logging is set up by the first connection.
            # Written once: assigning a class attribute invalidates attribute caches.
            if not self._announced:
                logger.info("%s", self.keepalive)
                type(self)._announced = True
        super().connection_made(transport)


class Protocol(_Keepalive, HttpToolsProtocol):
    """uvicorn's httptools protocol applying the environment's settings to each TCP connection.

    Read at the first lookup of ``uvicorn_keepalive.Protocol`` (``--http``'s, at startup): a
    bad variable is logged at ERROR and ends the process with status 3.
    """


class H11Protocol(_Keepalive, _UvicornH11Protocol):
    """uvicorn's h11 protocol applying the settings: the same as `Protocol` otherwise."""


BASES: dict[str, type[_Keepalive]] = {"httptools": Protocol, "h11": H11Protocol}  # by http=
Protocol.__module__ = H11Protocol.__module__ = "uvicorn_keepalive"  # pickled by public name


@functools.cache
def _subclass(http: str, settings: KeepaliveSettings) -> type[_Keepalive]:
    fields = ", ".join(f"{k}={v}" for k, v in vars(settings).items() if v is not None)
    name, base = f"{BASES[http].__name__}({fields})", BASES[http]
    namespace = {"__module__": __name__, "__qualname__": name, "__doc__": base.__doc__,
                 "_announced": False}  # fmt: skip
    cls: type[_Keepalive] = type(name, (base,), namespace)
    cls.keepalive, cls._plan = settings, plan(settings)
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
    settings: KeepaliveSettings | None = ..., /, *, http: Literal["h11"], **fields: Unpack[Fields]
) -> type[H11Protocol]: ...
@overload
def protocol(
    settings: KeepaliveSettings | None = ..., /, *, http: Literal["httptools"] = ...,
    **fields: Unpack[Fields],
) -> type[Protocol]: ...  # fmt: skip
def protocol(
    settings: KeepaliveSettings | None = None, /, *, http: str = "httptools",
    **fields: Unpack[Fields],
) -> type[_Keepalive]:  # fmt: skip
    """A subclass of `Protocol` (``http="h11"``: of `H11Protocol`) with these settings.

    Settings as `KeepaliveSettings` says. The same settings give the same class; it pickles
    by its name, which holds them, so uvicorn's ``workers > 1`` rebuilds it in each worker.
    """
    if http not in BASES:
        raise ValueError(f'http must be "httptools" or "h11", got {http!r}')
    return _subclass(http, resolve(settings, fields))
