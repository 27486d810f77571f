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
    case.check(ours, fastapi)


def test_case_names_are_unique() -> None:
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))
