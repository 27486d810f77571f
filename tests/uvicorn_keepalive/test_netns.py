"""End to end through an idle-dropping router, in network namespaces: late replies, dead peers.

The lab (tests/uvicorn_keepalive/netns.py) joins a client, a router and a server namespace; the
router forwards only new SYNs and flows conntrack holds as ESTABLISHED, and forgets a flow idle
for ESTABLISHED_TIMEOUT seconds. The stock and the keepalive server run side by side in the
server namespace (tests/uvicorn_keepalive/netns_server.py), their curl clients side by side in
the client namespace, so that each test waits once for both outcomes.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest

from tests.uvicorn_keepalive.netns import (
    COMMAND_TIMEOUT,
    SERVER_ADDRESS,
    Lab,
    NetnsUnavailableError,
    build_lab,
)

pytestmark = pytest.mark.netns

# The router forgets a flow idle for this many seconds; the late reply comes after twice that.
ESTABLISHED_TIMEOUT = 4
REPLY_AFTER = 2 * ESTABLISHED_TIMEOUT + 1.0
# Long enough for a reply that is not lost to arrive with room to spare.
CLIENT_MAX_TIME = REPLY_AFTER + 4.0

# Short keepalive timers: idle, interval, count. A dead peer is declared after
# idle + interval x count seconds of silence (tcp(7): tcp_keepalive_*).
IDLE, INTERVAL, COUNT = 1, 1, 3
DEAD_PEER_DEADLINE = IDLE + INTERVAL * COUNT + 2.0
# The same timers for `--http uvicorn_keepalive:Protocol`, the command-line way.
KEEPALIVE_ENVIRONMENT = {
    "UVICORN_KEEPALIVE_IDLE": str(IDLE),
    "UVICORN_KEEPALIVE_INTERVAL": str(INTERVAL),
    "UVICORN_KEEPALIVE_COUNT": str(COUNT),
}
# The servers each test runs side by side: name -> netns_server.py arguments after the host.
# Stock uvicorn, and uvicorn_keepalive.Protocol configured both ways (in Python and, as the
# command line does, from the environment), on both event loops that uvicorn runs: each
# keepalive server must show the fix, since a probe timeout reaches the app through the loop's
# transport (ETIMEDOUT -> connection_lost).
SERVER_ARGUMENTS = {
    "stock": ["stock"],
    "protocol on uvloop": ["--loop", "uvloop", "protocol", str(IDLE), str(INTERVAL), str(COUNT)],
    "protocol on asyncio": ["--loop", "asyncio", "protocol", str(IDLE), str(INTERVAL), str(COUNT)],
    "environment": ["environment"],
}
KEEPALIVE_VARIANTS = tuple(name for name in SERVER_ARGUMENTS if name != "stock")

SERVER_SCRIPT = Path(__file__).with_name("netns_server.py")
CLIENT_SCRIPT = Path(__file__).with_name("netns_client.py")
# The clients: none sets socket options of its own; the last two get the package's.
CLIENTS = ("httpx", "httpx-options", "aiohttp-factory")
SERVER_START_TIMEOUT = 15.0


@dataclass
class Server:
    """A netns_server.py process and the events it reports, stamped on arrival."""

    process: subprocess.Popen[str]
    stderr_path: Path
    events: queue.Queue[tuple[float, dict[str, Any]]] = field(default_factory=queue.Queue)
    seen: list[tuple[float, dict[str, Any]]] = field(default_factory=list)

    reader: threading.Thread = field(init=False)

    def __post_init__(self) -> None:
        self.reader = threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True)
        self.reader.start()

    def _read(self, stdout: IO[str]) -> None:
        # Stamped here, on arrival, so that no clock is compared across processes.
        for line in stdout:
            self.events.put((time.monotonic(), json.loads(line)))

    def wait_for(self, name: str, deadline: float) -> tuple[float, dict[str, Any]] | None:
        """Return (arrival time, event) of the first event called ``name``, or None at deadline.

        ``deadline`` is on the ``time.monotonic()`` clock.
        """
        for arrival, event in self.seen:
            if event["event"] == name:
                return arrival, event
        while True:
            remaining = deadline - time.monotonic()
            try:
                # Past the deadline, still take what has already arrived.
                arrival, event = self.events.get(block=remaining > 0, timeout=max(remaining, 0))
            except queue.Empty:
                return None
            self.seen.append((arrival, event))
            if event["event"] == name:
                return arrival, event

    def diagnostics(self) -> str:
        """What the server reported and logged, for assertion messages."""
        self.wait_for("", time.monotonic())  # take in every event that has arrived
        return f"events {[e for _, e in self.seen]}, stderr {self.stderr_path.read_text()!r}"


class Processes:
    """Processes started in a lab; all are ended (and reaped) at teardown."""

    def __init__(self, lab: Lab, log_dir: Path) -> None:
        self.lab = lab
        self.log_dir = log_dir
        self.started: list[subprocess.Popen[str]] = []
        self.readers: list[threading.Thread] = []

    def start(
        self,
        namespace: str,
        *argv: str,
        stderr: IO[str] | int,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.Popen[str]:
        """Start ``argv`` in ``namespace`` with a piped standard output.

        ``env``, when given, is added to this process's environment.
        """
        process = subprocess.Popen(
            ["ip", "netns", "exec", namespace, *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=None if env is None else {**os.environ, **env},
        )
        self.started.append(process)
        return process

    def servers(
        self, names: Sequence[str] = tuple(SERVER_ARGUMENTS)
    ) -> dict[str, tuple[Server, str]]:
        """Start the servers of SERVER_ARGUMENTS called ``names`` in the server namespace.

        Returns:
            Each server and its base URL by name, once every one of them listens.
        """
        started = {}
        for name in names:
            arguments = SERVER_ARGUMENTS[name]
            stderr_path = self.log_dir / f"server-{name.replace(' ', '-')}.stderr"
            with stderr_path.open("w") as stderr:
                process = self.start(
                    self.lab.server,
                    sys.executable, str(SERVER_SCRIPT), SERVER_ADDRESS, *arguments,
                    stderr=stderr,
                    env=KEEPALIVE_ENVIRONMENT if "environment" in arguments else None,
                )  # fmt: skip
            started[name] = server = Server(process, stderr_path)
            self.readers.append(server.reader)
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        urls = {}
        for name, server in started.items():
            listening = server.wait_for("listening", deadline)
            assert listening is not None, f"{name} server did not start: {server.diagnostics()}"
            urls[name] = server, f"http://{SERVER_ADDRESS}:{listening[1]['port']}"
        return urls

    def curl(self, url: str, max_time: float) -> subprocess.Popen[str]:
        """Start curl in the client namespace, without TCP keepalive of its own."""
        return self.start(
            self.lab.client,
            "curl", "--silent", "--show-error", "--no-keepalive",
            "--max-time", str(max_time), url,
            stderr=subprocess.PIPE,
        )  # fmt: skip

    def client(self, kind: str, url: str, max_time: float) -> subprocess.Popen[str]:
        """Start netns_client.py ``kind`` in the client namespace, with the short timers."""
        return self.start(
            self.lab.client,
            sys.executable, str(CLIENT_SCRIPT), kind, url, str(max_time),
            str(IDLE), str(INTERVAL), str(COUNT),
            stderr=subprocess.PIPE,
            env={"PYTHONPATH": str(SERVER_SCRIPT.parents[2])},
        )  # fmt: skip

    def end_all(self) -> None:
        """Kill every process still running, reap it, and close its pipes.

        SIGKILL rather than SIGTERM: uvicorn's graceful shutdown would wait for the request
        that the dead-peer test leaves hanging on purpose.
        """
        for process in self.started:
            if process.poll() is None:
                process.kill()
        for process in self.started:
            process.wait(timeout=COMMAND_TIMEOUT)
        # A reader ends at end of file, which the kill brought; only then may its pipe close.
        for reader in self.readers:
            reader.join(timeout=COMMAND_TIMEOUT)
        for process in self.started:
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    stream.close()


@pytest.fixture
def lab() -> Iterator[Lab]:
    with contextlib.ExitStack() as stack:
        try:
            built = stack.enter_context(build_lab(ESTABLISHED_TIMEOUT))
        except NetnsUnavailableError as error:
            pytest.skip(str(error))
        yield built


@pytest.fixture
def processes(lab: Lab, tmp_path: Path) -> Iterator[Processes]:
    started = Processes(lab, tmp_path)
    try:
        yield started
    finally:
        started.end_all()


def test_late_reply_is_lost_with_stock_uvicorn_and_delivered_with_keepalive(
    processes: Processes,
) -> None:
    """A reply sent after the router forgot the idle flow never arrives.

    Keepalive probes every second keep the router's conntrack entry alive, so the same late
    reply reaches the client.
    """
    servers = processes.servers()
    started = time.monotonic()
    clients = {
        variant: processes.curl(f"{url}/reply-after/{REPLY_AFTER}", CLIENT_MAX_TIME)
        for variant, (_, url) in servers.items()
    }
    outcomes = {}  # variant: (curl exit status, body, error, seconds until curl ended)
    # The keepalive clients first: they end first, and their time is measured as they do.
    for variant in (*KEEPALIVE_VARIANTS, "stock"):
        client = clients[variant]
        body, error = client.communicate(timeout=CLIENT_MAX_TIME + 5)
        outcomes[variant] = (client.returncode, body, error, time.monotonic() - started)
    print(  # shown with pytest -s: the figures of the run
        "; ".join(
            f"{variant}: curl exit {status} after {seconds:.1f} s"
            for variant, (status, _, _, seconds) in outcomes.items()
        )
    )

    for variant in KEEPALIVE_VARIANTS:
        status, body, error, seconds = outcomes[variant]
        assert (status, body) == (0, "done"), (
            f"{variant}: reply lost: curl {error!r}; server {servers[variant][0].diagnostics()}"
        )
        assert seconds >= REPLY_AFTER
    # The stock server did send its reply, and the router dropped it: curl timed out (exit 28).
    stock = servers["stock"][0]
    assert stock.wait_for("responded", time.monotonic()) is not None, stock.diagnostics()
    status, body, error, _ = outcomes["stock"]
    assert (status, body) == (28, ""), f"stock reply was not lost: curl exit {status}, {error!r}"


def test_dead_peer_is_reported_as_http_disconnect_only_with_keepalive(
    lab: Lab, processes: Processes
) -> None:
    """A client that vanishes mid-request is noticed only with keepalive.

    The client namespace starts dropping every packet once the app holds the request; the app
    then waits on ``receive()``. With keepalive, the unanswered probes end the connection with
    ETIMEDOUT after idle + interval x count seconds, and uvicorn hands the app
    ``http.disconnect``. Stock uvicorn waits on a silent connection and reports nothing.
    """
    servers = processes.servers()
    for _, url in servers.values():
        processes.curl(f"{url}/await-disconnect", max_time=60)
    request_deadline = time.monotonic() + 10
    for server, _ in servers.values():
        assert server.wait_for("request", request_deadline) is not None, server.diagnostics()

    lab.drop_all_traffic(lab.client)
    vanished = time.monotonic()
    deadline = vanished + DEAD_PEER_DEADLINE

    disconnects = {
        variant: server.wait_for("http.disconnect", deadline)
        for variant, (server, _) in servers.items()
    }
    waited = time.monotonic() - vanished
    print(  # shown with pytest -s: the figures of the run
        "; ".join(
            f"{variant}: http.disconnect "
            + ("none" if seen is None else f"{seen[0] - vanished:.2f} s after the client vanished")
            for variant, seen in disconnects.items()
        )
        + f" (waited {waited:.1f} s)"
    )

    for variant in KEEPALIVE_VARIANTS:
        assert disconnects[variant] is not None, (
            f"{variant}: no http.disconnect within {DEAD_PEER_DEADLINE} s: "
            f"{servers[variant][0].diagnostics()}"
        )
    assert disconnects["stock"] is None, (
        f"stock uvicorn saw the dead peer: {servers['stock'][0].diagnostics()}"
    )


def outcome(client: subprocess.Popen[str], timeout: float) -> dict[str, Any]:
    """The JSON line netns_client.py printed, once it ended."""
    out, error = client.communicate(timeout=timeout)
    assert client.returncode == 0, error
    result: dict[str, Any] = json.loads(out)
    return result


def test_a_client_with_the_options_gets_a_late_reply_from_a_stock_server(
    processes: Processes,
) -> None:
    """A client behind the idle-dropping router, calling stock uvicorn, which answers late.

    The server sends no probe; the client's own probes keep the router's entry alive.
    Without them the reply is dropped and the client waits until its timeout.
    """
    [(_, url)] = processes.servers(["stock"]).values()
    clients = {
        kind: processes.client(kind, f"{url}/reply-after/{REPLY_AFTER}", CLIENT_MAX_TIME)
        for kind in CLIENTS
    }
    outcomes = {kind: outcome(client, CLIENT_MAX_TIME + 15) for kind, client in clients.items()}
    print(outcomes)  # shown with pytest -s
    for kind in ("httpx-options", "aiohttp-factory"):
        assert outcomes[kind] == {"event": "response", "body": "done"}, kind
    lost = outcomes["httpx"]
    assert lost["event"] == "error"
    assert "Timeout" in lost["error"]
    assert lost["after"] >= CLIENT_MAX_TIME - 0.5


def test_a_client_with_the_options_detects_a_vanished_server(
    lab: Lab, processes: Processes
) -> None:
    """The server namespace goes silent while the clients wait for a reply: their probes go
    unanswered and the kernel resets each connection within idle + interval x count, which
    the client sees as an error. Without the options the client keeps waiting."""
    [(server, url)] = processes.servers(["stock"]).values()
    clients = {kind: processes.client(kind, f"{url}/await-disconnect", 60) for kind in CLIENTS}
    while sum(event["event"] == "request" for _, event in server.seen) < len(CLIENTS):
        server.seen.append(server.events.get(timeout=10))  # every request is held
    lab.drop_all_traffic(lab.server)
    vanished = time.monotonic()
    outcomes = {}
    for kind in ("httpx-options", "aiohttp-factory"):
        outcomes[kind] = outcome(clients[kind], DEAD_PEER_DEADLINE + 10)
        assert time.monotonic() - vanished <= DEAD_PEER_DEADLINE, kind
    print(outcomes)  # shown with pytest -s
    assert all(seen["event"] == "error" for seen in outcomes.values()), outcomes
    assert clients["httpx"].poll() is None  # still waiting, until end_all kills it
