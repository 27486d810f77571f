"""TCP keepalive and TCP_NODELAY on every connection uvicorn accepts, and for clients."""

from typing import TYPE_CHECKING

from uvicorn_keepalive._protocol import PUBLIC, named, protocol
from uvicorn_keepalive._settings import STARTUP_FAILURE, KeepaliveSettings, logger
from uvicorn_keepalive._socket import set_keepalive, socket_factory, socket_options

if TYPE_CHECKING:
    from uvicorn_keepalive._protocol import H11Protocol, Protocol

__all__ = [
    "H11Protocol",
    "KeepaliveSettings",
    "Protocol",
    "__version__",
    "protocol",
    "set_keepalive",
    "socket_factory",
    "socket_options",
]
__version__ = "0.1.0.dev0"


if not TYPE_CHECKING:  # type checkers see the classes imported above, and no other name

    def __getattr__(name: str) -> type:
        # The import reads no variable: the public classes do at their first lookup, which
        # uvicorn's --http makes at startup; a bad variable ends the process there.
        try:
            cls = named(name)
        except ValueError as exc:
            logger.error("%s", exc)
            raise SystemExit(STARTUP_FAILURE) from None
        if name in PUBLIC:
            globals()[name] = cls
        return cls
