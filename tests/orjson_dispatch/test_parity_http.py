"""Parity of ``@dispatch`` endpoints with the same endpoints on FastAPI itself, over HTTP.

For every generated case one FastAPI app gets the endpoint twice, once as FastAPI runs it and once
under ``@dispatch``; both are requested in process (httpx's ASGI transport: the real ASGI app, real
status codes and headers). Endpoints are functions, partials or callable objects, sync or async,
with evaluated or postponed annotations; the route may name a response class of its own (one
whose ``__init__`` sets a header). When FastAPI answers 2xx, ``dispatch`` must answer the same
status, the same headers in the same order (the length aside) and the same JSON, numbers with
their JSON type. When FastAPI answers 500, ``dispatch`` must answer 500 too, except for the
documented deliberate differences (``oracles``), which are checked to give exactly the documented
body:

* untyped path: NaN and infinities become ``null`` (pydantic's and FastAPI's typed-path rule);
* untyped path: an enum whose value ``json.dumps`` cannot write is encoded as that value;
* numpy scalars and arrays are encoded as their ``tolist()`` equivalents;
* a ``list[float]``/``list[int]`` field holding ints/bools assigned without validation is written
  as held (FastAPI answers 2xx there, with the items converted).

Hypothesis ``event``s record why FastAPI failed (``--hypothesis-show-statistics``).
"""

import dataclasses
from typing import Any

import httpx
import pytest
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from hypothesis import event, given, note, settings
from hypothesis import strategies as st
from orjson_dispatch._rendering import reads_content

from orjson_dispatch import dispatch
from tests.orjson_dispatch.apps import UNTYPED, Route, make_endpoint, serve
from tests.orjson_dispatch.compare import assert_same_answer, comparable_headers, same_json
from tests.orjson_dispatch.oracles import (
    deliberate_untyped_body,
    denumpy,
    same_json_or_held,
    typed_since_0130,
)
from tests.orjson_dispatch.strategies import examples
from tests.orjson_dispatch.strategies.http_cases import (
    RESPONSE_CLASS_OPTIONS,
    ROUTE_FLAGS,
    Shape,
    TypedCase,
    describe,
    shapes,
    typed_cases,
)
from tests.orjson_dispatch.strategies.leaves import contains_numpy
from tests.orjson_dispatch.strategies.specs import TypeSpec, model_specs
from tests.orjson_dispatch.strategies.untyped import untyped_values
from tests.orjson_dispatch.versions import FASTAPI_DUMPS_JSON


def _record_failure(kind: str, value: Any) -> None:
    try:
        jsonable = jsonable_encoder(value)
        JSONResponse(jsonable)
    except Exception as exc:  # only recorded: FastAPI's answer is the oracle
        event(f"{kind}: FastAPI 500 ({type(exc).__name__})")
    else:
        event(f"{kind}: FastAPI 500")


def _headers(response: httpx.Response) -> list[tuple[str, str]]:
    return [h for h in comparable_headers(response) if h[0] != "content-length"]


def _class_headers(options: dict[str, Any]) -> list[tuple[str, str]]:
    """The headers the route's response class sets itself (FastAPI's default: JSONResponse)."""
    response = options.get("response_class", JSONResponse)(None)
    return [(k, v) for k, v in response.headers.items() if k != "content-length"]


def assert_matches(ours: httpx.Response, fastapi: httpx.Response, value: Any) -> None:
    """Same status; below 500 the same headers in order (but the length) and the same JSON.

    The JSON may differ only by the deliberate rule ``oracles.held_containers_as_written``.
    """
    assert ours.status_code == fastapi.status_code, ours.content
    if fastapi.status_code >= 500:
        return  # Starlette's plain-text "Internal Server Error" on both sides
    assert _headers(ours) == _headers(fastapi)
    assert same_json_or_held(ours.content, fastapi.content, value)


# --- untyped path ------------------------------------------------------------------------------


@settings(max_examples=examples(600))
@given(
    value=untyped_values(numpy=True, deep=True),
    shape=shapes,
    # Without a response model FastAPI ignores the response_model_* flags: so must dispatch.
    flags=st.just({}) | ROUTE_FLAGS,
    response_class=RESPONSE_CLASS_OPTIONS,
)
def test_untyped_endpoint_answers_like_jsonable_encoder(
    value: Any, shape: Shape, flags: dict[str, bool], response_class: dict[str, Any]
) -> None:
    note(f"endpoint: {shape}, options: {flags | response_class}")
    options = {**flags, **response_class}
    plain = denumpy(value)
    routes = [
        Route("/fastapi", shape.endpoint(value, UNTYPED), options),
        Route("/dispatch", dispatch(shape.endpoint(value, UNTYPED)), options),
    ]
    if plain is not value:
        # numpy: the reference is FastAPI's answer for the tolist() equivalent.
        routes.append(Route("/plain", shape.endpoint(plain, UNTYPED), options))
    answers = serve(*routes)
    fastapi, ours = answers["/fastapi"], answers["/dispatch"]
    note(f"FastAPI: {fastapi.status_code} {fastapi.content[:300]!r}")
    note(f"dispatch: {ours.status_code} {ours.content[:300]!r}")
    if reads_content(options.get("response_class", JSONResponse)):
        event("untyped: a response class with its own __init__, left to FastAPI")
        assert_matches(ours, fastapi, value)
        return
    if plain is not value:
        event(f"untyped: numpy (FastAPI answers {fastapi.status_code} for it)")
        fastapi = answers["/plain"]
    if fastapi.status_code != 500:
        event("untyped: FastAPI 200")
        assert_matches(ours, fastapi, value)
        return
    _record_failure("untyped", plain)
    expected = deliberate_untyped_body(value)
    if expected is None:
        assert ours.status_code == 500, "FastAPI cannot encode this value: dispatch must fail too"
        return
    event("untyped: deliberate difference (NaN/inf -> null, enum value, dataclass not copied)")
    assert ours.status_code == 200, ours.content
    assert _headers(ours) == _class_headers(options)
    assert same_json_or_held(ours.content, expected, value)


# --- typed path --------------------------------------------------------------------------------


@settings(max_examples=examples(500))
@given(case=typed_cases())
def test_typed_endpoint_answers_like_fastapi_typed_path(case: TypedCase) -> None:
    for line in describe(case):
        note(line)
    value = case.returned.value
    routes = [
        case.route("/fastapi", value, decorate=False),
        case.route("/dispatch", value, decorate=True),
    ]
    numpy = contains_numpy(value)
    if numpy:
        routes.append(case.route("/fastapi-denumpy", denumpy(value), decorate=False))
    explicit_class = "response_class" in case.options
    if explicit_class:
        default_class = dataclasses.replace(
            case, options={k: v for k, v in case.options.items() if k != "response_class"}
        )
        routes.append(default_class.route("/fastapi-default-class", value, decorate=False))
    answers = serve(*routes)
    fastapi, ours = answers["/fastapi"], answers["/dispatch"]
    note(f"FastAPI: {fastapi.status_code} {fastapi.content[:300]!r}")
    note(f"dispatch: {ours.status_code} {ours.content[:300]!r}")
    event(f"typed: returned {case.returned.how}, FastAPI {fastapi.status_code}")
    if reads_content(case.options.get("response_class", JSONResponse)):
        event("typed: a response class with its own __init__, left to FastAPI")
        assert_matches(ours, fastapi, value)
        return
    if fastapi.status_code != 500:
        assert_matches(ours, fastapi, value)
        extras_kept = case.spec.model is not None and case.spec.model.model_config.get("extra")
        if case.returned.how in {"subclass", "attrs"} or (
            case.returned.how == "dict" and extras_kept != "allow"
        ):
            assert b"s3cret" not in ours.content, "a field outside the declared type leaked"
        return
    if numpy and answers["/fastapi-denumpy"].status_code != 500 and ours.status_code != 500:
        event("typed: deliberate difference (numpy)")
        assert_matches(ours, answers["/fastapi-denumpy"], value)
        return
    if explicit_class and answers["/fastapi-default-class"].status_code != 500:
        # Deliberate: with response_class=JSONResponse FastAPI renders with json.dumps and fails
        # on NaN; dispatch answers as FastAPI's default typed path does.
        event("typed: deliberate difference (explicit JSONResponse)")
        default = answers["/fastapi-default-class"]
        assert ours.status_code == default.status_code, ours.content
        assert _headers(ours) == _class_headers(case.options)
        assert same_json_or_held(ours.content, default.content, value)
        return
    if not FASTAPI_DUMPS_JSON and ours.status_code == 200:
        event("typed: FastAPI before 0.130 answers 500 (NaN rendered by JSONResponse)")
        expected = typed_since_0130(case.spec.annotation, value, case.options)
        assert isinstance(expected, bytes), expected
        assert same_json_or_held(ours.content, expected, value)
        return
    assert ours.status_code == 500, "FastAPI's typed path answers 500: dispatch must too"


# --- typed path: the decorator's own options ----------------------------------------------------

_OPTION_PAIRS = {
    "by_alias": "response_model_by_alias",
    "exclude_unset": "response_model_exclude_unset",
    "exclude_defaults": "response_model_exclude_defaults",
    "exclude_none": "response_model_exclude_none",
}


@settings(max_examples=examples(100))
@given(
    spec=model_specs(),
    data=st.data(),
    options=st.dictionaries(st.sampled_from(sorted(_OPTION_PAIRS)), st.booleans(), min_size=1),
)
def test_decorator_options_match_route_options(
    spec: TypeSpec, data: st.DataObject, options: dict[str, bool]
) -> None:
    """``@dispatch(exclude_none=True)`` answers like the route's ``response_model_exclude_none``."""
    value = data.draw(spec.values)
    fastapi_endpoint = make_endpoint(value, annotation=spec.annotation, is_async=True)
    configured: Any = dispatch  # the options are drawn, so not checked statically here
    ours_endpoint = configured(**options)(
        make_endpoint(value, annotation=spec.annotation, is_async=True)
    )
    route_options = {_OPTION_PAIRS[name]: flag for name, flag in options.items()}
    answers = serve(
        Route("/fastapi", fastapi_endpoint, route_options), Route("/dispatch", ours_endpoint)
    )
    note(f"FastAPI: {answers['/fastapi'].content[:300]!r}")
    note(f"dispatch: {answers['/dispatch'].content[:300]!r}")
    if (
        not FASTAPI_DUMPS_JSON
        and answers["/fastapi"].status_code == 500
        and answers["/dispatch"].status_code == 200
    ):
        event("FastAPI before 0.130 answers 500 (NaN rendered by JSONResponse)")
        expected = typed_since_0130(spec.annotation, value, route_options)
        assert isinstance(expected, bytes), expected
        assert same_json(answers["/dispatch"].content, expected)
        return
    assert_matches(answers["/dispatch"], answers["/fastapi"], value)


@pytest.mark.parametrize("is_async", [True, False])
def test_response_model_none_keeps_the_untyped_path(is_async: bool) -> None:
    """``response_model=None`` on the route turns FastAPI's typed path off; dispatch follows."""
    import datetime as dt
    from decimal import Decimal

    value = {"when": dt.timedelta(seconds=90), "price": Decimal("1.50"), 7: {1, 2}}
    endpoint = make_endpoint(value, annotation=dict[Any, Any], is_async=is_async)
    decorated = dispatch(make_endpoint(value, annotation=dict[Any, Any], is_async=is_async))
    answers = serve(
        Route("/fastapi", endpoint, {"response_model": None}),
        Route("/dispatch", decorated, {"response_model": None}),
    )
    assert answers["/fastapi"].json() == {"when": 90.0, "price": 1.5, "7": [1, 2]}
    assert_same_answer(answers["/dispatch"], answers["/fastapi"])
