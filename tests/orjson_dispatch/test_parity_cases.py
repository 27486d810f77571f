"""Each parity example of ``parity_cases.CASES`` answers under ``@dispatch`` as under FastAPI."""

from typing import Any

import pytest

from orjson_dispatch import dispatch
from tests.orjson_dispatch.apps import Ask
from tests.orjson_dispatch.parity_cases import CASES, Case


def _unchanged(endpoint: Any) -> Any:
    return endpoint


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_dispatch_answers_like_fastapi(case: Case, ask: Ask) -> None:
    fastapi, ours = (
        ask(case.build(decorate), case.method, case.path, **case.request)
        for decorate in (_unchanged, dispatch)
    )
    assert fastapi.status_code == case.fastapi_status
    if case.fastapi_body is not None:
        assert fastapi.content == case.fastapi_body
    for answer in (fastapi, ours):
        assert not [name for name in case.absent_headers if name in answer.headers]
        assert not [text for text in case.absent_text if text in answer.content]
    case.compare(ours, fastapi)


def test_case_names_are_unique() -> None:
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))
