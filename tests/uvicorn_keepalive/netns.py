"""A client / router / server lab in three network namespaces, for end-to-end tests.

The router plays a middlebox that forgets idle flows (a NAT gateway, a cloud load balancer): its
FORWARD chain drops everything except new SYNs and flows that conntrack holds as ESTABLISHED,
``nf_conntrack_tcp_loose=0`` stops conntrack from adopting a flow it has forgotten (a reply after
the entry expired is INVALID and dropped), and ``nf_conntrack_tcp_timeout_established`` is set
by the caller. Both sysctls are per network namespace
(https://docs.kernel.org/networking/nf_conntrack-sysctl.html), so the host is left untouched.

Only RFC 5737 documentation addresses are used: the client side is 192.0.2.0/24, the server side
198.51.100.0/24. Namespace names carry the pid and a counter, so parallel runs never collide.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

CLIENT_ADDRESS = "192.0.2.2"
ROUTER_CLIENT_SIDE = "192.0.2.1"
ROUTER_SERVER_SIDE = "198.51.100.1"
SERVER_ADDRESS = "198.51.100.2"

# A single `ip` / `iptables` / `sysctl` call never takes long; a hung one must not hang the run.
COMMAND_TIMEOUT = 10.0
# iptables and sysctl live in sbin directories, which a non-login or non-root PATH often lacks
# (Debian's default PATH for users has no /usr/sbin); they are searched after PATH.
SBIN_DIRECTORIES = ("/usr/local/sbin", "/usr/sbin", "/sbin")

_lab_numbers = itertools.count()


class NetnsUnavailableError(Exception):
    """This machine lacks a capability the lab needs (root, a program, netns, conntrack)."""


def which(program: str) -> str | None:
    """The absolute path of ``program`` on PATH or in an sbin directory, or None."""
    path = os.pathsep.join([os.environ.get("PATH", os.defpath), *SBIN_DIRECTORIES])
    return shutil.which(program, path=path)


def _program(program: str) -> str:
    found = which(program)
    if found is None:
        raise NetnsUnavailableError(
            f"`{program}` is not installed: not on PATH nor in {', '.join(SBIN_DIRECTORIES)}"
            " (scripts/system-packages installs it)"
        )
    return found


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
        iptables: the path of the iptables program that worked here (``iptables`` or
            ``iptables-legacy``).
    """

    client: str
    router: str
    server: str
    iptables: str

    def drop_all_traffic(self, namespace: str) -> None:
        """Make ``namespace`` silently discard every packet it receives or would send."""
        for chain in ("INPUT", "OUTPUT"):
            _run([_program("ip"), "netns", "exec", namespace, self.iptables,
                  "-A", chain, "-j", "DROP"])  # fmt: skip


def _check_prerequisites() -> None:
    if sys.platform != "linux":
        raise NetnsUnavailableError(f"network namespaces are Linux only, not {sys.platform}")
    if os.geteuid() != 0:
        raise NetnsUnavailableError("network namespaces need root (euid is not 0)")
    for program in ("ip", "iptables", "sysctl", "curl"):
        _program(program)


def _make_router_stateful(ip: str, router: str, established_timeout: int) -> str:
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
    for name in ("iptables", "iptables-legacy"):
        iptables = which(name)
        if iptables is None:
            continue
        try:
            for rule in rules:
                _run([ip, "netns", "exec", router, iptables, *rule])
        except subprocess.CalledProcessError as error:
            failures.append(_describe(error))
            subprocess.run(
                [ip, "netns", "exec", router, iptables, "-F", "FORWARD"],
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
        _run([ip, "netns", "exec", router, "test", "-e", loose])
    except subprocess.CalledProcessError as error:
        raise NetnsUnavailableError(
            f"conntrack is unavailable: no {loose} in a namespace"
        ) from error
    host_before = _host_conntrack_settings()
    _run([
        ip, "netns", "exec", router, _program("sysctl"), "-q", "-w",
        "net.ipv4.ip_forward=1",
        "net.netfilter.nf_conntrack_tcp_loose=0",
        f"net.netfilter.nf_conntrack_tcp_timeout_established={established_timeout}",
    ])  # fmt: skip
    # These sysctls are per namespace on any kernel of the last decade; make sure this one is
    # no exception, since the values set above would otherwise apply to the whole host.
    if _host_conntrack_settings() != host_before:
        raise RuntimeError(f"setting conntrack sysctls in {router} changed them on the host")
    return iptables


def _host_conntrack_settings() -> list[str]:
    """The host's values of the conntrack sysctls that the router sets (empty if absent)."""
    values = []
    for name in ("nf_conntrack_tcp_loose", "nf_conntrack_tcp_timeout_established"):
        path = Path("/proc/sys/net/netfilter", name)
        values.append(path.read_text() if path.exists() else "")
    return values


@contextlib.contextmanager
def build_lab(established_timeout: int) -> Iterator[Lab]:
    """Build the client / router / server lab; delete its namespaces on exit, even on failure.

    Deleting a namespace removes its veth ends, iptables rules and conntrack table with it.
    Processes started in the lab must be ended before the context exits.

    Raises:
        NetnsUnavailableError: a capability is missing; the message names it.
    """
    _check_prerequisites()
    ip = _program("ip")
    prefix = f"uvicorn-keepalive-{os.getpid()}-{next(_lab_numbers)}"
    client, router, server = f"{prefix}-client", f"{prefix}-router", f"{prefix}-server"
    created: list[str] = []
    try:
        for name in (client, router, server):
            try:
                _run([ip, "netns", "add", name])
            except subprocess.CalledProcessError as error:
                raise NetnsUnavailableError(
                    f"cannot create a namespace: {_describe(error)}"
                ) from error
            created.append(name)
        # Both ends of each veth pair are created inside their namespaces: no interface name
        # ever appears in the host namespace, where a parallel run could collide with it.
        _run([ip, "link", "add", "c0", "netns", client, "type", "veth",
              "peer", "name", "r0", "netns", router])  # fmt: skip
        _run([ip, "link", "add", "s0", "netns", server, "type", "veth",
              "peer", "name", "r1", "netns", router])  # fmt: skip
        for namespace, device, address, gateway in (
            (client, "c0", CLIENT_ADDRESS, ROUTER_CLIENT_SIDE),
            (server, "s0", SERVER_ADDRESS, ROUTER_SERVER_SIDE),
            (router, "r0", ROUTER_CLIENT_SIDE, None),
            (router, "r1", ROUTER_SERVER_SIDE, None),
        ):
            _run([ip, "-n", namespace, "address", "add", f"{address}/24", "dev", device])
            _run([ip, "-n", namespace, "link", "set", device, "up"])
            if gateway is not None:
                _run([ip, "-n", namespace, "route", "add", "default", "via", gateway])
        for namespace in created:
            _run([ip, "-n", namespace, "link", "set", "lo", "up"])
        iptables = _make_router_stateful(ip, router, established_timeout)
        yield Lab(client=client, router=router, server=server, iptables=iptables)
    finally:
        for name in reversed(created):
            subprocess.run(
                [ip, "netns", "delete", name],
                capture_output=True,
                timeout=COMMAND_TIMEOUT,
                check=False,
            )
