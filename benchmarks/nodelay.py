"""Request latency on a reused connection with --workers 2 against one worker, and churn.

    .venv/bin/python -m benchmarks.nodelay [--rounds 5] [--requests 400] [--churn-seconds 5]

Each configuration is a ``uvicorn --loop asyncio`` process serving a trivial ASGI app on
127.0.0.1; the rounds interleave the configurations. Latency: the median time of a small
request on one reused HTTP/1.1 connection (http.client). uvicorn writes a response's head and
body separately: without TCP_NODELAY, Nagle's algorithm holds the body until the client's
delayed ACK of the head. Churn: requests per second of wrk sending ``Connection: close``
(a new connection per request) with one worker, uvicorn-keepalive against stock uvicorn.
Medians over the rounds and their ratios are printed at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator

APP = "benchmarks.nodelay:app"
LATENCY = {  # name: (--http, --workers)
    "stock, 1 worker": ("httptools", 1),
    "stock, 2 workers": ("httptools", 2),
    "keepalive, 1 worker": ("uvicorn_keepalive:Protocol", 1),
    "keepalive, 2 workers": ("uvicorn_keepalive:Protocol", 2),
}
CHURN = {"stock": "httptools", "keepalive": "uvicorn_keepalive:Protocol"}


async def app(scope: dict[str, object], receive: object, send: object) -> None:
    """Answer ``{"ok":true}`` (an empty app's response)."""
    if scope["type"] != "http":
        return
    body = b'{"ok":true}'
    headers = [(b"content-type", b"application/json"), (b"content-length", b"11")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})  # type: ignore[operator]
    await send({"type": "http.response.body", "body": body})  # type: ignore[operator]


@contextlib.contextmanager
def server(http: str, workers: int) -> Iterator[int]:
    """Run uvicorn on a free port until the block ends; yield the port once it answers."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "uvicorn", APP, "--port", str(port), "--http", http,
               "--workers", str(workers), "--loop", "asyncio", "--no-access-log",
               "--log-level", "warning", "--lifespan", "off"]  # fmt: skip
    process = subprocess.Popen(command, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"{command} did not start") from None
                time.sleep(0.1)
        yield port
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)


def latency(port: int, requests: int) -> float:
    """Median seconds of one GET on a reused connection (after 20 to warm up)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    times = []
    for index in range(requests + 20):
        started = time.perf_counter()
        connection.request("POST", "/", body=b"{}", headers={"content-type": "application/json"})
        connection.getresponse().read()
        if index >= 20:
            times.append(time.perf_counter() - started)
    connection.close()
    return statistics.median(times)


def churn(port: int, seconds: int) -> float:
    """Requests per second of wrk, one connection per request."""
    wrk = shutil.which("wrk")
    assert wrk, "wrk is not installed (scripts/system-packages installs it)"
    command = [wrk, "-t1", "-c16", f"-d{seconds}s", "-H", "Connection: close",
               f"http://127.0.0.1:{port}/"]  # fmt: skip
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    match = re.search(r"Requests/sec:\s+([\d.]+)", output)
    assert match, output
    return float(match[1])


def main() -> None:
    """Measure, interleaved, and print the medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--churn-seconds", type=int, default=5)
    parser.add_argument("--churn-only", action="store_true", help="skip the latency part")
    arguments = parser.parse_args()
    latency_configs = {} if arguments.churn_only else LATENCY
    seen: dict[str, list[float]] = {name: [] for name in [*LATENCY, *CHURN]}
    for round_number in range(arguments.rounds):
        for name, (http_class, workers) in latency_configs.items():
            with server(http_class, workers) as port:
                seen[name].append(latency(port, arguments.requests))
        for name, http_class in CHURN.items():
            with server(http_class, 1) as port:
                seen[name].append(churn(port, arguments.churn_seconds))
        print(f"round {round_number + 1} of {arguments.rounds} done", file=sys.stderr)
    median = {name: statistics.median(values) for name, values in seen.items() if values}
    if latency_configs:
        print("Median request latency on a reused connection (--loop asyncio):")
        for name in LATENCY:
            print(f"  {name:22} {median[name] * 1000:8.3f} ms")
        for kind in ("stock", "keepalive"):
            ratio = median[f"{kind}, 2 workers"] / median[f"{kind}, 1 worker"]
            print(f"  {kind}: 2 workers / 1 worker = {ratio:.2f}x")
    print("Connection churn, one worker (wrk -c16, Connection: close):")
    for name in CHURN:
        print(f"  {name:10} {median[name]:10.0f} requests/s")
    print(f"  keepalive / stock = {median['keepalive'] / median['stock']:.3f}x")


if __name__ == "__main__":
    main()
