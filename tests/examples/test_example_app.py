"""The example model server, served the way scripts/demo serves it, over real HTTP.

A real uvicorn process (``--http uvicorn_keepalive:Protocol``, port 0) and a real
client; the keepalive timer is read back from the kernel with ``ss``. scripts/demo
itself runs on a free port (its own .venv-demo, created on its first run) and
answers the curl line it prints; on a taken port it stops before announcing a URL.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import IO

import httpx
import pytest

from examples.model_server import Completion, Health, ModelList
from tests.live_server import ServerProcess
from tests.paths import ROOT
from tests.uvicorn_keepalive.servers import keepalive_timers

STARTUP_TIMEOUT = 30.0
# scripts/demo creates .venv-demo on its first run: pip downloads and installs.
DEMO_INSTALL_TIMEOUT = 300.0
KEEPALIVE_IDLE = 45  # seconds; not the default 60, to show the environment is read


def wait_for_line(
    stream: IO[str], pattern: str, seen: list[str], timeout: float = STARTUP_TIMEOUT
) -> re.Match[str]:
    """Read ``stream`` until a line matches ``pattern``; fail at EOF or after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            break
        seen.append(line)
        match = re.search(pattern, line)
        if match:
            return match
    raise AssertionError(f"no line matching {pattern!r}:\n{''.join(seen)}")


def stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The example app under ``python -m uvicorn --http uvicorn_keepalive:Protocol``."""
    server = ServerProcess(
        [
            *(sys.executable, "-m", "uvicorn", "--app-dir", "examples"),
            *("--http", "uvicorn_keepalive:Protocol", "--host", "127.0.0.1", "--port", "0"),
            "model_server:app",
        ],
        {"UVICORN_KEEPALIVE_IDLE": str(KEEPALIVE_IDLE)},
    )
    try:
        yield f"http://127.0.0.1:{server.port()}"
    finally:
        server.stop()


@pytest.fixture
def client(server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server, timeout=30) as client:
        yield client


def test_health(client: httpx.Client) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert Health.model_validate_json(response.content) == Health(status="ok", model="toy-lm-1")


def test_models(client: httpx.Client) -> None:
    response = client.get("/v1/models")
    assert response.status_code == 200
    assert [card.id for card in ModelList.model_validate_json(response.content).data] == [
        "toy-lm-1"
    ]


def test_completion_carries_token_ids_and_logprobs(client: httpx.Client) -> None:
    body = {"prompt": "Hello", "max_tokens": 4096, "seed": 7}
    response = client.post("/v1/completions", json=body)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-model"] == "toy-lm-1"  # set on the injected Response
    completion = Completion.model_validate_json(response.content)
    assert completion.object == "text_completion"
    assert completion.prompt_token_ids == list(b"Hello")
    (choice,) = completion.choices
    assert len(choice.token_ids) == 4096
    assert choice.logprobs is not None
    assert len(choice.logprobs) == 4096
    assert all(logprob <= 0 for logprob in choice.logprobs)
    assert completion.usage.total_tokens == 5 + 4096
    # Same seed, same tokens.
    again = Completion.model_validate_json(client.post("/v1/completions", json=body).content)
    assert again.choices[0].token_ids == choice.token_ids


def test_completion_without_logprobs_sends_null(client: httpx.Client) -> None:
    response = client.post("/v1/completions", json={"prompt": "x", "logprobs": False})
    assert response.status_code == 200
    assert response.json()["choices"][0]["logprobs"] is None


def test_invalid_request_is_rejected_in_openais_error_shape(client: httpx.Client) -> None:
    response = client.post("/v1/completions", json={"prompt": "x", "max_tokens": 0})
    assert response.status_code == 400
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["param"] == "max_tokens"


def test_openapi_documents_the_endpoints_and_their_models(client: httpx.Client) -> None:
    document = client.get("/openapi.json").json()
    assert set(document["paths"]) == {
        "/health",
        "/v1/models",
        "/v1/completions",
        "/v1/chat/completions",
    }
    completions = document["paths"]["/v1/completions"]["post"]
    content = completions["responses"]["200"]["content"]
    assert content["application/json"]["schema"] == {"$ref": "#/components/schemas/Completion"}
    # The stream of the same path, as FastAPI documents a Server-Sent Events route's events.
    data = content["text/event-stream"]["itemSchema"]["properties"]["data"]
    assert data["contentMediaType"] == "application/json"
    assert {"$ref": "#/components/schemas/CompletionChunk"} in data["contentSchema"]["anyOf"]
    assert completions["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/CompletionRequest"
    }


@pytest.mark.skipif(
    shutil.which("ss") is None, reason="needs ss (iproute2); scripts/system-packages"
)
def test_connections_carry_the_keepalive_timer(client: httpx.Client, server: str) -> None:
    client.get("/health")  # the pooled connection stays open
    port = int(server.rsplit(":", 1)[1])
    timers = keepalive_timers(port)  # each server-side connection has one
    assert timers, f"no server-side connection on port {port}"
    # Counts down from UVICORN_KEEPALIVE_IDLE (the default, 60 s, would show more).
    assert all(0 < left <= KEEPALIVE_IDLE for left in timers), timers


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.mark.timeout(DEMO_INSTALL_TIMEOUT + 60)
def test_scripts_demo_serves_and_prints_a_working_curl_line() -> None:
    port = free_port()
    process = subprocess.Popen(
        [str(ROOT / "scripts" / "demo")],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        seen: list[str] = []
        curl = wait_for_line(process.stdout, r"^curl .*", seen, DEMO_INSTALL_TIMEOUT).group(0)
        stream_curl = wait_for_line(process.stdout, r"^curl -sN .*", seen).group(0)
        assert f"http://127.0.0.1:{port}/openapi.json" in "".join(seen)
        wait_for_line(process.stdout, r"Uvicorn running on http://127.0.0.1:\d+", seen)
        answer = subprocess.run(
            shlex.split(curl), capture_output=True, text=True, timeout=30, check=True
        )
        completion = Completion.model_validate_json(answer.stdout)
        assert len(completion.choices[0].token_ids) == 8
        # check=True: curl exits 0 only for a body that ended with the chunked terminator (18
        # is a partial transfer).
        streamed = subprocess.run(
            shlex.split(stream_curl), capture_output=True, text=True, timeout=30, check=True
        )
        assert streamed.stdout.count("data: {") == 8
        assert streamed.stdout.endswith("data: [DONE]\n\n")
    finally:
        stop(process)


@pytest.mark.timeout(DEMO_INSTALL_TIMEOUT + 60)
def test_scripts_demo_on_a_taken_port_says_so_before_serving() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [str(ROOT / "scripts" / "demo")],
            env={**os.environ, "PORT": str(port)},
            capture_output=True,
            text=True,
            timeout=DEMO_INSTALL_TIMEOUT,
            check=False,
        )
    assert done.returncode != 0
    assert f"port {port} on 127.0.0.1 is taken" in done.stderr
    assert "PORT=9000 scripts/demo" in done.stderr
    assert "serving" not in done.stdout + done.stderr
