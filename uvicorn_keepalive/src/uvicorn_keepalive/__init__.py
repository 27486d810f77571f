"""TCP keepalive and TCP_NODELAY on every connection uvicorn accepts, and for clients.

``uvicorn --http uvicorn_keepalive:Protocol app:app``; the README states the exact behaviour.
"""

from typing import TYPE_CHECKING

from uvicorn_keepalive._protocol import BASES, protocol
from uvicorn_keepalive._settings import KeepaliveSettings, environment_or_exit
from uvicorn_keepalive._socket import set_keepalive, socket_factory, socket_options

if TYPE_CHECKING:
    from uvicorn_keepalive._protocol import H11Protocol, Protocol

__all__ = ["H11Protocol", "KeepaliveSettings", "Protocol", "__version__", "protocol",
           "set_keepalive", "socket_factory", "socket_options"]  # fmt: skip
__version__ = "0.1.0.dev0"


if not TYPE_CHECKING:  # type checkers see the classes imported above, and no other name

    def __getattr__(name: str) -> type:
        # The import reads no variable: the public classes do at their first lookup, as
        # uvicorn's --http makes at startup; a bad variable ends the process there.
        if name not in ("Protocol", "H11Protocol"):
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        cls = BASES["h11" if name == "H11Protocol" else "httptools"]
        cls._configure(environment_or_exit())
        globals()[name] = cls  # once per process
        return cls
