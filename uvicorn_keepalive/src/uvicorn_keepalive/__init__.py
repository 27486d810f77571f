"""TCP keepalive, and TCP_NODELAY, on every connection uvicorn accepts, and for clients.

``uvicorn --http uvicorn_keepalive:Protocol app:app`` turns on SO_KEEPALIVE with an idle
time, probe interval and probe count on each accepted TCP connection, so that NAT gateways
and load balancers never see it idle for long and a vanished peer is detected; the client
side gets the same with `socket_options` (httpx) and `socket_factory` (aiohttp). See the
README for the exact behaviour.
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
__version__ = "0.1.0"
