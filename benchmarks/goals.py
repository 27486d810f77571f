"""The performance goals of orjson-dispatch and uvicorn-keepalive, checked against results."""

from dataclasses import dataclass
from typing import Any, Literal

from benchmarks.analysis import inprocess_benchmarks, ratio, relative_time
from benchmarks.stats import Spread

#: The cell whose requests/s the training-body goals compare.
TRAINING_CELL = "tokens-65536@c32"
#: The cell of the small-body goal (1.5k generated tokens, ~45 KB).
SMALL_CELL = "tokens-1536@c32"
CHURN_CELL = "plain@c32+close"
LONG_LIVED_CELL = "plain@c32"
#: The distributions the goals are set for.
OD, UK = "orjson-dispatch", "uvicorn-keepalive"


@dataclass(frozen=True)
class Goal:
    """One goal and what was measured for it.

    Attributes:
        package: The distribution the goal is set for.
        text: The goal in words.
        target: The bound the median ratio must meet.
        direction: ``min``: the ratio must be at least ``target``; ``max``: at most;
            ``band``: within ``target`` of 1 on both sides.
        measured: The paired ratio over rounds, or None when it was not measured.
        where: What the ratio compares, e.g. the cell.
        context: A related ratio that bounds what can be reached or shows the noise: a
            description and the measured ratio.
    """

    package: str
    text: str
    target: float
    direction: Literal["min", "max", "band"]
    measured: Spread | None
    where: str
    context: tuple[str, Spread | None] | None = None

    @property
    def status(self) -> str:
        """``reached``, ``NOT reached`` or ``not measured``, judged on the median."""
        if self.measured is None:
            return "not measured"
        value = self.measured.median
        if self.direction == "min":
            reached = value >= self.target
        elif self.direction == "max":
            reached = value <= self.target
        else:
            reached = abs(value - 1) <= self.target
        return "reached" if reached else "NOT reached"


def _suite_ratio(
    results: dict[str, Any], suite: str, cell: str, config: str, baseline: str
) -> Spread | None:
    found = results.get("suites", {}).get(suite)
    return None if found is None else ratio(found, cell, config, baseline)


def _inprocess_ratio(results: dict[str, Any], candidate: str) -> Spread | None:
    """Return ``candidate``'s time over ``orjson.dumps(d)``'s on the training body."""
    benches = {b.get_name(): b for b in inprocess_benchmarks(results).get("tokens-65536", [])}
    found, baseline = (
        benches.get(f"tokens-65536/{candidate}"),
        benches.get("tokens-65536/orjson-dict"),
    )
    return None if found is None or baseline is None else relative_time(found, baseline)


def evaluate(results: dict[str, Any]) -> list[Goal]:
    """Return every goal with its measured ratio (None where the results lack it)."""

    def http(cell: str, config: str, baseline: str) -> Spread | None:
        return _suite_ratio(results, "serialization", cell, config, baseline)

    def keepalive(cell: str, config: str, baseline: str) -> Spread | None:
        return _suite_ratio(results, "keepalive", cell, config, baseline)

    training = f"req/s on {TRAINING_CELL}"
    small = f"req/s on {SMALL_CELL}"
    limit = "orjson's limit / {}"
    aa_churn = ("A/A stock-b / stock", keepalive(CHURN_CELL, "stock-b", "stock"))
    aa_long = ("A/A stock-b / stock", keepalive(LONG_LIVED_CELL, "stock-b", "stock"))
    return [
        Goal(OD, "dispatch on the model >= 50x FastAPI untyped", 50, "min",
             http(TRAINING_CELL, "dispatch-model", "untyped"), training,
             (limit.format("untyped"), http(TRAINING_CELL, "orjson-limit", "untyped"))),
        Goal(OD, "dispatch on the model >= 3x FastAPI typed", 3, "min",
             http(TRAINING_CELL, "dispatch-model", "typed"), training,
             (limit.format("typed"), http(TRAINING_CELL, "orjson-limit", "typed"))),
        Goal(OD, "dispatch on the model >= 0.85x Response(orjson.dumps(d))", 0.85, "min",
             http(TRAINING_CELL, "dispatch-model", "orjson-limit"), training),
        Goal(OD, "dispatch on the dict >= 0.95x Response(orjson.dumps(d))", 0.95, "min",
             http(TRAINING_CELL, "dispatch-dict", "orjson-limit"), training),
        Goal(OD, "small body: dispatch on the model >= 1.5x FastAPI typed", 1.5, "min",
             http(SMALL_CELL, "dispatch-model", "typed"), small,
             (limit.format("typed"), http(SMALL_CELL, "orjson-limit", "typed"))),
        Goal(OD, "serialization alone: dumps(model, response_model=...) <= 1.3x orjson.dumps(d)",
             1.3, "max", _inprocess_ratio(results, "dispatch-dumps-typed"),
             "time per call, training body, in process"),
        Goal(UK, "connection churn: keepalive.Protocol >= 0.97x stock, 1 worker", 0.97, "min",
             keepalive(CHURN_CELL, "keepalive", "stock"), f"req/s on {CHURN_CELL}", aa_churn),
        Goal(UK, "connection churn: keepalive.Protocol >= 0.97x stock, 2 workers", 0.97, "min",
             keepalive(CHURN_CELL, "keepalive-w2", "stock-w2"), f"req/s on {CHURN_CELL}",
             aa_churn),
        Goal(UK, "long-lived connections: no change (within 3 %), 1 worker", 0.03, "band",
             keepalive(LONG_LIVED_CELL, "keepalive", "stock"), f"req/s on {LONG_LIVED_CELL}",
             aa_long),
        Goal(UK, "long-lived connections: no change (within 3 %), 2 workers", 0.03, "band",
             keepalive(LONG_LIVED_CELL, "keepalive-w2", "stock-w2"),
             f"req/s on {LONG_LIVED_CELL}", aa_long),
    ]  # fmt: skip
