"""TCP keepalive on every connection uvicorn accepts.

``uvicorn --http uvicorn_keepalive:Protocol app:app`` turns on SO_KEEPALIVE with an
idle time, probe interval and probe count on each accepted TCP connection, so that
NAT gateways and load balancers never see it idle for long and a vanished client is
detected. See the README for the exact behaviour.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from uvicorn_keepalive._settings import KeepaliveSettings
from uvicorn_keepalive._socket import set_keepalive

if TYPE_CHECKING:
    from uvicorn_keepalive._protocol import H11Protocol, Protocol, protocol

__all__ = [
    "H11Protocol",
    "KeepaliveSettings",
    "Protocol",
    "__version__",
    "protocol",
    "set_keepalive",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # The protocol classes are imported on first use: a client that only wants
    # set_keepalive() does not import uvicorn's protocols. Looking up Protocol or
    # H11Protocol is also uvicorn's startup step (--http uvicorn_keepalive:Protocol):
    # the UVICORN_KEEPALIVE_* variables are validated there, before any connection.
    if name in ("Protocol", "H11Protocol"):
        from uvicorn_keepalive._protocol import environment_class  # noqa: PLC0415

        cls = environment_class(name)
        globals()[name] = cls
        return cls
    if name == "protocol":
        from uvicorn_keepalive._protocol import protocol  # noqa: PLC0415

        globals()[name] = protocol
        return protocol
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
