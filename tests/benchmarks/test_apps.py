"""The benchmark bodies are deterministic and every configuration answers the same JSON."""

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from benchmarks import requests, serialization, streaming
from benchmarks.keepalive import CONFIGS as KEEPALIVE_CONFIGS
from benchmarks.requests import CONFIGS as REQUEST_CONFIGS
from benchmarks.runner import Server, get, running, uvicorn_command
from benchmarks.serialization import CONFIGS as SERIALIZATION_CONFIGS
from benchmarks.serialization import FIRST, GENERIC, first_answer
from bodies import (
    CHAT,
    MULTI_TURN,
    SDK_BODIES,
    SDK_TOOLCALL,
    TOOLCALL,
    TurnsRequest,
    body,
    items,
    raw,
    request,
    request_answer,
)
from orjson_dispatch import DispatchRoute


def test_bodies_are_deterministic_and_sized_like_model_server_traffic() -> None:
    assert raw(TOOLCALL) == raw(TOOLCALL) == body(TOOLCALL).data
    assert raw("tokens-32") == raw("tokens-32")
    assert 3_000 < len(body("tokens-32").json) < 6_000
    assert 20_000 < len(body("tokens-1024").json) < 35_000
    assert 30_000 < len(body(TOOLCALL).json) < 45_000
    kinds = {item["type"] for item in body("tokens-32").data["output"]}
    assert kinds == {"message", "function_call"}


def test_sdk_bodies_are_made_of_the_sdk_types_and_sized_like_model_server_traffic() -> None:
    sizes = {"sdk-training": (1.9e6, 2.1e6), SDK_TOOLCALL: (30e3, 45e3)}
    sizes |= {"sdk-embeddings": (1.9e6, 2.2e6), "sdk-logprobs": (1.0e6, 1.5e6)}
    for name, (cls, _) in SDK_BODIES.items():
        assert type(body(name).model) is cls
        low, high = sizes[name]
        assert low < len(body(name).json) < high, name
    kinds = {item["type"] for item in body(SDK_TOOLCALL).data["output"]}
    assert kinds == {"reasoning", "message", "function_call"}


@pytest.mark.parametrize("name", ["tokens", "tokens-0", "tokens-x", "other-32"])
def test_unknown_body_names_are_rejected(name: str) -> None:
    with pytest.raises(KeyError):
        body(name)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Server]]:
    """One real uvicorn process per application (one serves every configuration of its script)."""
    configs = (*SERIALIZATION_CONFIGS, *KEEPALIVE_CONFIGS, *REQUEST_CONFIGS)
    apps = {config.app: config for config in configs}
    with running(list(apps.values()), tmp_path_factory.mktemp("logs")) as started:
        yield {server.config.app: server for server in started.values()}


@pytest.mark.parametrize("name", ["tokens-32", TOOLCALL])
def test_every_configuration_answers_the_same_document(
    servers: dict[str, Server], name: str
) -> None:
    expected = body(name).data
    for config in SERIALIZATION_CONFIGS:
        status, content = get(servers[config.app].port, config.url_path(name))
        assert status == 200, config.name
        assert orjson.loads(content) == expected, config.name


def test_request_bodies_are_a_multi_turn_request_and_a_chat_request() -> None:
    turns = TurnsRequest.model_validate_json(request(MULTI_TURN)).input
    assert len(turns) == 16
    assert sum(len(t.token_ids) for t in turns) == 52_000
    assert sum(len(t.logprobs or ()) for t in turns) == 32_000
    assert 1.6e6 < len(request(MULTI_TURN)) < 1.8e6
    assert 1_500 < len(request(CHAT)) < 2_500


@pytest.mark.parametrize("name", [MULTI_TURN, CHAT])
def test_every_request_configuration_answers_the_same_counts(
    servers: dict[str, Server], name: str
) -> None:
    for config in REQUEST_CONFIGS:
        answer = get(servers[config.app].port, config.url_path(name), posted=request(name))
        assert answer[0] == 200, config.name
        assert orjson.loads(answer[1]) == request_answer(name), config.name


def test_unknown_bodies_answer_404(servers: dict[str, Server]) -> None:
    for config in SERIALIZATION_CONFIGS:
        assert get(servers[config.app].port, config.url_path("nothing-1"))[0] == 404


def test_keepalive_app_answers_an_empty_object(servers: dict[str, Server]) -> None:
    for config in KEEPALIVE_CONFIGS:
        assert get(servers[config.app].port, config.url_path("plain")) == (200, b"{}")


def test_stopped_servers_are_gone(tmp_path: Path) -> None:
    with running([KEEPALIVE_CONFIGS[0]], tmp_path) as started:
        server = started["stock"]
        assert get(server.port, "/")[0] == 200
    with pytest.raises(ConnectionRefusedError):
        get(server.port, "/", timeout=2)


def test_the_asyncio_configurations_run_the_asyncio_loop() -> None:
    for config in KEEPALIVE_CONFIGS:
        command = " ".join(uvicorn_command(config, 8000))
        assert ("--loop asyncio" in command) == ("asyncio" in config.name), command
        assert f"--workers {config.workers} " in command


def test_the_generic_routes_answer_rows_of_8_keys(servers: dict[str, Server]) -> None:
    assert len(items()) == 1_000
    assert {len(row) for row in items()} == {8}
    for config in GENERIC:
        status, content = get(servers[config.app].port, config.path)
        assert (status, orjson.loads(content)) == (200, items()), config.name


def test_a_first_answer_is_timed_by_a_fresh_server(tmp_path: Path) -> None:
    found, text = first_answer(list(FIRST)[-1], tmp_path)  # one server: each imports the SDKs
    assert found["ms"] > 0
    assert text.endswith(" ms")


def test_the_dispatch_route_configurations_are_routes_of_dispatch_route() -> None:
    routers = [
        (requests.app.router, {"/route-dict/{name}", "/route-typed/{name}"}),
        (
            streaming.dispatch_router,
            {"/dispatch-route-jsonl", "/dispatch-route-sse", "/stalled-route"},
        ),
        (
            serialization.dispatch_router,
            {"/dispatch-route/{name}", "/generic-route", "/first-route"},
        ),
    ]
    for router, paths in routers:
        assert {r.path for r in router.routes if isinstance(r, DispatchRoute)} == paths
