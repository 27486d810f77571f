"""TCP keepalive and TCP_NODELAY on every connection uvicorn accepts, and for clients."""

from typing import TYPE_CHECKING

from uvicorn_keepalive._protocol import named, protocol
from uvicorn_keepalive._settings import KeepaliveSettings
from uvicorn_keepalive._socket import set_keepalive, socket_factory, socket_options

if TYPE_CHECKING:
    from uvicorn_keepalive._protocol import H11Protocol, Protocol
else:  # the classes are looked up when used: the import reads no variable (`named`)
    __getattr__ = named

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
