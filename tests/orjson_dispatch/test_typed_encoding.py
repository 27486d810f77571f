"""Typed values (a declared return type or response model) are validated, filtered and written as
FastAPI's typed path writes them: pydantic's ``dump_json`` of the value validated against the type.

The property tests compare ``dumps(value, response_model=T)`` with
``TypeAdapter(T).dump_json(TypeAdapter(T).validate_python(value, from_attributes=True),
by_alias=True)`` (the ``include``/``exclude``/``by_alias``/``exclude_*`` options passed to both),
and a typed endpoint under ``@dispatch`` with the same endpoint on FastAPI over HTTP: the type
declared as return annotation, ``response_model`` or both, the route's ``response_model_*``
options, the endpoint's shape, a response class of the route's own now and then. Where FastAPI
answers 500, ``dispatch`` must too, except for the deliberate differences (``oracles``): numpy
encoded as ``tolist()``; NaN written ``null`` under an explicit ``response_class=JSONResponse``
(and before FastAPI 0.130), as FastAPI's default typed path writes it; a ``list[float]``/
``list[int]`` field holding ints/bools assigned without validation written as held.
"""

import dataclasses
import datetime as dt
import math
from collections import deque
from decimal import Decimal
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from hypothesis import event, given, note, settings
from hypothesis import strategies as st
from orjson_dispatch._rendering import reads_content
from pydantic import (
    BaseModel,
    ConfigDict,
    TypeAdapter,
    computed_field,
    field_validator,
)

from orjson_dispatch import dispatch, dumps
from tests.orjson_dispatch.apps import (
    BOTH_ENTRY_POINTS,
    Decorate,
    Route,
    Twin,
    built_both,
    get_all,
    make_endpoint,
    serve,
)
from tests.orjson_dispatch.compare import (
    assert_identical,
    assert_same_answer,
    outcome,
    same_json,
)
from tests.orjson_dispatch.oracles import (
    assert_matches,
    class_headers,
    denumpy,
    fastapi_typed,
    fastapi_untyped,
    headers_without_length,
    same_json_or_held,
    typed_since_0130,
)
from tests.orjson_dispatch.samples import ITEM, Item, NanConstants, Public, Wrapped
from tests.orjson_dispatch.strategies import examples
from tests.orjson_dispatch.strategies.http_cases import (
    ENCODER_OPTIONS,
    TypedCase,
    note_case,
    typed_cases,
)
from tests.orjson_dispatch.strategies.leaves import contains_numpy
from tests.orjson_dispatch.strategies.returned import Returned, disguised_values, returned_values
from tests.orjson_dispatch.strategies.specs import TypeSpec, model_specs, type_specs
from tests.orjson_dispatch.versions import FASTAPI_DUMPS_JSON

# --- property tests ----------------------------------------------------------------------------


@st.composite
def typed_dumps_cases(draw: st.DrawFn) -> tuple[TypeSpec, Returned, dict[str, Any]]:
    spec = draw(type_specs())
    returned = draw(returned_values(spec) | disguised_values(spec))
    options: dict[str, Any] = dict(draw(ENCODER_OPTIONS))
    if spec.model is not None and spec.model.model_fields and draw(st.booleans()):
        names = st.sets(st.sampled_from(sorted(spec.model.model_fields)))
        options[draw(st.sampled_from(["include", "exclude"]))] = draw(names)
    return spec, returned, options


@settings(max_examples=examples(400))
@given(case=typed_dumps_cases())
def test_dumps_typed_matches_pydantic_dump_json(
    case: tuple[TypeSpec, Returned, dict[str, Any]],
) -> None:
    spec, returned, options = case
    note(f"type: {spec.annotation!r}, options: {options}, returned ({returned.how})")
    expected = outcome(fastapi_typed, spec.annotation, returned.value, **options)
    ours = outcome(dumps, returned.value, response_model=spec.annotation, **options)
    note(f"FastAPI: {expected!r}")
    note(f"dumps: {ours!r}")
    if isinstance(expected, bytes):
        event(f"typed: returned {returned.how}, FastAPI encodes")
        assert isinstance(ours, bytes), ours
        assert same_json_or_held(ours, expected, returned.value), "different JSON"
        return
    event(f"typed: returned {returned.how}, FastAPI raises {type(expected).__name__}")
    if contains_numpy(returned.value) and isinstance(ours, bytes):
        event("typed: deliberate difference (numpy)")
        plain = fastapi_typed(spec.annotation, denumpy(returned.value), **options)
        assert same_json_or_held(ours, plain, returned.value), "different JSON"
        return
    assert isinstance(ours, Exception), "FastAPI's typed path fails here: dumps must raise"


@settings(max_examples=examples(350))
@given(case=typed_cases())
def test_typed_endpoint_answers_like_fastapi_typed_path(case: TypedCase) -> None:
    note_case(case)
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
        assert headers_without_length(ours) == class_headers(case.options)
        assert same_json_or_held(ours.content, default.content, value)
        return
    if not FASTAPI_DUMPS_JSON and ours.status_code == 200:
        event("typed: FastAPI before 0.130 answers 500 (NaN rendered by JSONResponse)")
        expected = typed_since_0130(case.spec.annotation, value, case.options)
        assert isinstance(expected, bytes), expected
        assert same_json_or_held(ours.content, expected, value)
        return
    assert ours.status_code == 500, "FastAPI's typed path answers 500: dispatch must too"


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


# --- validation of a returned instance ------------------------------------------------------------


class Revalidated(BaseModel):
    model_config = ConfigDict(revalidate_instances="always")
    word: str

    @field_validator("word")
    @classmethod
    def shout(cls, word: str) -> str:
        return word.upper()


@pytest.mark.parametrize(
    ("model", "data", "changed"),
    [
        (Public, {"name": "a"}, {"token": "secret"}),
        (Wrapped, {"name": "w"}, {"name": "quiet"}),
        (Revalidated, {"word": "w"}, {"word": "quiet"}),
        (Item, {"name": "pen", "price": 1.5}, {}),  # validation passes the instance as it is
    ],
)
def test_dumps_validates_an_instance_of_its_declared_class_as_fastapi_does(
    model: type[BaseModel], data: dict[str, Any], changed: dict[str, Any]
) -> None:
    """Model validators and `revalidate_instances` apply to an instance of the class itself."""

    def returned() -> BaseModel:  # a fresh one each time: an after validator changes it
        value = model.model_validate(data)
        for name, held in changed.items():
            setattr(value, name, held)
        return value

    adapter: TypeAdapter[Any] = TypeAdapter(model)
    validated = adapter.validate_python(returned(), from_attributes=True)
    expected = adapter.dump_json(validated, by_alias=True)  # FastAPI's default
    assert (expected != returned().model_dump_json(by_alias=True).encode()) == bool(changed)
    assert dumps(returned(), response_model=model) == expected


# --- the declared type in force ------------------------------------------------------------------


@pytest.mark.parametrize("is_async", [True, False])
def test_response_model_none_keeps_the_untyped_path(is_async: bool) -> None:
    """``response_model=None`` on the route turns FastAPI's typed path off; dispatch follows."""
    value = {"when": dt.timedelta(seconds=90), "price": Decimal("1.50"), 7: {1, 2}}
    endpoint = make_endpoint(value, annotation=dict[Any, Any], is_async=is_async)
    decorated = dispatch(make_endpoint(value, annotation=dict[Any, Any], is_async=is_async))
    answers = serve(
        Route("/fastapi", endpoint, {"response_model": None}),
        Route("/dispatch", decorated, {"response_model": None}),
    )
    assert answers["/fastapi"].json() == {"when": 90.0, "price": 1.5, "7": [1, 2]}
    assert_same_answer(answers["/dispatch"], answers["/fastapi"])


def test_extra_fields_come_before_computed_fields_like_pydantic() -> None:
    """pydantic writes fields, then extra fields, then computed fields."""

    class Open(BaseModel):
        model_config = ConfigDict(extra="allow")

        a: int

        @computed_field  # type: ignore[prop-decorator]
        @property
        def total(self) -> int:
            return self.a + 1

    value = Open(a=1, z=5)  # type: ignore[call-arg]  # an extra field
    expected = TypeAdapter(Open).dump_json(value, by_alias=True)
    assert expected == b'{"a":1,"z":5,"total":2}'
    assert dumps(value, response_model=Open) == expected
    assert dumps(value) == fastapi_untyped(value)


# --- model fields assigned without validation ---------------------------------------------------


class Scores(BaseModel):
    score: float
    count: int


@pytest.mark.parametrize("declared", ["untyped", "response_model", "annotation"])
def test_scalar_field_assigned_without_validation_is_written_as_held(declared: str) -> None:
    """A value a type checker accepts but validation would not produce (the contract's second
    tier): an int held by a float field, a bool by an int field, written as held, where pydantic
    converts them (``0.0``, ``1``); the same numbers in JSON, read back."""

    def scores() -> Scores:
        value = Scores(score=1.5, count=2)
        value.score = 0  # pydantic does not validate assignment by default
        value.count = True
        return value

    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        # An explicit response_model=None turns FastAPI's typed path off despite the annotation.
        options: dict[str, dict[str, Any]] = {
            "untyped": {"response_model": None},
            "response_model": {"response_model": Scores},
        }
        app.get("/x", **options.get(declared, {}))(decorate(scores))
        return app

    fastapi_app, dispatch_app = built_both(build)
    (theirs,), (ours,) = get_all(fastapi_app, "/x"), get_all(dispatch_app, "/x")
    assert theirs.content == b'{"score":0.0,"count":1}'
    assert ours.content == b'{"score":0,"count":true}'
    assert ours.json() == theirs.json()
    assert headers_without_length(ours) == headers_without_length(theirs)


class Tokens(BaseModel):
    logprobs: list[float]
    ids: list[int]


def test_scalar_containers_assigned_without_validation_are_written_as_held() -> None:
    """A deliberate difference: only scalar fields are checked value by value.

    Checking every element of a list of tens of thousands of tokens would cost more than
    pydantic's own serializer; FastAPI (pydantic) converts each element to the declared type.
    """

    def tokens() -> Tokens:
        value = Tokens(logprobs=[-0.5], ids=[1])
        value.logprobs = [0, -0.25]  # an int where floats are declared
        value.ids = [True, 2]  # a bool where ints are declared
        return value

    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        app.get("/x")(decorate(tokens))
        return app

    [fastapi], [ours] = (get_all(app, "/x") for app in built_both(build))
    assert (fastapi.status_code, fastapi.content) == (200, b'{"logprobs":[0.0,-0.25],"ids":[1,2]}')
    assert (ours.status_code, ours.content) == (200, b'{"logprobs":[0,-0.25],"ids":[true,2]}')


# --- NaN: null where FastAPI writes a token no JSON parser accepts or answers 500 ----------------


def test_typed_nan_constants_is_written_as_null() -> None:
    """A deliberate difference: FastAPI writes the NaN token, which no JSON parser accepts."""

    def nan() -> NanConstants:
        return NanConstants(f=math.nan)

    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        app.get("/x")(decorate(nan))
        return app

    [fastapi], [ours] = (get_all(app, "/x") for app in built_both(build))
    # FastAPI before 0.130 renders typed values with json.dumps(allow_nan=False): a 500.
    expected = (200, b'{"f":NaN}') if FASTAPI_DUMPS_JSON else (500, b"Internal Server Error")
    assert (fastapi.status_code, fastapi.content) == expected
    assert (ours.status_code, ours.content) == (200, b'{"f":null}')


def test_explicit_json_response_class_with_a_model_answers_as_fastapi(twin: Twin) -> None:
    twin.add("GET", "/ok", make_endpoint(ITEM, annotation=Item), response_class=JSONResponse)
    fastapi, ours = twin.both("GET", "/ok")
    assert fastapi.json() == {"name": "pen", "Price": 1.5, "tags": [], "note": None}
    assert_identical(ours, fastapi)


def test_explicit_json_response_class_writes_nan_as_null_like_the_default_class(
    twin: Twin,
) -> None:
    """With a response class set, FastAPI dumps to Python then renders with
    ``json.dumps(allow_nan=False)``: NaN answers 500 there.

    Deliberate difference: dispatch writes ``null``, as FastAPI's default typed path does
    (from 0.130; before, its default class was JSONResponse too, and answered 500).
    """
    nan_item = Item(name="x", price=math.nan)
    twin.add("GET", "/nan", make_endpoint(nan_item, annotation=Item), response_class=JSONResponse)
    twin.add("GET", "/default", make_endpoint(nan_item, annotation=Item))
    null = b'{"name":"x","Price":null,"tags":[],"note":null}'
    fastapi, ours = twin.both("GET", "/nan")
    assert fastapi.status_code == 500
    assert (ours.status_code, ours.content) == (200, null)
    fastapi, ours = twin.both("GET", "/default")
    assert (ours.status_code, ours.content) == (200, null)
    if FASTAPI_DUMPS_JSON:
        assert (fastapi.status_code, fastapi.content) == (200, null)


# --- non-finite float keys at positions declared Any ---------------------------------------------


@dataclasses.dataclass
class _Keyed:
    mapping: dict[Any, Any]


_NON_FINITE_KEYS: list[tuple[str, Any, Any]] = [
    ("deque", Any, lambda: deque([{math.nan: None}])),
    ("deque-nested", Any, lambda: deque([{"a": {math.inf: 1, 1.5: 2}}])),
    ("deque-dict-any", list[Any], lambda: deque([{-math.inf: None}])),
    ("set-in-list", Any, lambda: [{math.nan: frozenset([1])}, {1}]),
    ("dataclass", Any, lambda: [_Keyed({math.nan: 1})]),
    ("list", Any, lambda: [{math.inf: None}]),
    ("top-level", dict[Any, Any], lambda: {-math.inf: {math.nan: 1}}),
]
if FASTAPI_DUMPS_JSON:  # before 0.130 FastAPI dumps to Python first: one "None" key is left
    _NON_FINITE_KEYS.append(("deque-two-keys", Any, lambda: deque([{math.nan: 1, math.inf: 2}])))


@BOTH_ENTRY_POINTS
@pytest.mark.parametrize(
    ("annotation", "make"),
    [case[1:] for case in _NON_FINITE_KEYS],
    ids=[case[0] for case in _NON_FINITE_KEYS],
)
def test_non_finite_float_keys_under_any_are_written_as_fastapi_writes_them(
    twin: Twin, annotation: Any, make: Any
) -> None:
    """pydantic writes a NaN or infinite float key "None" (NaN and infinities as null, a null
    key as "None"), inside a deque, set or dataclass too, where orjson's `default` once wrote
    `to_jsonable_python`'s "nan"/"inf"/"-inf"."""
    twin.add("GET", "/annotated", make_endpoint(make(), annotation=annotation))
    twin.add("GET", "/response-model", make_endpoint(make()), response_model=annotation)
    for path in ("/annotated", "/response-model"):
        fastapi, ours = twin.both("GET", path)
        assert (ours.status_code, ours.content) == (fastapi.status_code, fastapi.content)
    expected = outcome(fastapi_typed, annotation, make())
    written = outcome(dumps, make(), response_model=annotation)
    if isinstance(expected, bytes):
        assert written == expected
    else:  # pydantic 2.7 infers no deque: both raise
        assert type(written) is type(expected)
