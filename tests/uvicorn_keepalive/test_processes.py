"""uvicorn's CLI, uvicorn.run(workers=2) and gunicorn, each in its own process tree.

What the server applied is read from outside, as an operator would: ``ss -tno`` lists
the server's end of each connection with ``timer:(keepalive,<time left>,<probes>)``.
"""

from __future__ import annotations

import http.client
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.version import Version

from tests.live_server import RUNNING, ServerProcess, wait_for
from tests.uvicorn_keepalive.servers import expected, get, keepalive_timers


def connection_options(port: int) -> dict[str, int]:
    """What the server reads with getsockopt on its end of a new connection (own_options)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", "/")
        options: dict[str, int] = json.loads(connection.getresponse().read())
    finally:
        connection.close()
    return options


HERE = Path(__file__).resolve().parent
APP = "tests.uvicorn_keepalive.servers:hello"
OPTIONS_APP = "tests.uvicorn_keepalive.servers:own_options"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2)"),
]


@pytest.fixture
def servers() -> Iterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    yield started
    for server in started:
        server.stop()


def listening(port: int) -> bool:
    """Whether a socket listens on ``port``: with workers, uvicorn binds in the parent and
    each worker calls listen() after it logs "Started server process"."""
    command = ["ss", "-tlnH", f"( sport = :{port} )"]
    return bool(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def assert_served_with_idle(port: int, idle: int, connections: int = 4) -> None:
    """Open connections, get a response on each, and read their keepalive timers."""
    wait_for(lambda: listening(port))
    clients = [get(port)[0] for _ in range(connections)]
    try:
        timers = keepalive_timers(port)
        assert len(timers) == connections
        for left in timers:
            # The timer restarts at each packet: it reads idle minus a few seconds at most.
            assert idle - 10 < left <= idle, timers
    finally:
        for client in clients:
            client.close()


def uvicorn_cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "uvicorn", "--host", "127.0.0.1", "--port", "0", *args]


ENVIRONMENT = {
    "UVICORN_KEEPALIVE_IDLE": "41",
    "UVICORN_KEEPALIVE_INTERVAL": "7",
    "UVICORN_KEEPALIVE_COUNT": "4",
}


SAID = r"^INFO: +TCP keepalive: idle=41, interval=7, count=4, nodelay=True$"


def test_cli_warns_at_startup_and_says_the_settings_at_the_first_connection(
    servers: list[ServerProcess],
) -> None:
    server = ServerProcess(
        uvicorn_cli("--http", "uvicorn_keepalive:Protocol", APP),  # the default log level
        {**ENVIRONMENT, "UVICORN_KEEPALIVE_USER_TIMEOUT": "95000", "UVICORN_KEEPALIVE_IDEL": "30"},
    )
    servers.append(server)
    port = int(server.wait_for(RUNNING)[1])
    assert server.lines[0].rstrip("\n") == (
        "WARNING:  UVICORN_KEEPALIVE_IDEL is not a setting and is ignored; the "
        "settings are UVICORN_KEEPALIVE_IDLE, UVICORN_KEEPALIVE_INTERVAL, UVICORN_KEEPALIVE_COUNT, "
        "UVICORN_KEEPALIVE_USER_TIMEOUT, UVICORN_KEEPALIVE_NODELAY"
    )
    assert not any("TCP keepalive" in line for line in server.lines)
    assert_served_with_idle(port, idle=41)
    server.wait_for(
        r"^INFO: +TCP keepalive: idle=41, interval=7, count=4, user_timeout=95000, nodelay=True$"
    )
    assert sum("TCP keepalive" in line or "IDEL" in line for line in server.lines) == 2


def test_cli_with_two_workers_and_the_environment(servers: list[ServerProcess]) -> None:
    argv = uvicorn_cli("--http", "uvicorn_keepalive:Protocol", "--workers", "2", "--lifespan=off")
    server = ServerProcess([*argv, APP], ENVIRONMENT)
    servers.append(server)
    port = int(server.wait_for(RUNNING)[1])
    server.wait_for(r"Started server process", count=2)
    assert_served_with_idle(port, idle=41)
    server.wait_for(SAID)  # by each worker that accepted, at its first connection
    assert sum(bool(re.search(SAID, line)) for line in server.lines) <= 2


# uvicorn's supervisor stops when a worker exits with STARTUP_FAILURE from 0.50 on
# (uvicorn PR 3001); before, it respawns the worker, which fails again, until stopped.
SUPERVISOR_STOPS = Version(version("uvicorn")) >= Version("0.50")
# asyncio sets TCP_NODELAY on the connections of an IPPROTO_TCP listener only: uvicorn's
# `--workers` listener (`Config.bind_socket`) has proto 0 before uvicorn 0.55, IPPROTO_TCP since
# (https://github.com/Kludex/uvicorn/issues/3149).
STOCK_NODELAY = int(Version(version("uvicorn")) >= Version("0.55"))
BAD_IDLE = "UVICORN_KEEPALIVE_IDLE='0' is out of range: 1 to 32767 seconds"
NOT_DIGITS = "UVICORN_KEEPALIVE_IDLE='1_0' is not a decimal integer"


@pytest.mark.parametrize(("idle", "message"), [("0", BAD_IDLE), ("1_0", NOT_DIGITS)])
def test_cli_bad_variable_stops_startup_naming_it(
    servers: list[ServerProcess], idle: str, message: str
) -> None:
    server = ServerProcess(
        uvicorn_cli("--http", "uvicorn_keepalive:Protocol", APP),
        {**ENVIRONMENT, "UVICORN_KEEPALIVE_IDLE": idle},
    )
    servers.append(server)
    assert server.wait_exit() == 3  # uvicorn's STARTUP_FAILURE
    assert message in server.stderr
    assert "Application startup complete" not in server.stderr
    assert "Traceback" not in server.stderr


def test_cli_bad_variable_with_two_workers_never_serves(servers: list[ServerProcess]) -> None:
    server = ServerProcess(
        uvicorn_cli("--http", "uvicorn_keepalive:Protocol", "--workers", "2", APP),
        {**ENVIRONMENT, "UVICORN_KEEPALIVE_IDLE": "0"},
    )
    servers.append(server)
    if SUPERVISOR_STOPS:
        # The supervisor's own exit status is uvicorn's choice: 0.54 exits 0 after a
        # worker failed to boot, as it does for an app that cannot be imported.
        server.wait_exit()
        assert "failed to start, stopping the parent process" in server.stderr
    else:
        server.wait_for(re.escape(BAD_IDLE), count=3)  # the respawned workers fail alike
    assert BAD_IDLE in server.stderr
    assert "Application startup complete" not in server.stderr
    assert "Traceback" not in server.stderr


def test_uvicorn_run_with_two_workers_and_a_bad_variable_exits_3(
    servers: list[ServerProcess],
) -> None:
    # The parent looks up uvicorn_keepalive.Protocol before it starts a worker: it stops there.
    script = (
        "import uvicorn, uvicorn_keepalive\n"
        f"uvicorn.run({APP!r}, port=0, workers=2, http=uvicorn_keepalive.Protocol)\n"
    )
    server = ServerProcess([sys.executable, "-c", script], {"UVICORN_KEEPALIVE_INTERVAL": "0"})
    servers.append(server)
    assert server.wait_exit() == 3
    assert server.stderr == "UVICORN_KEEPALIVE_INTERVAL='0' is out of range: 1 to 32767 seconds\n"


@pytest.mark.parametrize("http", ["httptools", "h11"])
def test_uvicorn_run_pickles_protocol_into_two_workers(
    servers: list[ServerProcess], http: str
) -> None:
    script = (
        "import uvicorn, uvicorn_keepalive\n"
        f"http = uvicorn_keepalive.protocol(idle=43, interval=6, count=5, http={http!r})\n"
        f"uvicorn.run({APP!r}, host='127.0.0.1', port=0, workers=2, lifespan='off', http=http)\n"
    )
    server = ServerProcess([sys.executable, "-c", script], {})
    servers.append(server)
    port = int(server.wait_for(RUNNING)[1])
    server.wait_for(r"Started server process", count=2)
    assert_served_with_idle(port, idle=43)
    # Unpickled before the worker set up logging: said at the worker's first connection.
    server.wait_for(r"^INFO: +TCP keepalive: idle=43, interval=6, count=5, nodelay=True$")


def test_uvicorn_run_pickles_the_public_class_into_two_workers(
    servers: list[ServerProcess],
) -> None:
    # Each worker unpickles Protocol through the startup hook: it reads the environment.
    script = (
        "import uvicorn, uvicorn_keepalive\n"
        f"uvicorn.run({APP!r}, host='127.0.0.1', port=0, workers=2, lifespan='off',"
        " http=uvicorn_keepalive.Protocol)\n"
    )
    server = ServerProcess(
        [sys.executable, "-c", script], {**ENVIRONMENT, "UVICORN_KEEPALIVE_IDLE": "47"}
    )
    servers.append(server)
    port = int(server.wait_for(RUNNING)[1])
    server.wait_for(r"Started server process", count=2)
    assert_served_with_idle(port, idle=47)


# A server library's start: its settings validated (a ValueError reported its own way), then
# its own uvicorn.Config with the user's http= choice, keepalive kept.
LIBRARY = (
    "import sys, uvicorn, uvicorn_keepalive\n"
    "try:\n"
    "    http = uvicorn_keepalive.protocol(http=sys.argv[1])\n"
    "except ValueError as exc:\n"
    "    sys.exit(f'mylib: bad setting: {exc}')\n"
    f"config = uvicorn.Config({OPTIONS_APP!r}, host='127.0.0.1', port=0, http=http)\n"
    "uvicorn.Server(config).run()\n"
)


@pytest.mark.parametrize("http", ["auto", "h11", "httptools"])
def test_a_library_embedding_protocol_keeps_the_users_http(
    servers: list[ServerProcess], http: str
) -> None:
    server = ServerProcess([sys.executable, "-c", LIBRARY, http], ENVIRONMENT)
    servers.append(server)
    port = int(server.wait_for(RUNNING)[1])
    assert connection_options(port) == expected(41, 7, 4)


def test_a_library_embedding_protocol_gets_a_value_error_before_any_server(
    servers: list[ServerProcess],
) -> None:
    server = ServerProcess(
        [sys.executable, "-c", LIBRARY, "auto"], {"UVICORN_KEEPALIVE_COUNT": "0"}
    )
    servers.append(server)
    assert server.wait_exit() == 1
    assert (
        server.stderr
        == "mylib: bad setting: UVICORN_KEEPALIVE_COUNT='0' is out of range: 1 to 127 probes\n"
    )


def gunicorn(*args: str) -> list[str]:
    return [sys.executable, "-m", "gunicorn", "--bind", "127.0.0.1:0", "--workers", "1", *args]


@pytest.mark.parametrize("worker", ["UvicornWorker", "UvicornH11Worker"])
def test_gunicorn_worker(servers: list[ServerProcess], worker: str) -> None:
    server = ServerProcess(
        gunicorn("-k", f"uvicorn_keepalive.workers.{worker}", APP),
        {**ENVIRONMENT, "UVICORN_KEEPALIVE_IDLE": "44"},
    )
    servers.append(server)
    port = int(server.wait_for(r"Listening at: http://127\.0\.0\.1:(\d+)")[1])
    server.wait_for(r"Application startup complete|Started server process")
    assert_served_with_idle(port, idle=44)
    server.wait_for(r"\[INFO\] TCP keepalive: idle=44, interval=7, count=4, nodelay=True$")


@pytest.mark.parametrize(
    ("http", "environment", "nodelay"),
    [
        ("uvicorn_keepalive:Protocol", {}, 1),
        ("uvicorn_keepalive:H11Protocol", {}, 1),
        ("uvicorn_keepalive:Protocol", {"UVICORN_KEEPALIVE_NODELAY": "0"}, STOCK_NODELAY),
        ("httptools", {}, STOCK_NODELAY),
    ],
)
def test_nodelay_with_two_workers_on_asyncio(
    servers: list[ServerProcess], http: str, environment: dict[str, str], nodelay: int
) -> None:
    argv = uvicorn_cli("--http", http, "--workers", "2", "--loop", "asyncio", "--lifespan=off")
    server = ServerProcess([*argv, OPTIONS_APP], {**ENVIRONMENT, **environment})
    servers.append(server)
    port = int(server.wait_for(RUNNING)[1])
    server.wait_for(r"Started server process", count=2)
    wait_for(lambda: listening(port))
    for _ in range(4):  # whichever worker accepts
        options = connection_options(port)
        assert options["TCP_NODELAY"] == nodelay
        assert options["SO_KEEPALIVE"] == (0 if http == "httptools" else 1)


@pytest.mark.parametrize(
    ("worker", "keepalive"),
    [
        ("uvicorn_keepalive.workers.UvicornWorker", expected(60, 10, 3)),
        ("uvicorn_keepalive.workers.UvicornH11Worker", expected(60, 10, 3)),
        # Stock uvicorn-worker has TCP_NODELAY too: gunicorn sets it on its TCP listener
        # (TCPSocket.set_options in gunicorn/sock.py) and Linux's accepted sockets inherit it,
        # on uvloop (UvicornWorker) and on asyncio (UvicornH11Worker) alike.
        ("uvicorn_worker.UvicornWorker", {"SO_KEEPALIVE": 0, "TCP_NODELAY": 1}),
        ("uvicorn_worker.UvicornH11Worker", {"SO_KEEPALIVE": 0, "TCP_NODELAY": 1}),
    ],
)
def test_nodelay_under_gunicorn_per_worker_class(
    servers: list[ServerProcess], worker: str, keepalive: dict[str, int]
) -> None:
    server = ServerProcess(gunicorn("-k", worker, OPTIONS_APP), {})
    servers.append(server)
    port = int(server.wait_for(r"Listening at: http://127\.0\.0\.1:(\d+)")[1])
    server.wait_for(r"Application startup complete|Started server process")
    options = connection_options(port)
    assert {name: options[name] for name in keepalive} == keepalive


def test_gunicorn_bad_variable_stops_the_arbiter(servers: list[ServerProcess]) -> None:
    server = ServerProcess(
        gunicorn("-k", "uvicorn_keepalive.workers.UvicornWorker", APP),
        {"UVICORN_KEEPALIVE_COUNT": "500"},
    )
    servers.append(server)
    assert server.wait_exit() == 3
    assert "UVICORN_KEEPALIVE_COUNT='500' is out of range: 1 to 127 probes" in server.stderr
    assert "Booting worker" not in server.stderr
