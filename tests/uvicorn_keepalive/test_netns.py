"""End to end through an idle-dropping router, in three network namespaces (issue 2, tests 6-7).

The lab: a client namespace (192.0.2.2), a router namespace and a server namespace
(198.51.100.2), joined by two veth pairs; only RFC 5737 documentation addresses are used. The
router plays the stateful middlebox of the issue (a NAT gateway, a cloud load balancer): its
FORWARD chain drops everything except new SYNs and flows that conntrack holds as ESTABLISHED,
``nf_conntrack_tcp_loose=0`` stops conntrack from adopting a flow it has forgotten (a reply after
the entry expired is INVALID and dropped), and ``nf_conntrack_tcp_timeout_established`` is a few
seconds. Both sysctls are per network namespace
(https://docs.kernel.org/networking/nf_conntrack-sysctl.html), so the host is left untouched.

The stock and the keepalive server run side by side in the server namespace, and their clients
side by side in the client namespace, so that each test waits once for both outcomes.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest

pytestmark = pytest.mark.netns

CLIENT_ADDRESS = "192.0.2.2"
ROUTER_CLIENT_SIDE = "192.0.2.1"
ROUTER_SERVER_SIDE = "198.51.100.1"
SERVER_ADDRESS = "198.51.100.2"

# The router forgets a flow idle for this many seconds; the late reply comes after twice that.
ESTABLISHED_TIMEOUT = 4
REPLY_AFTER = 2 * ESTABLISHED_TIMEOUT + 1.0
# Long enough for a reply that is not lost to arrive with room to spare.
CLIENT_MAX_TIME = REPLY_AFTER + 4.0

# Short keepalive timers: idle, interval, count. A dead peer is declared after
# idle + interval x count seconds of silence (tcp(7): tcp_keepalive_*).
IDLE, INTERVAL, COUNT = 1, 1, 3
DEAD_PEER_DEADLINE = IDLE + INTERVAL * COUNT + 2.0

SERVER_SCRIPT = Path(__file__).with_name("netns_server.py")
SERVER_START_TIMEOUT = 15.0
# A single `ip` / `iptables` / `sysctl` call never takes long; a hung one must not hang the run.
COMMAND_TIMEOUT = 10.0

_lab_numbers = itertools.count()


class NetnsUnavailableError(Exception):
    """This machine lacks a capability the lab needs (root, a program, netns, conntrack)."""


def _run(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(
        argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT, check=False
    )
    if completed.returncode != 0:
        raise subprocess.CalledProcessError(
            completed.returncode, argv, completed.stdout, completed.stderr
        )
    return completed


def _describe(error: subprocess.CalledProcessError) -> str:
    return f"`{' '.join(error.cmd)}` exited {error.returncode}: {str(error.stderr).strip()}"


@dataclass(frozen=True)
class Lab:
    """The three namespaces of a running lab, by name.

    Attributes:
        client: namespace of the client, default route via the router.
        router: namespace of the router, which forwards between both sides.
        server: namespace of the server, default route via the router.
        iptables: the iptables program that worked here (``iptables`` or ``iptables-legacy``).
    """

    client: str
    router: str
    server: str
    iptables: str

    def drop_all_traffic(self, namespace: str) -> None:
        """Make ``namespace`` silently discard every packet it receives or would send."""
        for chain in ("INPUT", "OUTPUT"):
            _run(["ip", "netns", "exec", namespace, self.iptables, "-A", chain, "-j", "DROP"])


def _check_prerequisites() -> None:
    if os.geteuid() != 0:
        raise NetnsUnavailableError("network namespaces need root (euid is not 0)")
    for program in ("ip", "iptables", "curl"):
        if shutil.which(program) is None:
            raise NetnsUnavailableError(
                f"`{program}` is not installed (scripts/system-packages installs it)"
            )


def _make_router_stateful(router: str, established_timeout: int) -> str:
    """Install the conntrack-only forwarding policy; return the iptables that accepted it."""
    # The policy comes last, so a backend that rejects the match never leaves a dropping chain.
    rules = [
        ["-A", "FORWARD", "-m", "conntrack", "--ctstate", "ESTABLISHED", "-j", "ACCEPT"],
        ["-A", "FORWARD", "-p", "tcp", "--syn", "-m", "conntrack", "--ctstate", "NEW",
         "-j", "ACCEPT"],
        ["-P", "FORWARD", "DROP"],
    ]  # fmt: skip
    # The conntrack match loads conntrack (where it is a module) and starts tracking in this
    # namespace. Debian's `iptables` drives nf_tables; `iptables-legacy` serves a kernel that
    # was built with the legacy xtables only.
    failures: list[str] = []
    for iptables in ("iptables", "iptables-legacy"):
        if shutil.which(iptables) is None:
            continue
        try:
            for rule in rules:
                _run(["ip", "netns", "exec", router, iptables, *rule])
        except subprocess.CalledProcessError as error:
            failures.append(_describe(error))
            subprocess.run(
                ["ip", "netns", "exec", router, iptables, "-F", "FORWARD"],
                capture_output=True,
                timeout=COMMAND_TIMEOUT,
                check=False,
            )
            continue
        break
    else:
        raise NetnsUnavailableError(f"the iptables conntrack match is unavailable: {failures}")
    loose = "/proc/sys/net/netfilter/nf_conntrack_tcp_loose"
    try:
        _run(["ip", "netns", "exec", router, "test", "-e", loose])
    except subprocess.CalledProcessError as error:
        raise NetnsUnavailableError(
            f"conntrack is unavailable: no {loose} in a namespace"
        ) from error
    _run([
        "ip", "netns", "exec", router, "sysctl", "-q", "-w",
        "net.ipv4.ip_forward=1",
        "net.netfilter.nf_conntrack_tcp_loose=0",
        f"net.netfilter.nf_conntrack_tcp_timeout_established={established_timeout}",
    ])  # fmt: skip
    return iptables


@contextlib.contextmanager
def build_lab(established_timeout: int) -> Iterator[Lab]:
    """Build the client / router / server lab; delete its namespaces on exit, even on failure.

    Deleting a namespace removes its veth ends, iptables rules and conntrack table with it.
    Processes started in the lab must be ended before the context exits.

    Raises:
        NetnsUnavailableError: a capability is missing; the message names it.
    """
    _check_prerequisites()
    prefix = f"uvicorn-keepalive-{os.getpid()}-{next(_lab_numbers)}"
    client, router, server = f"{prefix}-client", f"{prefix}-router", f"{prefix}-server"
    created: list[str] = []
    try:
        for name in (client, router, server):
            try:
                _run(["ip", "netns", "add", name])
            except subprocess.CalledProcessError as error:
                raise NetnsUnavailableError(
                    f"cannot create a namespace: {_describe(error)}"
                ) from error
            created.append(name)
        # Both ends of each veth pair are created inside their namespaces: no interface name
        # ever appears in the host namespace, where a parallel run could collide with it.
        _run(["ip", "link", "add", "c0", "netns", client, "type", "veth",
              "peer", "name", "r0", "netns", router])  # fmt: skip
        _run(["ip", "link", "add", "s0", "netns", server, "type", "veth",
              "peer", "name", "r1", "netns", router])  # fmt: skip
        for namespace, device, address, gateway in (
            (client, "c0", CLIENT_ADDRESS, ROUTER_CLIENT_SIDE),
            (server, "s0", SERVER_ADDRESS, ROUTER_SERVER_SIDE),
            (router, "r0", ROUTER_CLIENT_SIDE, None),
            (router, "r1", ROUTER_SERVER_SIDE, None),
        ):
            _run(["ip", "-n", namespace, "address", "add", f"{address}/24", "dev", device])
            _run(["ip", "-n", namespace, "link", "set", device, "up"])
            if gateway is not None:
                _run(["ip", "-n", namespace, "route", "add", "default", "via", gateway])
        for namespace in created:
            _run(["ip", "-n", namespace, "link", "set", "lo", "up"])
        iptables = _make_router_stateful(router, established_timeout)
        yield Lab(client=client, router=router, server=server, iptables=iptables)
    finally:
        for name in reversed(created):
            subprocess.run(
                ["ip", "netns", "delete", name],
                capture_output=True,
                timeout=COMMAND_TIMEOUT,
                check=False,
            )


@dataclass
class Server:
    """A netns_server.py process and the events it reports, stamped on arrival."""

    process: subprocess.Popen[str]
    stderr_path: Path
    events: queue.Queue[tuple[float, dict[str, Any]]] = field(default_factory=queue.Queue)
    seen: list[tuple[float, dict[str, Any]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()

    def _read(self, stdout: IO[str]) -> None:
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
        return f"events {[e for _, e in self.seen]}, stderr {self.stderr_path.read_text()!r}"


class Processes:
    """Processes started in a lab; all are ended (and reaped) at teardown."""

    def __init__(self, lab: Lab, log_dir: Path) -> None:
        self.lab = lab
        self.log_dir = log_dir
        self.started: list[subprocess.Popen[str]] = []

    def start(self, namespace: str, *argv: str, stderr: IO[str] | int) -> subprocess.Popen[str]:
        """Start ``argv`` in ``namespace`` with a piped standard output."""
        process = subprocess.Popen(
            ["ip", "netns", "exec", namespace, *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        self.started.append(process)
        return process

    def server(self, variant: str) -> tuple[Server, str]:
        """Start the server script in the server namespace; return it and its base URL.

        Args:
            variant: ``"stock"`` (uvicorn's httptools protocol) or ``"keepalive"``
                (``uvicorn_keepalive.protocol(IDLE, INTERVAL, COUNT)``).
        """
        timers = [str(IDLE), str(INTERVAL), str(COUNT)] if variant == "keepalive" else []
        stderr_path = self.log_dir / f"server-{variant}.stderr"
        with stderr_path.open("w") as stderr:
            process = self.start(
                self.lab.server,
                sys.executable,
                str(SERVER_SCRIPT),
                SERVER_ADDRESS,
                variant,
                *timers,
                stderr=stderr,
            )
        server = Server(process, stderr_path)
        listening = server.wait_for("listening", time.monotonic() + SERVER_START_TIMEOUT)
        assert listening is not None, f"{variant} server did not start: {server.diagnostics()}"
        return server, f"http://{SERVER_ADDRESS}:{listening[1]['port']}"

    def curl(self, url: str, max_time: float) -> subprocess.Popen[str]:
        """Start curl in the client namespace, without TCP keepalive of its own."""
        return self.start(
            self.lab.client,
            "curl", "--silent", "--show-error", "--no-keepalive",
            "--max-time", str(max_time), url,
            stderr=subprocess.PIPE,
        )  # fmt: skip

    def end_all(self) -> None:
        """Terminate every process still running, kill it if it lingers, and reap it."""
        for process in self.started:
            if process.poll() is None:
                process.terminate()
        for process in self.started:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
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
    """Issue 2, test 6: a reply sent after the router forgot the idle flow never arrives.

    Keepalive probes every second keep the router's conntrack entry alive, so the same late
    reply reaches the client.
    """
    stock, stock_url = processes.server("stock")
    keepalive, keepalive_url = processes.server("keepalive")
    started = time.monotonic()
    stock_client = processes.curl(f"{stock_url}/reply-after/{REPLY_AFTER}", CLIENT_MAX_TIME)
    keepalive_client = processes.curl(f"{keepalive_url}/reply-after/{REPLY_AFTER}", CLIENT_MAX_TIME)

    keepalive_body, keepalive_error = keepalive_client.communicate(timeout=CLIENT_MAX_TIME + 5)
    keepalive_elapsed = time.monotonic() - started
    stock_body, stock_error = stock_client.communicate(timeout=CLIENT_MAX_TIME + 5)
    stock_elapsed = time.monotonic() - started
    print(  # shown with pytest -s: the figures of the run
        f"keepalive: reply after {keepalive_elapsed:.1f} s; "
        f"stock: curl gave up after {stock_elapsed:.1f} s (exit {stock_client.returncode})"
    )

    assert (keepalive_client.returncode, keepalive_body) == (0, "done"), (
        f"keepalive reply lost: curl {keepalive_error!r}; server {keepalive.diagnostics()}"
    )
    assert keepalive_elapsed >= REPLY_AFTER
    # The stock server did send its reply, and the router dropped it: curl timed out (exit 28).
    assert stock.wait_for("responded", time.monotonic()) is not None, stock.diagnostics()
    assert (stock_client.returncode, stock_body) == (28, ""), (
        f"stock reply was not lost: curl exit {stock_client.returncode}, {stock_error!r}"
    )


def test_dead_peer_is_reported_as_http_disconnect_only_with_keepalive(
    lab: Lab, processes: Processes
) -> None:
    """Issue 2, test 7: a client that vanishes mid-request is noticed only with keepalive.

    The client namespace starts dropping every packet once the app holds the request; the app
    then waits on ``receive()``. With keepalive, the unanswered probes end the connection with
    ETIMEDOUT after idle + interval x count seconds, and uvicorn hands the app
    ``http.disconnect``. Stock uvicorn waits on a silent connection and reports nothing.
    """
    stock, stock_url = processes.server("stock")
    keepalive, keepalive_url = processes.server("keepalive")
    for url in (stock_url, keepalive_url):
        processes.curl(f"{url}/await-disconnect", max_time=60)
    request_deadline = time.monotonic() + 10
    for server in (stock, keepalive):
        assert server.wait_for("request", request_deadline) is not None, server.diagnostics()

    lab.drop_all_traffic(lab.client)
    vanished = time.monotonic()
    deadline = vanished + DEAD_PEER_DEADLINE

    keepalive_disconnect = keepalive.wait_for("http.disconnect", deadline)
    stock_disconnect = stock.wait_for("http.disconnect", deadline)
    waited = time.monotonic() - vanished
    seen_after = None if keepalive_disconnect is None else keepalive_disconnect[0] - vanished
    print(  # shown with pytest -s: the figures of the run
        f"keepalive: http.disconnect {seen_after} s after the client vanished; "
        f"stock: {'none' if stock_disconnect is None else 'one'} within {waited:.1f} s"
    )

    assert keepalive_disconnect is not None, (
        f"no http.disconnect within {DEAD_PEER_DEADLINE} s: {keepalive.diagnostics()}"
    )
    assert stock_disconnect is None, f"stock uvicorn saw the dead peer: {stock.diagnostics()}"
