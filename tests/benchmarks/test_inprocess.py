"""The in-process candidates encode the same JSON; pyperf gets the profile's options."""

import orjson

from benchmarks.bodies import TOOLCALL, body
from benchmarks.inprocess import PyperfSettings, candidates


def test_every_candidate_encodes_the_reference() -> None:
    for name in ("tokens-32", TOOLCALL):
        item = body(name)
        found = candidates(item)
        assert found[0].name == "orjson-dict"  # the baseline the ratios divide by
        for candidate in found:
            assert orjson.loads(candidate.encode()) == item.data, candidate.name


def test_settings_become_pyperf_runner_options() -> None:
    options = PyperfSettings(processes=2, values=3, warmups=1, min_time=0.05).options()
    assert options == ["--processes=2", "--values=3", "--warmups=1", "--min-time=0.05"]
