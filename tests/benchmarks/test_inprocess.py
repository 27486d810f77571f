"""The in-process candidates encode the same JSON: the bodies and a stream's chunks."""

import pytest

from benchmarks.bodies import CHUNKS, CYCLE, TOOLCALL
from benchmarks.inprocess import candidates, decoded, expected


@pytest.mark.parametrize("name", ["tokens-32", TOOLCALL, CHUNKS])
def test_every_candidate_encodes_the_reference(name: str) -> None:
    found = candidates(name)
    assert found[0][0] == "orjson-dict"  # the baseline the ratios divide by
    assert {"dispatch-dumps-typed", "model-dump-json", "typeadapter"} <= {c[0] for c in found}
    for candidate, _, encode in found:
        assert decoded(encode()) == expected(name), candidate


def test_the_stream_candidates_encode_each_chunk_on_its_own() -> None:
    for candidate, _, encode in candidates(CHUNKS):
        output = encode()
        assert isinstance(output, list), candidate
        assert len(output) == CYCLE
