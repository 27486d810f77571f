"""The types model servers return (the reference corpus, ``sdk_corpus``), answered as FastAPI
answers them: the ``openai`` SDK's ``ChatCompletion``, ``ChatCompletionChunk`` and
``responses.Response`` (extra training fields, or a subclass declaring them), the ``anthropic``
SDK's ``Message``, and a proxy's own models with ``list[float] | str`` and ``X | Any | None``
unions; each validated and built by the SDK's own ``construct``.

Through ``dumps`` (untyped: FastAPI's ``jsonable_encoder``; typed: pydantic's ``dump_json`` of the
validated value) and over HTTP under ``@dispatch`` and ``DispatchRoute``, typed (return
annotation, ``response_model``) and untyped (the model, a dict holding it) endpoints: the same
status and headers, the same JSON with its keys in FastAPI's order. Streams of chunks are in
``test_sdk_corpus_streams.py``.
"""

from typing import Any

import pytest

# The corpus is made of the SDKs' types (a corpus broken otherwise fails tests/benchmarks).
pytest.importorskip("bodies.sdk_corpus", reason="needs the openai and anthropic SDKs")

import httpx
from hypothesis import event, given, note, settings
from hypothesis import strategies as st
from orjson_dispatch._route import DispatchRoute

from orjson_dispatch import dispatch, dumps
from tests.orjson_dispatch.apps import UNTYPED, Route, Twin, make_endpoint, serve
from tests.orjson_dispatch.compare import json_pairs, outcome, same_json
from tests.orjson_dispatch.oracles import assert_matches, fastapi_typed, fastapi_untyped
from tests.orjson_dispatch.strategies import examples
from tests.orjson_dispatch.strategies.http_cases import ENCODER_OPTIONS, ROUTE_FLAGS
from tests.orjson_dispatch.strategies.sdk import (
    CASE_IDS,
    CASES,
    LARGE_CASES,
    SdkCase,
    field_selections,
    sdk_values,
)

LARGE_IDS = [f"{case.name}-{case.built}" for case in LARGE_CASES]
BOTH_ROUTES = pytest.mark.parametrize(
    "twin", [None, DispatchRoute], ids=["dispatch", "DispatchRoute"], indirect=True
)


def assert_same_body(ours: bytes, fastapi: bytes) -> None:
    """The same JSON (numbers with their JSON type), its object keys in the same order."""
    assert same_json(ours, fastapi)
    assert json_pairs(ours, strict=True) == json_pairs(fastapi)


def holder(model: Any) -> dict[str, Any]:
    """An untyped handler's answer holding the model (a batch endpoint's envelope)."""
    return {"object": "batch", "results": [model], "count": 1}


@pytest.mark.parametrize("case", CASES + LARGE_CASES, ids=CASE_IDS + LARGE_IDS)
def test_dumps_untyped_matches_jsonable_encoder(case: SdkCase) -> None:
    for value in (case.model(), holder(case.model())):
        assert_same_body(dumps(value), fastapi_untyped(value))


@pytest.mark.parametrize("case", CASES + LARGE_CASES, ids=CASE_IDS + LARGE_IDS)
def test_dumps_typed_matches_fastapi_typed_path(case: SdkCase) -> None:
    model = case.model()
    assert_same_body(dumps(model, response_model=case.cls), fastapi_typed(case.cls, model))
    as_list = list[case.cls]  # type: ignore[name-defined]
    assert_same_body(dumps([model], response_model=as_list), fastapi_typed(as_list, [model]))


def test_training_fields_are_sent_as_extras_and_as_a_subclass_fields() -> None:
    # The same data in both classes: the tokens are in the body either way.
    (response,) = (c for c in CASES if c.name == "response" and c.built == "validated")
    (training,) = (c for c in CASES if c.name == "training_response" and c.built == "validated")
    for case in (response, training):
        sent = dumps(case.model())
        assert b'"output_token_ids":[' in sent
        assert b'"output_logprobs":[' in sent


def test_untyped_answers_are_the_models_own_model_dump() -> None:
    # FastAPI's untyped path calls model_dump, which leaves the prompt's ids out; the typed
    # path validates against the declared class and writes every field.
    (case,) = (c for c in CASES if c.name == "public_response" and c.built == "validated")
    for value in (case.model(), holder(case.model())):
        assert b'"prompt_token_ids"' not in dumps(value)
    assert b'"prompt_token_ids"' in dumps(case.model(), response_model=case.cls)


@BOTH_ROUTES
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_endpoints_answer_like_fastapi(case: SdkCase, twin: Twin) -> None:
    endpoints: dict[str, tuple[Any, Any, dict[str, Any]]] = {
        "/untyped": (case.model(), UNTYPED, {}),
        "/untyped-holder": (holder(case.model()), UNTYPED, {}),
        "/annotation": (case.model(), case.cls, {}),
        "/response-model": (case.data, UNTYPED, {"response_model": case.cls}),
        "/exclude-none": (case.model(), case.cls, {"response_model_exclude_none": True}),
    }
    for path, (value, annotation, route) in endpoints.items():
        twin.add("GET", path, make_endpoint(value, annotation=annotation), **route)
    for path, (value, _, _) in endpoints.items():
        fastapi, ours = twin.both("GET", path)
        assert fastapi.status_code == 200, (path, fastapi.content)
        assert_matches(ours, fastapi, value)
        assert_same_body(ours.content, fastapi.content)


def test_endpoints_answer_like_fastapi_over_a_real_server(twin: Twin, live_server: Any) -> None:
    (case,) = (c for c in CASES if c.name == "training_response" and c.built == "constructed")
    twin.add("GET", "/untyped", make_endpoint(case.model()))
    twin.add("GET", "/typed", make_endpoint(case.model(), annotation=case.cls))
    with httpx.Client(base_url=live_server(twin.app)) as client:
        for path in ("/untyped", "/typed"):
            fastapi, ours = twin.both("GET", path, via=client.request)
            assert (ours.status_code, fastapi.status_code) == (200, 200)
            assert ours.headers["content-type"] == fastapi.headers["content-type"]
            assert_same_body(ours.content, fastapi.content)


# --- property tests ----------------------------------------------------------------------------


@st.composite
def dumps_cases(draw: st.DrawFn) -> tuple[SdkCase, dict[str, Any]]:
    case = draw(sdk_values())
    options = {**draw(ENCODER_OPTIONS), **draw(field_selections(case))}
    return case, options


@settings(max_examples=examples(120))
@given(drawn=dumps_cases(), typed=st.booleans())
def test_generated_sdk_values_dumps_like_fastapi(
    drawn: tuple[SdkCase, dict[str, Any]], typed: bool
) -> None:
    case, options = drawn
    note(f"{case.name} {case.built} {options} {case.data}")
    model = case.model()
    if typed:
        expected = outcome(fastapi_typed, case.cls, model, **options)
        ours = outcome(dumps, model, response_model=case.cls, **options)
    else:
        expected = outcome(fastapi_untyped, model, **options)
        ours = outcome(dumps, model, **options)
    event(f"{'typed' if typed else 'untyped'}: FastAPI {type(expected).__name__}")
    if isinstance(expected, Exception):
        assert isinstance(ours, Exception), "FastAPI fails here: dumps must raise"
        return
    assert isinstance(ours, bytes), ours
    assert_same_body(ours, expected)


@st.composite
def route_cases(draw: st.DrawFn) -> tuple[SdkCase, dict[str, Any], bool]:
    case = draw(sdk_values())
    typed = draw(st.booleans())
    options: dict[str, Any] = dict(draw(ROUTE_FLAGS)) if typed else {}
    if typed:
        selection = draw(field_selections(case))
        options |= {f"response_model_{name}": names for name, names in selection.items()}
    return case, options, typed


@settings(max_examples=examples(40))
@given(drawn=route_cases(), route_class=st.sampled_from([None, DispatchRoute]))
def test_generated_sdk_values_answer_like_fastapi(
    drawn: tuple[SdkCase, dict[str, Any], bool], route_class: type[DispatchRoute] | None
) -> None:
    case, options, typed = drawn
    note(f"{case.name} {case.built} typed={typed} {options} {case.data}")
    model = case.model()
    annotation = case.cls if typed else UNTYPED
    ours = make_endpoint(model, annotation=annotation)
    ours_options = options
    if route_class is None:
        ours = dispatch(ours)
    else:
        ours_options = {**options, "route_class_override": route_class}
    answers = serve(
        Route("/fastapi", make_endpoint(model, annotation=annotation), options),
        Route("/ours", ours, ours_options),
    )
    fastapi = answers["/fastapi"]
    event(f"{'typed' if typed else 'untyped'}: FastAPI {fastapi.status_code}")
    assert_matches(answers["/ours"], fastapi, model)
    if fastapi.status_code == 200:
        assert_same_body(answers["/ours"].content, fastapi.content)
