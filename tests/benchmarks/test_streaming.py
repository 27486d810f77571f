"""The streaming suite on real uvicorn processes: every configuration streams the same chunks."""

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks import streaming as streaming_app
from benchmarks.runner import Cell, Server, ServerConfig, ServerError, running
from benchmarks.streaming import CONFIGS as STREAMING_CONFIGS
from benchmarks.streaming import (
    EVENT_BYTES,
    SHAPES,
    STALLED,
    cells,
    check,
    parse_events,
    read_stream,
    run_streaming,
    stalled_growth_kb,
)
from bodies import chunk_dicts


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One uvicorn process of the streaming app (it serves every configuration)."""
    with running([STREAMING_CONFIGS[0]], tmp_path_factory.mktemp("logs")) as started:
        yield next(iter(started.values()))


@pytest.mark.parametrize("config", STREAMING_CONFIGS, ids=lambda c: c.name)
def test_every_configuration_streams_the_chunks(server: Server, config: ServerConfig) -> None:
    check(server.port, config)
    path = f"{config.path}?n=3{SHAPES['paced']}"
    read = asyncio.run(read_stream(server.port, path, config.framing, keep=True, stamped=True))
    assert read.events == 3
    events = parse_events(read.payloads, config.framing)
    assert [{**e, "created": 0} for e in events] == [{**c, "created": 0} for c in chunk_dicts()[:3]]
    # Each event carries the time of its yield, which comes before the client's read.
    assert len(read.delays) == 3
    assert all(delay >= 0 for delay in read.delays)


def test_generators_pass_through_the_event_loop_after_each_burst(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async def produce(shape: streaming_app.Shape) -> list[object]:
        return [chunk async for chunk in streaming_app.dicts(shape)]

    monkeypatch.setattr(asyncio, "sleep", sleep)
    assert len(asyncio.run(produce(streaming_app.Shape(n=5, burst=2, wait_us=1000)))) == 5
    assert slept == [0.001, 0.001]  # before the 3rd and the 5th chunk
    asyncio.run(produce(streaming_app.Shape(n=5)))
    assert slept == [0.001, 0.001]  # without burst, every chunk is ready at once


def test_a_wrong_stream_is_reported(server: Server) -> None:
    wrong = ServerConfig("orjson-limit", "", "", "/orjson-limit", framing="sse")
    with pytest.raises(ServerError, match="streams other events"):
        check(server.port, wrong)
    with pytest.raises(ServerError, match="answered 404"):
        asyncio.run(read_stream(server.port, "/nothing?n=1", "jsonl"))


def test_sse_comments_are_not_events() -> None:
    assert parse_events([b": ping", b'data: {"a":1}'], "sse") == [{"a": 1}]


def test_memory_is_read_from_proc(server: Server) -> None:
    assert 10_000 < server.status_kb("VmRSS") <= server.status_kb("VmHWM")


def test_a_tiny_suite_measures_every_cell(tmp_path: Path) -> None:
    configs = [c for c in STREAMING_CONFIGS if c.name == "dispatch-route-sse"]
    events = {"ready@c1": 16, "burst8@c2": 16, "paced@c2": 4}
    assert cells(events) == [Cell("ready", 1), Cell("burst8", 2), Cell("paced", 2)]
    suite = run_streaming(configs, events, 1, tmp_path)
    samples = {s["cell"]: s for s in suite["samples"]}
    assert set(samples) == set(events)
    assert [s["events"] for s in samples.values()] == [16, 32, 8]
    assert samples["paced@c2"]["yield_to_read_ms"] is not None
    assert samples["ready@c1"]["yield_to_read_ms"] is None
    memory = suite["memory_kb"]["dispatch-route-sse"]
    assert memory["peak"] >= memory["start"] > 0


@pytest.mark.parametrize("path", list(STALLED))
def test_the_stalled_reader_streams_send_1_mib_events(server: Server, path: str) -> None:
    read = asyncio.run(read_stream(server.port, f"/{path}?n=2", "jsonl", keep=True))
    assert [len(e["text"]) for e in parse_events(read.payloads, "jsonl")] == [EVENT_BYTES] * 2


def test_a_stalled_reader_growth_is_read_from_a_fresh_server(tmp_path: Path) -> None:
    assert isinstance(stalled_growth_kb(next(iter(STALLED)), 1, tmp_path, stall_s=0.1), int)


def response_bytes(port: int, path: str) -> tuple[bytes, bytes]:
    """The status line and headers (``date`` left out), and the body, uvicorn sends for ``path``."""
    with socket.create_connection(("127.0.0.1", port)) as client:
        client.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        received = b"".join(iter(lambda: client.recv(1 << 16), b""))
    head, _, chunked = received.partition(b"\r\n\r\n")
    lines = [line for line in head.split(b"\r\n") if not line.startswith(b"date:")]
    body, rest = b"", chunked
    while (size := int(rest.split(b"\r\n", 1)[0], 16)) > 0:  # the chunked framing undone
        data = rest.split(b"\r\n", 1)[1]
        body, rest = body + data[:size], data[size + 2 :]
    return b"\r\n".join(lines), body


def test_the_migrated_stream_sends_the_bytes_of_the_hand_built_one(server: Server) -> None:
    hand_built, migrated = (
        response_bytes(server.port, f"/{path}?n=70&burst=8")
        for path in ("model-dump-json-sse", "server-sent-events")
    )
    assert hand_built[1].count(b"data: ") == 70
    assert migrated == hand_built
