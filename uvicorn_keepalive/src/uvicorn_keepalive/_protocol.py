"""uvicorn's HTTP protocols applying the settings to every TCP connection they accept."""

from __future__ import annotations

import ast
import asyncio
import functools
from typing import TYPE_CHECKING, ClassVar, Literal, overload

from uvicorn.config import HTTP_PROTOCOLS
from uvicorn.importer import import_from_string
from uvicorn.protocols.http.h11_impl import H11Protocol as _UvicornH11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from uvicorn_keepalive._settings import Fields, KeepaliveSettings, environment, logger, resolve
from uvicorn_keepalive._socket import Plan, apply, is_tcp, plan

if TYPE_CHECKING:
    from typing_extensions import Unpack

# uvicorn's STARTUP_FAILURE and gunicorn's WORKER_BOOT_ERROR: both stop on it, not respawn.
STARTUP_FAILURE = 3
Given = KeepaliveSettings | None  # protocol()'s positional settings, as KeepaliveSettings says
Http = str | type[asyncio.Protocol]  # what uvicorn.Config takes as http=


class _Keepalive(asyncio.Protocol):
    keepalive: ClassVar[KeepaliveSettings]
    _plan: ClassVar[Plan]
    _announced: ClassVar[bool]

    @classmethod
    def _use(cls, settings: KeepaliveSettings) -> None:
        cls.keepalive, cls._plan, cls._announced = settings, plan(settings), False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Apply the settings to the transport's TCP socket, then let uvicorn proceed."""
        sock = transport.get_extra_info("socket")
        if sock is not None and is_tcp(transport.get_extra_info("sockname")):
            try:
                apply(sock, self._plan)
            except Exception:  # never let the options break a connection
                logger.exception("TCP keepalive: unexpected failure, connection served without")
            if not self._announced:  # said here, where logging is set up, and set once
                logger.info("TCP keepalive: %s", self.keepalive)
                type(self)._announced = True
        super().connection_made(transport)


class Protocol(_Keepalive, HttpToolsProtocol):
    """uvicorn's httptools protocol applying the environment's settings to each TCP connection.

    They are read at the first lookup of ``uvicorn_keepalive.Protocol`` (``--http``'s, at
    startup): a bad variable is logged at ERROR and ends the process with status 3.
    """


class H11Protocol(_Keepalive, _UvicornH11Protocol):
    """uvicorn's h11 protocol applying the settings: the same as `Protocol` otherwise."""


#: The public classes by the uvicorn class each extends, and by the names they pickle by.
EXTENDING = {cls.__bases__[-1]: cls for cls in (Protocol, H11Protocol)}
PUBLIC = {cls.__name__: cls for cls in EXTENDING.values()}
Protocol.__module__ = H11Protocol.__module__ = "uvicorn_keepalive"


@functools.cache
def _subclass(base: type[_Keepalive], settings: KeepaliveSettings) -> type[_Keepalive]:
    # Named after its settings, and pickled by reference to that name, which `named` reads.
    namespace = {"__doc__": base.__doc__, "__module__": "uvicorn_keepalive"}
    cls: type[_Keepalive] = type(f"{base.__name__}({settings})", (base,), namespace)
    cls._use(settings)
    return cls


def named(name: str) -> type[_Keepalive]:
    # A package attribute: a public class, given the environment's settings at its first
    # lookup, or a class of protocol() rebuilt from its name (pickle's lookup in a worker).
    base, parenthesis, fields = name.partition("(")
    if base not in PUBLIC or (parenthesis and not fields.endswith(")")):
        raise AttributeError(f"module 'uvicorn_keepalive' has no attribute {name!r}")
    if parenthesis:
        pairs = (field.split("=") for field in fields[:-1].split(", "))
        settings = KeepaliveSettings(**{k: ast.literal_eval(v) for k, v in pairs})
        return _subclass(PUBLIC[base], settings)
    if "keepalive" not in vars(PUBLIC[base]):
        try:
            PUBLIC[base]._use(environment())
        except ValueError as exc:
            logger.error("%s", exc)
            raise SystemExit(STARTUP_FAILURE) from None
    return PUBLIC[base]


@overload
def protocol(
    settings: Given = ..., /, *, http: Literal["h11"], **fields: Unpack[Fields]
) -> type[H11Protocol]: ...
@overload
def protocol(
    settings: Given = ..., /, *, http: Literal["httptools"] = ..., **fields: Unpack[Fields]
) -> type[Protocol]: ...
@overload
def protocol(
    settings: Given = ..., /, *, http: Http, **fields: Unpack[Fields]
) -> type[asyncio.Protocol] | str: ...
def protocol(
    settings: Given = None, /, *, http: Http = "httptools", **fields: Unpack[Fields]
) -> type[asyncio.Protocol] | str:
    """The protocol class for ``uvicorn.Config(http=...)``: ``http`` with these settings.

    The settings (as `KeepaliveSettings` says) are checked first: a bad one raises ValueError
    or TypeError naming it, never SystemExit. ``http`` "httptools", "h11", "auto" (httptools
    where it imports, by uvicorn's table) or uvicorn's class of one gives a subclass of
    `Protocol` or `H11Protocol` with the settings, one per settings, pickled by its name (it
    holds them); any other ``http`` is returned as given, said at WARNING unless it is a class
    of this package or an import string.
    """
    settings = resolve(settings, fields)
    if isinstance(http, type) and issubclass(http, _Keepalive):
        return http
    try:  # a name by uvicorn's own table, whose "auto" is httptools where it imports, else h11
        served_by = import_from_string(HTTP_PROTOCOLS[http]) if isinstance(http, str) else http
    except (KeyError, ImportError):  # an import string, or a protocol that does not import
        served_by = None
    if served_by in EXTENDING:
        return _subclass(EXTENDING[served_by], settings)
    if not isinstance(http, str) or http in HTTP_PROTOCOLS:
        logger.warning("TCP keepalive: http=%r is neither httptools nor h11: served without", http)
    return http
