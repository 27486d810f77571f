"""The streaming suite: chat-completion chunks streamed by uvicorn, read by a small client.

wrk measures requests, not the events inside a stream: here a client on asyncio and h11 (the
HTTP/1.1 library uvicorn depends on) reads whole streams and notes when events arrive. Each
configuration is its own uvicorn process with one worker, so events per second are per worker.
The cells are stream shapes (:data:`SHAPES`) at 1 and at ``streams`` concurrent streams:

- events per second: all events of the run over the time from the requests to the end of the
  last stream;
- time between events: between two reads of a stream that bring events (events that arrive
  together count once), what a reader waits between two updates;
- time from ``yield`` to read (stamped shapes): the client's clock at the read that completes
  an event minus the time the generator wrote into it (both CLOCK_MONOTONIC, one machine).

The server's resident memory is read before the suite and its peak (VmHWM) after it.
Configurations are interleaved round-robin over the rounds, as in the load suites.
"""

import asyncio
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import h11
import orjson

from benchmarks.bodies import CYCLE, chunk_dicts
from benchmarks.configs import StreamConfig
from benchmarks.rounds import Cell, interleave
from benchmarks.server import Server, ServerError, running

_SEPARATORS = {"jsonl": b"\n", "sse": b"\n\n"}

#: The generator shapes: the query parameters of :mod:`benchmarks.apps.streaming_app`.
SHAPES = {
    "ready": "",  # every chunk ready at once: the cost of each event on the wire
    "burst8": "&burst=8",  # 8 ready chunks per pass through the event loop
    "paced": "&burst=1&wait_us=1000&stamp=true",  # one chunk per ~1 ms, stamped
}


@dataclass(frozen=True)
class StreamSettings:
    """How much the streaming suite streams.

    Attributes:
        rounds: Rounds over all configurations.
        events: The cells measured, ``<shape>@c<streams>``, and the events of each stream.
    """

    rounds: int
    events: dict[str, int]

    @property
    def cells(self) -> list[Cell]:
        """The cells, in the order of :attr:`events`."""
        return [Cell(shape, int(n)) for shape, n in (key.split("@c") for key in self.events)]


@dataclass(frozen=True)
class StreamRead:
    """One stream as the client read it.

    Attributes:
        events: Events received.
        seconds: From sending the request to the end of the stream.
        gaps: Seconds between consecutive reads that brought events (the first: since the
            request).
        delays: For stamped streams, seconds from each event's ``yield`` to its read.
        payloads: The events' bytes, when asked to keep them.
    """

    events: int
    seconds: float
    gaps: list[float]
    delays: list[float]
    payloads: list[bytes]


def parse_events(payloads: Sequence[bytes], framing: str) -> list[Any]:
    """Return the JSON values of the events (SSE: of their ``data:`` line; comments skipped)."""
    if framing == "jsonl":
        return [orjson.loads(line) for line in payloads]
    found = []
    for block in payloads:
        data = [line[5:].strip() for line in block.split(b"\n") if line.startswith(b"data:")]
        if data:
            found.append(orjson.loads(b"\n".join(data)))
    return found


async def read_stream(
    port: int, path: str, framing: str, *, keep: bool = False, stamped: bool = False
) -> StreamRead:
    """Stream ``GET path`` from ``127.0.0.1:port`` to its end; count and time its events.

    Raises:
        ServerError: A status other than 200, or the connection closed mid-stream.
    """
    separator = _SEPARATORS[framing]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    connection = h11.Connection(h11.CLIENT)
    request = h11.Request(
        method="GET", target=path, headers=[("Host", "127.0.0.1"), ("Connection", "close")]
    )
    started = last = time.monotonic()
    writer.write((connection.send(request) or b"") + (connection.send(h11.EndOfMessage()) or b""))
    events, buffer, done = 0, b"", False
    gaps: list[float] = []
    delays: list[float] = []
    payloads: list[bytes] = []
    try:
        while not done:
            data = await reader.read(1 << 18)
            if not data:
                raise ServerError(f"GET {path}: the connection closed mid-stream")
            connection.receive_data(data)
            now = time.monotonic()
            while not done:
                event = connection.next_event()
                if event is h11.NEED_DATA or event is h11.PAUSED:
                    break
                if isinstance(event, h11.Response) and event.status_code != 200:
                    raise ServerError(f"GET {path} answered {event.status_code}")
                if isinstance(event, h11.Data):
                    buffer += event.data
                done = isinstance(event, h11.EndOfMessage)
            count = buffer.count(separator)
            if count:
                *complete, buffer = buffer.split(separator)
                payloads += complete if keep else []
                if stamped:
                    stamps = [c["created"] for c in parse_events(complete, framing)]
                    delays += [now - stamp / 1e6 for stamp in stamps]
                gaps.append(now - last)
                events, last = events + count, now
    finally:
        writer.close()
    return StreamRead(events, last - started, gaps, delays, payloads)


def proc_status_kb(pid: int, field: str) -> int:
    """Return a memory field of ``/proc/<pid>/status`` in kB (``VmRSS``, ``VmHWM``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise ServerError(f"no {field} for process {pid}")


def check(server: Server, config: StreamConfig) -> None:
    """Check that ``config`` streams the chunks in order, twice round the cycle.

    Raises:
        ServerError: Other events, or another number of them.
    """
    path = f"{config.path}?n={2 * CYCLE}&burst=8"
    read = asyncio.run(read_stream(server.port, path, config.framing, keep=True))
    if parse_events(read.payloads, config.framing) != list(chunk_dicts()) * 2:
        raise ServerError(f"{config.name} streams other events: {read.payloads[:2]!r}")


async def _streams(port: int, path: str, framing: str, cell: Cell) -> list[StreamRead]:
    stamped = "stamp=true" in path
    reads = (read_stream(port, path, framing, stamped=stamped) for _ in range(cell.concurrency))
    return list(await asyncio.gather(*reads))


def _percentiles_ms(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    ordered = sorted(values)
    at = {"p50": 0.5, "p99": 0.99}
    return {k: ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 for k, q in at.items()}


def _sample(round_number: int, cell: Cell, config: str, reads: list[StreamRead]) -> dict[str, Any]:
    events = sum(read.events for read in reads)
    seconds = max(read.seconds for read in reads)
    return {
        "round": round_number,
        "cell": cell.key,
        "config": config,
        "events": events,
        "seconds": seconds,
        "events_per_s": events / seconds,
        "gap_ms": _percentiles_ms([gap for read in reads for gap in read.gaps]),
        "yield_to_read_ms": _percentiles_ms([d for read in reads for d in read.delays]),
    }


def run_streaming(
    configs: Sequence[StreamConfig],
    settings: StreamSettings,
    *,
    log_dir: Path,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> dict[str, Any]:
    """Measure every configuration on every cell, interleaved over the rounds.

    Returns:
        JSON-ready: ``configs``, ``cells``, ``samples`` (one per run) and ``memory_kb``
        (per configuration: VmRSS before the suite, VmHWM after it).
    """
    by_name = {config.name: config for config in configs}
    result: dict[str, Any] = {
        "configs": [asdict(config) for config in configs],
        "cells": [asdict(cell) | {"key": cell.key} for cell in settings.cells],
        "events": settings.events,
        "samples": [],
        "memory_kb": {},
    }
    with running(list(configs), log_dir) as servers:
        for config in configs:
            check(servers[config.name], config)
            result["memory_kb"][config.name] = {
                "start": proc_status_kb(servers[config.name].pid, "VmRSS")
            }
        runs = interleave(settings.cells, list(by_name), settings.rounds)
        for index, run in enumerate(runs, 1):
            config, server = by_name[run.config], servers[run.config]
            path = f"{config.path}?n={settings.events[run.cell.key]}{SHAPES[run.cell.body]}"
            reads = asyncio.run(_streams(server.port, path, config.framing, run.cell))
            server.wait_idle()
            sample = _sample(run.round, run.cell, run.config, reads)
            result["samples"].append(sample)
            delay = sample["yield_to_read_ms"]
            log(
                f"streaming [{index}/{len(runs)}] round {run.round + 1} {run.cell.key} "
                f"{run.config}: {sample['events_per_s']:.0f} events/s"
                + (f", yield to read p99 {delay['p99']:.2f} ms" if delay else "")
            )
        for config in configs:
            result["memory_kb"][config.name]["peak"] = proc_status_kb(
                servers[config.name].pid, "VmHWM"
            )
    return result
