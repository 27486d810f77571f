"""The in-process approaches encode the limit's JSON, and are timed right after the limit."""

from collections import Counter

import pytest

from benchmarks.inprocess import HELPER, ROUNDS, measure_body, ratios, render
from bodies import IN_PROCESS
from bodies.sdk_corpus import BUILT, Built


@pytest.mark.parametrize("built", BUILT)
@pytest.mark.parametrize("name", list(IN_PROCESS)[:-1])  # sdk-training: 2 MB, the same code
def test_every_approach_encodes_the_limit_and_is_timed_after_it_each_round(
    name: str, built: Built
) -> None:
    samples = measure_body(name, built, rounds=2, min_time=0.0)  # raises on other JSON
    per_round = Counter(s["round"] for s in samples)
    assert len(per_round) == 2
    assert len(set(per_round.values())) == 1
    assert {s["approach"] for s in samples} >= {HELPER, "dumps-untyped", "dumps-typed"}
    assert all(s["s"] > 0 and s["limit_s"] > 0 for s in samples)


def test_the_tables_give_time_over_the_limit_and_speed_over_the_helper() -> None:
    samples = [
        {"round": r, "body": "chunk", "built": "validated", "approach": a, "s": s, "limit_s": 1.0}
        for r in range(3)
        for a, s in ((HELPER, 4.0), ("dumps-typed", 2.0 + r))
    ]
    suite = {"samples": samples, "labels": {"chunk": {HELPER: "helper", "dumps-typed": "typed"}}}
    found = ratios(suite, "chunk", "validated")
    assert found["dumps-typed"] == {"us": 3e6, "limit": 3.0, "helper": 4 / 3}
    assert found[HELPER]["helper"] == 1.0
    run = {"date": "d", "git": "g", "command": "c"}
    text = "\n".join(render(suite | {"run": run}))
    assert "| `typed` | validated | 3 000 000 | 3.00x | 1.33x |" in text
    assert ROUNDS == 7
