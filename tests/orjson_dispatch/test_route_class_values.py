"""Values returned under ``DispatchRoute`` are answered as FastAPI answers them, each against
FastAPI itself.

The property tests serve generated untyped and typed values by a plain ``APIRoute`` and by a
``DispatchRoute`` (``route_class_override``), with the same deliberate differences as the
decorator (``oracles``); numpy values, which FastAPI cannot serialize, are answered.
"""

import dataclasses
import functools
from typing import Any

import numpy as np
import pytest
from fastapi.responses import JSONResponse
from hypothesis import event, given, note, settings
from hypothesis import strategies as st
from orjson_dispatch._rendering import reads_content
from orjson_dispatch._route import DispatchRoute

from tests.orjson_dispatch.apps import UNTYPED, Route, Twin, make_endpoint, serve
from tests.orjson_dispatch.compare import assert_identical, assert_same_answer
from tests.orjson_dispatch.oracles import (
    deliberate_untyped_answer,
    denumpy,
    same_json_or_held,
    typed_since_0130,
)
from tests.orjson_dispatch.samples import ITEM
from tests.orjson_dispatch.strategies import examples
from tests.orjson_dispatch.strategies.http_cases import ROUTE_FLAGS, TypedCase, note_case
from tests.orjson_dispatch.strategies.http_cases import typed_cases as typed_http_cases
from tests.orjson_dispatch.strategies.untyped import untyped_values
from tests.orjson_dispatch.versions import FASTAPI_DUMPS_JSON

OURS = {"route_class_override": DispatchRoute}


@pytest.mark.parametrize("annotation", [UNTYPED, Any])
def test_numpy_value_fastapi_cannot_serialize_is_answered(
    annotation: Any, route_twin: Twin
) -> None:
    value = {"ids": np.arange(3, dtype=np.int64), "score": np.float64(0.5)}
    route_twin.add("GET", "/np", make_endpoint(value, annotation=annotation))
    fastapi, ours = route_twin.both("GET", "/np")
    assert fastapi.status_code == 500  # FastAPI's encoders do not know numpy: orjson does
    assert ours.status_code == 200
    assert ours.json() == {"ids": [0, 1, 2], "score": 0.5}


@settings(max_examples=examples(150))
@given(value=untyped_values(numpy=True), is_async=st.booleans(), flags=st.just({}) | ROUTE_FLAGS)
def test_untyped_value_answers_like_fastapi(
    value: Any, is_async: bool, flags: dict[str, bool]
) -> None:
    plain = denumpy(value)
    answers = serve(
        Route("/fastapi", make_endpoint(value, annotation=UNTYPED, is_async=is_async), flags),
        Route(
            "/ours",
            make_endpoint(value, annotation=UNTYPED, is_async=is_async),
            {**flags, **OURS},
        ),
        Route("/plain", make_endpoint(plain, annotation=UNTYPED, is_async=is_async), flags),
    )
    fastapi, ours = answers["/plain"], answers["/ours"]
    note(f"FastAPI: {fastapi.status_code} {fastapi.content[:300]!r}")
    note(f"DispatchRoute: {ours.status_code} {ours.content[:300]!r}")
    if fastapi.status_code != 500:
        event("untyped: FastAPI 200")
        assert ours.status_code == fastapi.status_code, ours.content
        assert ours.headers.get("content-type") == fastapi.headers.get("content-type")
        assert same_json_or_held(ours.content, fastapi.content, value)
        return
    expected = deliberate_untyped_answer(ours, value)
    if expected is not None:
        event("untyped: deliberate difference (NaN/inf -> null, dataclass not copied)")
        assert same_json_or_held(ours.content, expected, value)


@pytest.mark.parametrize(
    "flags",
    [
        {"response_model_by_alias": False},
        {"response_model_exclude_none": True},
        {"response_model_exclude_unset": True},
        {"response_model_exclude_defaults": True},
        {"response_model_include": {"name"}},
        {"response_model_exclude": {"name"}},
    ],
    ids=lambda flags: next(iter(flags)),
)
def test_untyped_route_ignores_the_response_model_settings(
    flags: dict[str, Any], route_twin: Twin
) -> None:
    route_twin.add("GET", "/u", make_endpoint(ITEM, annotation=UNTYPED), **flags)
    fastapi, ours = route_twin.both("GET", "/u")
    assert fastapi.content == b'{"name":"pen","Price":1.5,"tags":[],"note":null}'
    assert_identical(ours, fastapi)


@settings(max_examples=examples(150))
@given(case=typed_http_cases())
def test_typed_value_answers_like_fastapi(case: TypedCase) -> None:
    note_case(case)
    value = case.returned.value
    fastapi_route = case.route("/fastapi", value, decorate=False)
    routes = [
        fastapi_route,
        dataclasses.replace(fastapi_route, path="/ours", options={**fastapi_route.options, **OURS}),
        case.route("/fastapi-denumpy", denumpy(value), decorate=False),
        dataclasses.replace(
            case, options={k: v for k, v in case.options.items() if k != "response_class"}
        ).route("/fastapi-default-class", value, decorate=False),
    ]
    answers = serve(*routes)
    fastapi, ours = answers["/fastapi"], answers["/ours"]
    note(f"FastAPI: {fastapi.status_code} {fastapi.content[:300]!r}")
    note(f"DispatchRoute: {ours.status_code} {ours.content[:300]!r}")
    event(f"typed: returned {case.returned.how}, FastAPI {fastapi.status_code}")
    # A container assigned without validation is written as held, as by the decorator.
    same_body = functools.partial(same_json_or_held, value=value)
    if fastapi.status_code != 500 or reads_content(
        case.options.get("response_class", JSONResponse)
    ):
        assert_same_answer(ours, fastapi, same_body)
        return
    # The deliberate differences of the decorator: numpy encoded as tolist(), and FastAPI's
    # default typed path (NaN as null) also under an explicit response_class=JSONResponse.
    for reference in ("/fastapi-denumpy", "/fastapi-default-class"):
        if answers[reference].status_code != 500 and ours.status_code != 500:
            event(f"typed: deliberate difference ({reference})")
            assert_same_answer(ours, answers[reference], same_body)
            return
    if not FASTAPI_DUMPS_JSON and ours.status_code == 200:
        event("typed: FastAPI before 0.130 answers 500 (NaN rendered by JSONResponse)")
        expected = typed_since_0130(case.spec.annotation, value, case.options)
        assert isinstance(expected, bytes), expected
        assert same_body(ours.content, expected)
        return
    assert ours.status_code == 500, "FastAPI's typed path answers 500: DispatchRoute must too"
