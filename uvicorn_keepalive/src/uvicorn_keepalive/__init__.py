"""TCP keepalive and TCP_NODELAY on every connection uvicorn accepts, and for clients.

``uvicorn --http uvicorn_keepalive:Protocol app:app``; the README states the exact behaviour.
"""

from uvicorn_keepalive._client import set_keepalive, socket_factory, socket_options
from uvicorn_keepalive._protocol import H11Protocol, Protocol, protocol
from uvicorn_keepalive._settings import KeepaliveSettings

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
