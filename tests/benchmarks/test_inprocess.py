"""The in-process candidates encode the same JSON: the bodies and a stream's chunks."""

import pytest

from benchmarks.bodies import CYCLE, SDK_CHUNKS, SDK_TOOLCALL, TOOLCALL
from benchmarks.inprocess import candidates, decoded, expected

ROWS = {"orjson-dict", "jsonable-encoder", "typeadapter", "model-dump-orjson", "model-dump-json"}
ROWS |= {"dispatch-dumps-model", "dispatch-dumps-typed"}


@pytest.mark.parametrize(
    "name", ["tokens-32", TOOLCALL, SDK_TOOLCALL, "sdk-embeddings", SDK_CHUNKS]
)
def test_every_candidate_encodes_the_reference(name: str) -> None:
    found = candidates(name)
    assert found[0][0] == "orjson-dict"  # the baseline the ratios divide by
    assert {c[0] for c in found} >= ROWS
    for candidate, _, encode in found:
        assert decoded(encode()) == expected(name), candidate


def test_the_stream_candidates_encode_each_chunk_on_its_own() -> None:
    for candidate, _, encode in candidates(SDK_CHUNKS):
        output = encode()
        assert isinstance(output, list), candidate
        assert len(output) == CYCLE
