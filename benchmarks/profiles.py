"""The two profiles: the full suite and the two-minute ``--quick`` version."""

from dataclasses import dataclass

from benchmarks.bodies import TOOLCALL, TRAINING, body_name
from benchmarks.load import LoadSettings
from benchmarks.schedule import Cell
from benchmarks.streaming import StreamSettings

#: Generated tokens of the scaling bodies, 32 to 256k (concurrency 1).
SCALING_TOKENS = (32, 256, 1024, 4096, 16384, 65536, 262144)
#: The bodies measured at every concurrency.
MATRIX_BODIES = (TRAINING, body_name(1024), body_name(32), TOOLCALL)
CONCURRENCIES = (1, 32, 256)
#: The body of the small-body goal: 1.5k generated tokens (~45 KB).
SMALL = body_name(1536)


@dataclass(frozen=True)
class Profile:
    """What one invocation measures and for how long.

    Attributes:
        name: ``full`` or ``quick``.
        serialization_cells: The cells of the serialization suite.
        serialization: Durations and rounds of the serialization suite.
        keepalive_cells: The cells of the keepalive suite.
        keepalive: Durations and rounds of the keepalive suite.
        inprocess_bodies: The bodies timed in process.
        inprocess: The options of pyperf's Runner for the in-process timings.
        streaming: Events, streams and rounds of the streaming suite.
        connection_rounds: Interleaved rounds of the connection-cost measurement.
        connection_count: Connections accepted per protocol, loop and round.
    """

    name: str
    serialization_cells: tuple[Cell, ...]
    serialization: LoadSettings
    keepalive_cells: tuple[Cell, ...]
    keepalive: LoadSettings
    inprocess_bodies: tuple[str, ...]
    inprocess: tuple[str, ...]
    streaming: StreamSettings
    connection_rounds: int
    connection_count: int


def _full_cells() -> tuple[Cell, ...]:
    """The matrix, the small-body goal's cell, then the scaling sizes not in the matrix.

    The cells at 32 connections, which the goals compare, run for the profile's duration;
    the others (latency at 1 connection, 256 connections, scaling) for 1 s, extended for
    slow configurations like every run, so that the full suite fits in about 15 minutes.
    """
    matrix = [
        Cell(name, c, duration_s=None if c == 32 else 1)
        for c in CONCURRENCIES
        for name in MATRIX_BODIES
    ]
    cells = [*matrix, Cell(SMALL, 32)]
    known = {(cell.body, cell.concurrency) for cell in cells}
    scaling = [Cell(body_name(n), 1, duration_s=1) for n in SCALING_TOKENS]
    return tuple(cells + [c for c in scaling if (c.body, c.concurrency) not in known])


_KEEPALIVE_CELLS = (Cell("plain", 32, close=True), Cell("plain", 32))

FULL = Profile(
    name="full",
    serialization_cells=_full_cells(),
    serialization=LoadSettings(
        rounds=3, duration_s=2, max_duration_s=6, min_requests=15, drain_budget_s=10
    ),
    keepalive_cells=_KEEPALIVE_CELLS,
    keepalive=LoadSettings(
        rounds=7, duration_s=2, max_duration_s=2, min_requests=1, drain_budget_s=10
    ),
    inprocess_bodies=(TRAINING, SMALL, TOOLCALL),
    inprocess=("--processes=6", "--values=3", "--warmups=1", "--min-time=0.1"),
    streaming=StreamSettings(
        rounds=5, events=20_000, streams=32, stream_events=2_000, rss_events=200_000
    ),
    connection_rounds=7,
    connection_count=2000,
)

QUICK = Profile(
    name="quick",
    serialization_cells=(Cell(TRAINING, 32), Cell(SMALL, 32)),
    serialization=LoadSettings(
        rounds=3, duration_s=1, max_duration_s=2, min_requests=5, drain_budget_s=12
    ),
    keepalive_cells=_KEEPALIVE_CELLS,
    keepalive=LoadSettings(
        rounds=3, duration_s=1, max_duration_s=1, min_requests=1, drain_budget_s=5
    ),
    inprocess_bodies=(TRAINING,),
    inprocess=("--processes=2", "--values=3", "--warmups=1", "--min-time=0.05"),
    streaming=StreamSettings(
        rounds=3, events=5_000, streams=32, stream_events=500, rss_events=50_000
    ),
    connection_rounds=3,
    connection_count=500,
)

PROFILES = {profile.name: profile for profile in (FULL, QUICK)}
