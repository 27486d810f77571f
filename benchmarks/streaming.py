"""The streaming suite: chat-completion chunks streamed by uvicorn, read by a client of our own.

wrk counts requests, not events: a client on asyncio and h11 (uvicorn's HTTP/1.1 library) reads
whole streams from one uvicorn worker. A cell is a shape (:data:`SHAPES`) at some concurrent
streams, ``<shape>@c<streams>``. Per run: events per second (all events over the time from the
requests to the end of the last stream); time between two reads that bring events; for stamped
shapes, the time from ``yield`` to the read completing the event (CLOCK_MONOTONIC, one machine).
Memory: the server's VmRSS before the suite, its peak (VmHWM) after it.
"""

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import h11
import orjson

from benchmarks.bodies import CYCLE, chunk_dicts
from benchmarks.configs import ServerConfig, StreamConfig
from benchmarks.rounds import Cell, Run, drive, stderr
from benchmarks.server import Server, ServerError

#: The generator shapes: query parameters of :mod:`benchmarks.apps.streaming_app`.
SHAPES = {
    "ready": "",  # every chunk ready at once: the cost of each event on the wire
    "burst8": "&burst=8",  # 8 ready chunks per pass through the event loop
    "paced": "&burst=1&wait_us=1000&stamp=true",  # one chunk per ~1 ms, stamped
}
_SEPARATORS = {"jsonl": b"\n", "sse": b"\n\n"}
_NEED = (h11.NEED_DATA, h11.PAUSED)


class StreamRead(NamedTuple):
    """One stream as the client read it."""

    events: int
    seconds: float  # from the request to the end of the stream
    gaps: list[float]  # seconds between reads that brought events (the first: from the request)
    delays: list[float]  # stamped streams: seconds from each event's yield to its read
    payloads: list[bytes]  # the events' bytes, when kept


def cells(events: dict[str, int]) -> list[Cell]:
    """Return the cells named by the keys of ``events`` (``<shape>@c<streams>``)."""
    return [Cell(shape, int(n)) for shape, n in (key.split("@c") for key in events)]


def parse_events(payloads: Sequence[bytes], framing: str) -> list[Any]:
    """Return the JSON values of the events (SSE: of their ``data:`` line; comments skipped)."""
    if framing == "jsonl":
        return [orjson.loads(line) for line in payloads]
    blocks = [[line[5:].strip() for line in b.split(b"\n") if line.startswith(b"data:")]
              for b in payloads]  # fmt: skip
    return [orjson.loads(b"\n".join(data)) for data in blocks if data]


async def read_stream(
    port: int, path: str, framing: str, *, keep: bool = False, stamped: bool = False
) -> StreamRead:
    """Read ``GET path`` from ``127.0.0.1:port`` to its end; ServerError if not 200 or cut."""
    separator = _SEPARATORS[framing]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    connection = h11.Connection(h11.CLIENT)
    headers = [("Host", "127.0.0.1"), ("Connection", "close")]
    started = last = time.monotonic()
    request = connection.send(h11.Request(method="GET", target=path, headers=headers))
    writer.write((request or b"") + (connection.send(h11.EndOfMessage()) or b""))
    read = StreamRead(0, 0.0, [], [], [])
    events, buffer, done = 0, b"", False
    try:
        while not done:
            data = await reader.read(1 << 18)
            if not data:
                raise ServerError(f"GET {path}: the connection closed mid-stream")
            connection.receive_data(data)
            now = time.monotonic()
            while not done and (event := connection.next_event()) not in _NEED:
                if isinstance(event, h11.Response) and event.status_code != 200:
                    raise ServerError(f"GET {path} answered {event.status_code}")
                buffer += event.data if isinstance(event, h11.Data) else b""
                done = isinstance(event, h11.EndOfMessage)
            if separator in buffer:
                *complete, buffer = buffer.split(separator)
                read.payloads.extend(complete if keep else [])
                stamps = [c["created"] for c in parse_events(complete, framing)] if stamped else []
                read.delays.extend(now - stamp / 1e6 for stamp in stamps)
                read.gaps.append(now - last)
                events, last = events + len(complete), now
    finally:
        writer.close()
    return read._replace(events=events, seconds=last - started)


def check(server: Server, config: StreamConfig) -> None:
    """Check that ``config`` streams the chunks twice round the cycle, else ServerError."""
    path = f"{config.path}?n={2 * CYCLE}&burst=8"
    read = asyncio.run(read_stream(server.port, path, config.framing, keep=True))
    if parse_events(read.payloads, config.framing) != list(chunk_dicts()) * 2:
        raise ServerError(f"{config.name} streams other events: {read.payloads[:2]!r}")


async def _streams(port: int, path: str, framing: str, streams: int) -> list[StreamRead]:
    stamped = "stamp=true" in path
    reads = (read_stream(port, path, framing, stamped=stamped) for _ in range(streams))
    return list(await asyncio.gather(*reads))


def _percentiles_ms(values: Sequence[float]) -> dict[str, float] | None:
    ordered, n = sorted(values), len(values)
    at = {"p50": 0.5, "p99": 0.99}
    return {k: ordered[min(n - 1, int(q * n))] * 1000 for k, q in at.items()} if n else None


def run_streaming(
    configs: Sequence[StreamConfig],
    events: dict[str, int],
    rounds: int,
    *,
    log_dir: Path,
    log: Callable[[str], None] = stderr,
) -> dict[str, Any]:
    """Stream ``events[cell]`` events per stream from every configuration, interleaved.

    Returns:
        :func:`~benchmarks.rounds.drive`'s result with ``events``; per sample the events, the
        seconds, ``events_per_s`` and the percentiles of ``gap_ms`` and ``yield_to_read_ms``.
    """
    by_name = {config.name: config for config in configs}

    def measure(server: Server, run: Run) -> tuple[dict[str, Any], str]:
        config = by_name[run.config]
        path = f"{config.path}?n={events[run.cell.key]}{SHAPES[run.cell.body]}"
        reads = asyncio.run(_streams(server.port, path, config.framing, run.cell.concurrency))
        count, seconds = sum(r.events for r in reads), max(r.seconds for r in reads)
        delay = _percentiles_ms([d for read in reads for d in read.delays])
        sample = {
            "events": count,
            "seconds": seconds,
            "events_per_s": count / seconds,
            "gap_ms": _percentiles_ms([gap for read in reads for gap in read.gaps]),
            "yield_to_read_ms": delay,
        }
        text = f"{count / seconds:.0f} events/s"
        return sample, text + (f", yield to read p99 {delay['p99']:.2f} ms" if delay else "")

    def prepare(server: Server, config: ServerConfig) -> None:
        check(server, by_name[config.name])

    suite = drive(
        "streaming",
        configs,
        cells(events),
        rounds,
        prepare=prepare,
        measure=measure,
        log_dir=log_dir,
        log=log,
    )
    return suite | {"events": events}
