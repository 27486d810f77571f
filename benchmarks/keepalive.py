"""TCP keepalive: stock uvicorn against uvicorn-keepalive, one raw ASGI app answering ``{}``.

``python -m benchmarks.keepalive [--quick]``. wrk with a new connection per request (where
uvicorn-keepalive does its work), on long-lived connections, and on one (the latency of a
request: with ``--workers 2`` on asyncio stock uvicorn leaves TCP_NODELAY off, and a response
written in two parts waits for the client's delayed ACK). The method: docs/benchmarks.md.
"""

import sys
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from benchmarks import summary
from benchmarks.cli import main
from benchmarks.runner import Cell, ServerConfig, run_load

SUITE = "keepalive"
_APP, _KEEPALIVE = "benchmarks.keepalive:app", "uvicorn_keepalive:Protocol"
CONFIGS = tuple(
    ServerConfig(
        name, label, _APP, "/", http, workers, "asyncio" if "asyncio" in name else "uvloop"
    )
    for name, label, http, workers in (
        ("stock", "uvicorn HttpToolsProtocol, 1 worker", "httptools", 1),
        ("keepalive", "uvicorn_keepalive.Protocol, 1 worker", _KEEPALIVE, 1),
        ("stock-b", "uvicorn HttpToolsProtocol, 1 worker, a second process (A/A)", "httptools", 1),
        ("stock-asyncio-w2", "uvicorn HttpToolsProtocol, 2 workers, asyncio", "httptools", 2),
        ("keepalive-asyncio", "uvicorn_keepalive.Protocol, 1 worker, asyncio", _KEEPALIVE, 1),
        ("keepalive-asyncio-w2", "uvicorn_keepalive.Protocol, 2 workers, asyncio", _KEEPALIVE, 2),
    )
)
#: Each keepalive configuration is divided by the stock one with as many workers and the same
#: loop, and on asyncio two workers also by one worker of the same protocol; the second stock
#: process by the first.
BASELINES = {
    "keepalive": ("stock",),
    "stock-b": ("stock",),
    "keepalive-asyncio-w2": ("stock-asyncio-w2", "keepalive-asyncio"),
}
CELLS = (Cell("plain", 32, close=True), Cell("plain", 32), Cell("plain", 1))


def measure(quick: bool, logs: Path) -> dict[str, Any]:
    """Measure the three cells, configurations interleaved."""
    return run_load(SUITE, CONFIGS, CELLS, quick, answer=lambda body: (None, {}), log_dir=logs)


def render(suite: Any) -> list[str]:
    """Return the summary tables of a result file."""
    times = [("latency ms p50 / p99", "latency_us", ("p50", "p99"), 1e-3)]
    return summary.section("TCP keepalive", suite, "rps", BASELINES, times)


Message = MutableMapping[str, Any]
_HEADERS = [(b"content-type", b"application/json"), (b"content-length", b"2")]
_START: Message = {"type": "http.response.start", "status": 200, "headers": _HEADERS}
_BODY: Message = {"type": "http.response.body", "body": b"{}"}


async def app(
    scope: Message,
    receive: Callable[[], Awaitable[Message]],
    send: Callable[[Message], Awaitable[None]],
) -> None:
    """Answer every HTTP request with ``{}`` (connections cost the most); complete the lifespan."""
    if scope["type"] == "lifespan":
        while True:
            event = (await receive())["type"]
            await send({"type": f"{event}.complete"})
            if event == "lifespan.shutdown":
                return
    await send(_START)
    await send(_BODY)


if __name__ == "__main__":
    raise SystemExit(main(question=sys.modules[__name__]))
