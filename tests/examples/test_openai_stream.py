"""The official ``openai`` client reads the example server's streams, as it reads OpenAI's.

The server is the example app under a real ``uvicorn --http uvicorn_keepalive:Protocol`` process
(the ``server`` fixture of ``test_example_app.py``). Each path answers both forms: a streamed
answer, concatenated, is the whole answer for the same seed: one chunk per token for
completions; for chat completions the role first, one chunk per token, and an empty chunk
carrying the finish reason; then the usage chunk when ``stream_options.include_usage`` is set.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import httpx
import openai
import orjson
import pytest

from examples.model_server import router
from orjson_dispatch import DispatchRoute
from tests.examples.test_example_app import server

__all__ = ["server"]  # the fixture, shared with test_example_app.py

MODEL = "toy-lm-1"
TOKENS = 12


def _whole_and_streamed(base_url: str, kind: str, is_async: bool) -> tuple[str, list[str]]:
    """The whole answer's text and the text of each streamed chunk, read by the openai client."""
    if kind == "completions":
        request: dict[str, Any] = {"prompt": "Hello"}
    else:
        request = {"messages": [{"role": "user", "content": "Hello"}]}
    request.update(model=MODEL, max_tokens=TOKENS, seed=3)
    if is_async:
        return asyncio.run(_async_whole_and_streamed(base_url, kind, request))
    with openai.OpenAI(base_url=base_url, api_key="dummy", max_retries=0) as client:
        if kind == "completions":
            whole = client.completions.create(**request).choices[0].text
            stream = client.completions.create(**request, stream=True)
            return whole, [chunk.choices[0].text for chunk in stream]
        answer = client.chat.completions.create(**request).choices[0].message.content
        chunks = client.chat.completions.create(**request, stream=True)
        return answer or "", [chunk.choices[0].delta.content or "" for chunk in chunks]


async def _async_whole_and_streamed(
    base_url: str, kind: str, request: dict[str, Any]
) -> tuple[str, list[str]]:
    async with openai.AsyncOpenAI(base_url=base_url, api_key="dummy", max_retries=0) as client:
        if kind == "completions":
            whole = (await client.completions.create(**request)).choices[0].text
            stream = await client.completions.create(**request, stream=True)
            return whole, [chunk.choices[0].text async for chunk in stream]
        answer = (await client.chat.completions.create(**request)).choices[0].message.content
        chunks = await client.chat.completions.create(**request, stream=True)
        return answer or "", [chunk.choices[0].delta.content or "" async for chunk in chunks]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("kind", ["completions", "chat"])
def test_streamed_text_is_the_whole_answer(server: str, kind: str, is_async: bool) -> None:
    whole, streamed = _whole_and_streamed(f"{server}/v1", kind, is_async)
    assert len(whole.split()) == TOKENS
    assert "".join(streamed) == whole
    if kind == "completions":
        assert len(streamed) == TOKENS
        assert all(streamed)  # one token each
    else:
        assert len(streamed) == TOKENS + 2
        assert streamed[0] == streamed[-1] == ""  # the role, then the finish reason


@pytest.mark.parametrize("path", ["/v1/completions", "/v1/chat/completions"])
def test_stream_is_server_sent_events_ending_with_done(server: str, path: str) -> None:
    body = {"prompt": "Hi", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2}
    with httpx.Client(base_url=server, timeout=30) as client:
        response = client.post(path, json={**body, "stream": True})
        whole = client.post(path, json=body)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert response.headers["cache-control"] == "no-cache"
    events = response.content.split(b"\n\n")
    assert events[-2:] == [b"data: [DONE]", b""]
    assert all(event.startswith(b"data: {") for event in events[:-2])
    assert whole.headers["content-type"] == "application/json"


@pytest.mark.parametrize("path", ["/v1/completions", "/v1/chat/completions"])
def test_stream_ends_with_the_chunked_terminator(server: str, path: str) -> None:
    """Read by a raw socket client to the terminating chunk (the ``openai`` client stops reading
    at ``[DONE]``, and would not see a stream cut after it)."""
    body = orjson.dumps(
        {"prompt": "Hi", "messages": [{"role": "user", "content": "Hi"}], "stream": True}
    )
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as client:
        client.sendall(
            f"POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
            + body
        )
        received = b""
        while chunk := client.recv(65536):
            received += chunk
    head, _, chunked = received.partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head.lower()
    assert chunked.endswith(b"data: [DONE]\n\n\r\n0\r\n\r\n")


def test_completion_routes_are_serialized_by_orjson() -> None:
    assert len(router.routes) == 2
    for route in router.routes:
        assert isinstance(route, DispatchRoute)
        assert route.dispatched, route.path
        assert route.include_in_schema


@pytest.mark.parametrize("kind", ["completions", "chat"])
def test_usage_chunk_ends_the_stream_when_asked_for(server: str, kind: str) -> None:
    request: dict[str, Any] = {"model": MODEL, "max_tokens": 3, "seed": 1, "stream": True}
    request["stream_options"] = {"include_usage": True}
    with openai.OpenAI(base_url=f"{server}/v1", api_key="dummy", max_retries=0) as client:
        if kind == "completions":
            chunks = list(client.completions.create(prompt="Hi", **request))
        else:
            messages: Any = [{"role": "user", "content": "Hi"}]
            chunks = list(client.chat.completions.create(messages=messages, **request))
    *tokens, last = chunks
    assert all(chunk.usage is None for chunk in tokens)
    assert last.choices == []
    assert last.usage is not None
    assert (last.usage.prompt_tokens, last.usage.completion_tokens) == (2, 3)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_openai_client_shows_the_error_message(server: str, stream: bool) -> None:
    with (
        openai.OpenAI(base_url=f"{server}/v1", api_key="dummy", max_retries=0) as client,
        pytest.raises(openai.BadRequestError) as raised,
    ):
        client.completions.create(model=MODEL, prompt="Hi", max_tokens=0, stream=stream)
    assert raised.value.status_code == 400
    assert "max_tokens" in raised.value.message
    assert raised.value.param == "max_tokens"
    assert raised.value.type == "invalid_request_error"
