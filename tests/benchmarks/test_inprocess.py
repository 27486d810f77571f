"""The in-process candidates encode the same JSON: the bodies and a stream's chunks."""

import pytest

from benchmarks.bodies import TOOLCALL
from benchmarks.chunks import CYCLE
from benchmarks.inprocess import CHUNKS, candidates, decoded, expected


@pytest.mark.parametrize("name", ["tokens-32", TOOLCALL, CHUNKS])
def test_every_candidate_encodes_the_reference(name: str) -> None:
    found = candidates(name)
    assert found[0].name == "orjson-dict"  # the baseline the ratios divide by
    assert {"dispatch-dumps-typed", "model-dump-json", "typeadapter"} <= {c.name for c in found}
    for candidate in found:
        assert decoded(candidate.encode()) == expected(name), candidate.name


def test_the_stream_candidates_encode_each_chunk_on_its_own() -> None:
    for candidate in candidates(CHUNKS):
        output = candidate.encode()
        assert isinstance(output, list), candidate.name
        assert len(output) == CYCLE
