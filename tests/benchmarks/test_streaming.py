"""The streaming suite on real uvicorn processes: every configuration streams the same chunks."""

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

import orjson_dispatch
from benchmarks.chunks import CYCLE, chunk_dicts
from benchmarks.configs import DISPATCH_STREAMING_CONFIGS, STREAMING_CONFIGS, StreamConfig
from benchmarks.server import Server, ServerError, running
from benchmarks.streaming import (
    StreamSettings,
    check,
    parse_events,
    read_stream,
    rss_kb,
    run_streaming,
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One uvicorn process of the streaming app (it serves every configuration)."""
    with running([STREAMING_CONFIGS[0]], tmp_path_factory.mktemp("logs")) as started:
        yield next(iter(started.values()))


@pytest.mark.parametrize("config", STREAMING_CONFIGS, ids=lambda c: c.name)
def test_every_configuration_streams_the_chunks(server: Server, config: StreamConfig) -> None:
    check(server, config)
    read = asyncio.run(read_stream(server.port, f"{config.path}?n=3", config.framing, True))
    assert read.events == 3
    assert parse_events(read.payloads, config.framing) == list(chunk_dicts()[:3])
    assert len(read.gaps) >= 1
    assert read.seconds > 0


def test_a_wrong_stream_is_reported(server: Server) -> None:
    wrong = StreamConfig("orjson-limit", "", "", "/orjson-limit", framing="sse")
    with pytest.raises(ServerError, match="streams other events"):
        check(server, wrong)
    with pytest.raises(ServerError, match="answered 404"):
        asyncio.run(read_stream(server.port, "/nothing?n=1", "jsonl"))


def test_sse_comments_are_not_events() -> None:
    assert parse_events([b": ping", b'data: {"a":1}'], "sse") == [{"a": 1}]


def test_rss_is_read_from_proc(server: Server) -> None:
    assert 10_000 < rss_kb(server.pid) < 2_000_000


def test_dispatch_configurations_join_once_the_package_ships_them() -> None:
    shipped = hasattr(orjson_dispatch, "DispatchRoute")
    assert set(DISPATCH_STREAMING_CONFIGS) <= set(STREAMING_CONFIGS) if shipped else True
    assert not set(DISPATCH_STREAMING_CONFIGS) & set(STREAMING_CONFIGS) or shipped


def test_a_tiny_suite_measures_every_configuration(tmp_path: Path) -> None:
    configs = [c for c in STREAMING_CONFIGS if c.name == "fastapi-sse-typed"]
    settings = StreamSettings(rounds=1, events=CYCLE, streams=2, stream_events=8, rss_events=CYCLE)
    suite = run_streaming(configs, settings, log_dir=tmp_path, log=lambda line: None)
    assert {(s["config"], s["cell"]) for s in suite["samples"]} == {
        (c.name, cell) for c in configs for cell in ("chunks@c1", "chunks@c2")
    }
    assert all(s["events"] in (CYCLE, 16) for s in suite["samples"])
    assert [row["config"] for row in suite["rss"]] == [c.name for c in configs]
    assert all(row["kb_max"] >= row["kb_before"] > 0 for row in suite["rss"])
