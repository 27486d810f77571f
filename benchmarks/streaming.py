"""The streaming suite: chat-completion chunks streamed by uvicorn, read by a small client.

wrk measures requests, not the events inside a stream: here a client on asyncio and h11
(the HTTP/1.1 library uvicorn depends on) reads whole streams and notes when events arrive.
Per configuration, each its own uvicorn process with one worker:

- ``chunks@c1``: one stream of ``events`` chunks; time per event is the time from the
  request to the end of the stream divided by the events.
- ``chunks@c<streams>``: that many concurrent streams; the time between events of a stream
  as the client sees them: between two reads that bring events (events that arrive
  together count once), what a reader waits between two updates.
- memory: the server's VmRSS (``/proc/<pid>/status``) sampled every 50 ms over one long
  stream.

The configurations are interleaved round-robin over the rounds, as in the load suites.
"""

import asyncio
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

import h11
import orjson

from benchmarks.chunks import CYCLE, chunk_dicts
from benchmarks.configs import StreamConfig
from benchmarks.schedule import Cell, interleave
from benchmarks.server import Server, ServerError, running

_T = TypeVar("_T")
_SEPARATORS = {"jsonl": b"\n", "sse": b"\n\n"}


@dataclass(frozen=True)
class StreamSettings:
    """How much the streaming suite streams.

    Attributes:
        rounds: Rounds over all configurations.
        events: Events of the single stream.
        streams: Concurrent streams of the latency measurement.
        stream_events: Events of each concurrent stream.
        rss_events: Events of the long stream during which memory is sampled.
    """

    rounds: int
    events: int
    streams: int
    stream_events: int
    rss_events: int


@dataclass(frozen=True)
class StreamRead:
    """One stream as the client read it.

    Attributes:
        events: Events received.
        seconds: From sending the request to the end of the stream.
        gaps: Seconds between consecutive reads that brought events (the first: since the
            request): how long a reader waits between two updates. Events that arrive
            together in one read count once, as the wait before them.
        payloads: The events' bytes, when asked to keep them.
    """

    events: int
    seconds: float
    gaps: list[float]
    payloads: list[bytes]


def _path(config: StreamConfig, events: int) -> str:
    return f"{config.path}?n={events}"


async def read_stream(port: int, path: str, framing: str, keep: bool = False) -> StreamRead:
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
    started = last = time.perf_counter()
    writer.write((connection.send(request) or b"") + (connection.send(h11.EndOfMessage()) or b""))
    events, buffer, done = 0, b"", False
    gaps: list[float] = []
    payloads: list[bytes] = []
    try:
        while not done:
            data = await reader.read(1 << 18)
            if not data:
                raise ServerError(f"GET {path}: the connection closed mid-stream")
            connection.receive_data(data)
            now = time.perf_counter()
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
                if keep:
                    payloads += complete
                gaps.append(now - last)
                events, last = events + count, now
    finally:
        writer.close()
    return StreamRead(events, last - started, gaps, payloads)


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


def rss_kb(pid: int) -> int:
    """Return the resident set size of ``pid`` in kB (``VmRSS`` in ``/proc/<pid>/status``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise ServerError(f"no VmRSS for process {pid}")


async def _with_rss(pid: int, read: Coroutine[Any, Any, _T]) -> tuple[_T, list[int]]:
    """Run ``read`` while sampling the VmRSS of ``pid`` every 50 ms."""
    samples = [rss_kb(pid)]
    task = asyncio.ensure_future(read)
    while not task.done():
        await asyncio.wait({task}, timeout=0.05)
        samples.append(rss_kb(pid))
    return task.result(), samples


async def _concurrent(port: int, path: str, framing: str, streams: int) -> list[StreamRead]:
    return list(await asyncio.gather(*(read_stream(port, path, framing) for _ in range(streams))))


def check(server: Server, config: StreamConfig) -> None:
    """Check that ``config`` streams the chunks in order, twice round the cycle.

    Raises:
        ServerError: Other events, or another number of them.
    """
    read = asyncio.run(read_stream(server.port, _path(config, 2 * CYCLE), config.framing, True))
    expected = list(chunk_dicts()) * 2
    if parse_events(read.payloads, config.framing) != expected:
        raise ServerError(f"{config.name} streams other events: {read.payloads[:2]!r}")


def _percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _sample(round_number: int, cell: Cell, config: str, reads: list[StreamRead]) -> dict[str, Any]:
    events = sum(read.events for read in reads)
    seconds = max(read.seconds for read in reads)
    gaps = [gap for read in reads for gap in read.gaps]
    return {
        "round": round_number,
        "cell": cell.key,
        "config": config,
        "events": events,
        "seconds": seconds,
        "events_per_s": events / seconds,
        "us_per_event": seconds / events * 1e6,
        "gap_ms": {
            "p50": _percentile(gaps, 0.5) * 1000,
            "p99": _percentile(gaps, 0.99) * 1000,
            "max": max(gaps) * 1000,
        },
    }


def run_streaming(
    configs: Sequence[StreamConfig],
    settings: StreamSettings,
    *,
    log_dir: Path,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> dict[str, Any]:
    """Measure every configuration, interleaved over the rounds; return JSON-ready results.

    Returns:
        ``configs``, ``settings``, ``cells``, ``samples`` (one per run: events, seconds,
        events/s, us per event, gaps in ms) and ``rss`` (per configuration: kB before the
        long stream, at its peak and after it).
    """
    cells = [Cell("chunks", 1), Cell("chunks", settings.streams)]
    result: dict[str, Any] = {
        "name": "streaming",
        "configs": [asdict(config) for config in configs],
        "settings": asdict(settings),
        "cells": [asdict(cell) | {"key": cell.key} for cell in cells],
        "samples": [],
        "rss": [],
    }
    by_name = {config.name: config for config in configs}
    with running(list(configs), log_dir) as servers:
        for config in configs:
            check(servers[config.name], config)
        runs = interleave(cells, list(by_name), settings.rounds)
        for index, run in enumerate(runs, 1):
            config, server = by_name[run.config], servers[run.config]
            if run.cell.concurrency == 1:
                path = _path(config, settings.events)
                reads = [asyncio.run(read_stream(server.port, path, config.framing))]
            else:
                path = _path(config, settings.stream_events)
                reads = asyncio.run(
                    _concurrent(server.port, path, config.framing, run.cell.concurrency)
                )
            server.wait_idle()
            sample = _sample(run.round, run.cell, run.config, reads)
            result["samples"].append(sample)
            log(
                f"streaming [{index}/{len(runs)}] round {run.round + 1} {run.cell.key} "
                f"{run.config}: {sample['events_per_s']:.0f} events/s, "
                f"{sample['us_per_event']:.1f} us/event, p99 gap {sample['gap_ms']['p99']:.2f} ms"
            )
        for config in configs:
            server = servers[config.name]
            path = _path(config, settings.rss_events)
            read, samples = asyncio.run(
                _with_rss(server.pid, read_stream(server.port, path, config.framing))
            )
            server.wait_idle()
            after = rss_kb(server.pid)
            result["rss"].append(
                {
                    "config": config.name,
                    "events": read.events,
                    "seconds": read.seconds,
                    "kb_before": samples[0],
                    "kb_max": max(samples),
                    "kb_after": after,
                }
            )
            log(f"streaming memory {config.name}: {samples[0]} -> {max(samples)} kB peak")
    return result
