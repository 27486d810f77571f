"""The in-process candidates encode the same JSON."""

import orjson

from benchmarks.bodies import TOOLCALL, body
from benchmarks.inprocess import candidates


def test_every_candidate_encodes_the_reference() -> None:
    for name in ("tokens-32", TOOLCALL):
        item = body(name)
        found = candidates(item)
        assert found[0].name == "orjson-dict"  # the baseline the ratios divide by
        for candidate in found:
            assert orjson.loads(candidate.encode()) == item.data, candidate.name
