"""The cost of accepting one connection, stock uvicorn against uvicorn-keepalive, in process.

Connection churn over HTTP is noisy on a shared machine; this measures the difference
directly. A real listening socket on 127.0.0.1 accepts connections with uvicorn's own
``HttpToolsProtocol`` or with ``uvicorn_keepalive.Protocol``, under uvloop and under
asyncio, and times ``connection_made`` (where uvicorn-keepalive does all its work) for each
accepted connection. Protocols and loops are interleaved in rounds.
"""

import asyncio
import sys
import time
from collections.abc import Callable, Coroutine
from typing import Any

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

import uvicorn_keepalive
from benchmarks.apps import plain

PROTOCOLS: dict[str, type[HttpToolsProtocol]] = {
    "stock": HttpToolsProtocol,
    "keepalive": uvicorn_keepalive.Protocol,
}


def _loops() -> dict[str, Callable[[Coroutine[Any, Any, float]], float]]:
    """Return the event loop runners available here: uvloop (if installed) and asyncio."""
    runners: dict[str, Callable[[Coroutine[Any, Any, float]], float]] = {}
    try:
        import uvloop
    except ImportError:
        pass
    else:
        runners["uvloop"] = uvloop.run
    runners["asyncio"] = asyncio.run
    return runners


async def _per_connection(base: type[HttpToolsProtocol], connections: int) -> float:
    """Accept ``connections`` connections with ``base``; return seconds of connection_made each."""
    config = Config(app=plain.app, lifespan="off", log_level="warning")
    config.load()
    state = ServerState()
    spent = [0.0]

    class Timed(base):  # type: ignore[misc,valid-type]
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            started = time.perf_counter()
            super().connection_made(transport)
            spent[0] += time.perf_counter() - started

    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: Timed(config=config, server_state=state, app_state={}), "127.0.0.1", 0
    )
    port = server.sockets[0].getsockname()[1]
    for _ in range(connections):
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.close()
        await writer.wait_closed()
    server.close()
    await server.wait_closed()
    return spent[0] / connections


def measure(
    *,
    rounds: int,
    connections: int,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> dict[str, Any]:
    """Time ``connection_made`` per protocol and event loop over interleaved rounds.

    Returns:
        JSON-ready: ``samples[loop][protocol]`` lists seconds per connection by round.
    """
    loops = _loops()
    samples: dict[str, dict[str, list[float]]] = {
        loop: {name: [] for name in PROTOCOLS} for loop in loops
    }
    for round_number in range(rounds):
        names = list(PROTOCOLS)
        if round_number % 2:
            names.reverse()
        for loop, run in loops.items():
            for name in names:
                samples[loop][name].append(run(_per_connection(PROTOCOLS[name], connections)))
        log(f"connection cost: round {round_number + 1}/{rounds} done")
    return {"connections": connections, "samples": samples}
