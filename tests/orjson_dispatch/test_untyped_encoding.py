"""Untyped values (no declared type) are encoded as FastAPI's ``jsonable_encoder`` encodes them.

The property tests compare ``dumps(value)`` with ``JSONResponse(jsonable_encoder(value)).body``,
and an untyped endpoint under ``@dispatch`` with the same endpoint on FastAPI over HTTP (httpx's
ASGI transport): functions, partials or callable objects, sync or async, evaluated or postponed
annotations, a response class of the route's own now and then. When FastAPI answers 2xx,
``dispatch`` answers the same status, headers in order (the length aside) and JSON, numbers with
their JSON type; when FastAPI fails, ``dispatch`` fails too, except for the deliberate
differences of ``oracles``, which must give exactly the documented body:

* NaN and infinities become ``null`` (pydantic's and FastAPI's typed-path rule);
* an enum whose value ``json.dumps`` cannot write is encoded as that value;
* numpy scalars and arrays are encoded as their ``tolist()`` equivalents;
* a dataclass is encoded field by field, without ``dataclasses.asdict``'s deep copy.

The single examples below cover values whose Python protocols disagree with what they hold,
nesting around orjson's depth limit, numpy, and the known discrepancies (strict xfails). Dict
keys and dataclasses have files of their own. Hypothesis ``event``s record why FastAPI failed
(``--hypothesis-show-statistics``).
"""

import math
import warnings
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from hypothesis import event, given, note, settings
from hypothesis import strategies as st
from orjson_dispatch._rendering import reads_content
from pydantic import BaseModel, computed_field

from orjson_dispatch import dispatch, dumps
from tests.orjson_dispatch.apps import UNTYPED, Decorate, Route, built_both, get_all, serve
from tests.orjson_dispatch.compare import assert_answers_alike, json_pairs, outcome
from tests.orjson_dispatch.oracles import (
    assert_matches,
    class_headers,
    deliberate_untyped_answer,
    deliberate_untyped_body,
    denumpy,
    fastapi_untyped,
    headers_without_length,
    same_json_or_held,
)
from tests.orjson_dispatch.samples import NanConstants, NanStrings
from tests.orjson_dispatch.strategies import examples
from tests.orjson_dispatch.strategies.hostile import (
    Bits,
    Day,
    HidingDict,
    Letter,
    Number,
    Price,
    RenamingDict,
    ReversedList,
)
from tests.orjson_dispatch.strategies.http_cases import (
    ENCODER_OPTIONS,
    RESPONSE_CLASS_OPTIONS,
    ROUTE_FLAGS,
    Shape,
    shapes,
)
from tests.orjson_dispatch.strategies.untyped import KnownDiscrepancy, untyped_values
from tests.orjson_dispatch.versions import NAN_AS_STRINGS, NEEDS_NAN_AS_STRINGS

# --- property tests ----------------------------------------------------------------------------


@settings(max_examples=examples(800))
@given(
    value=untyped_values(numpy=True, max_leaves=16, deep=True),
    options=st.just({}) | ENCODER_OPTIONS,
)
def test_dumps_untyped_matches_jsonable_encoder(value: Any, options: dict[str, Any]) -> None:
    # numpy: the reference is FastAPI's answer for the numpy-free equivalent (tolist()).
    plain = denumpy(value)
    expected = outcome(fastapi_untyped, plain, **options)
    ours = outcome(dumps, value, **options)
    note(f"FastAPI: {expected!r}")
    note(f"dumps: {ours!r}")
    if plain is not value:
        event("untyped: numpy, compared with FastAPI on tolist()")
        fastapi_numpy = outcome(fastapi_untyped, value, **options)
        if isinstance(fastapi_numpy, bytes):
            event("untyped: numpy that FastAPI itself encodes")
    if isinstance(expected, bytes):
        event("untyped: FastAPI encodes")
        assert isinstance(ours, bytes), ours
        assert same_json_or_held(ours, expected, value), "different JSON"
        return
    event(f"untyped: FastAPI raises {type(expected).__name__}")
    deliberate = deliberate_untyped_body(value, **options)
    if deliberate is None:
        assert isinstance(ours, Exception), "FastAPI cannot encode this value: dumps must raise"
        return
    event("untyped: deliberate difference (NaN/inf -> null, enum value, dataclass not copied)")
    assert isinstance(ours, bytes), ours
    assert same_json_or_held(ours, deliberate, value), "different JSON"


def _record_failure(value: Any) -> None:
    try:
        JSONResponse(jsonable_encoder(value))
    except Exception as exc:  # only recorded: FastAPI's answer is the oracle
        event(f"untyped: FastAPI 500 ({type(exc).__name__})")
    else:
        event("untyped: FastAPI 500")


@settings(max_examples=examples(400))
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
    _record_failure(plain)
    expected = deliberate_untyped_answer(ours, value)
    if expected is not None:
        event("untyped: deliberate difference (NaN/inf -> null, enum value, dataclass not copied)")
        assert headers_without_length(ours) == class_headers(options)
        assert same_json_or_held(ours.content, expected, value)


# --- values whose protocols disagree with what they hold ---------------------------------------


class Enums(BaseModel):
    letter: Letter
    number: Number


def test_enum_whose_value_differs_from_its_content_is_written_as_fastapi_writes_it() -> None:
    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        app.get("/values")(decorate(lambda: {"letter": Letter.ALPHA, "number": Number.HUNDRED}))
        app.get("/keys")(decorate(lambda: {Letter.ALPHA: 1, Number.HUNDRED: 2}))
        enums = Enums(letter=Letter.ALPHA, number=Number.HUNDRED)
        app.get("/model", response_model=Enums)(decorate(lambda: enums))
        return app

    assert (Letter.ALPHA.value, str.__str__(Letter.ALPHA), int(Number.HUNDRED)) == ("Alpha", "a", 1)
    assert_answers_alike(build, "/values", "/keys", "/model")


@pytest.mark.parametrize(
    "value",
    [HidingDict(a=1, hidden="s3cr3t"), ReversedList([1, 2])],
    ids=["dict-hiding-a-key", "list-overriding-iter"],
)
def test_container_subclass_overriding_its_iteration_is_written_as_fastapi_writes_it(
    value: Any,
) -> None:
    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        app.get("/x")(decorate(lambda: value))
        return app

    assert_answers_alike(build, "/x")


def test_dict_whose_items_show_keys_its_keys_has_not() -> None:
    value = RenamingDict(a=1)
    assert fastapi_untyped(value) == b"{}"
    assert dumps(value) == b"{}"


# --- values FastAPI cannot encode: deliberate differences --------------------------------------


@pytest.mark.parametrize(
    ("value", "body"),
    [
        pytest.param(NanConstants(f=math.nan), b'{"v":{"f":null}}', id="nan-constants"),
        pytest.param(
            NanStrings(f=math.nan),
            b'{"v":{"f":"NaN"}}',
            id="nan-strings",
            marks=pytest.mark.skipif(not NAN_AS_STRINGS, reason=NEEDS_NAN_AS_STRINGS),
        ),
        pytest.param(Price.HALF, b'{"v":0.5}', id="decimal-enum"),
        pytest.param(Day.LEAP, b'{"v":"2024-02-29"}', id="date-enum"),
        pytest.param(Bits.LOW, b'{"v":[1,2]}', id="frozenset-enum"),
    ],
)
def test_value_fastapi_cannot_encode_is_encoded_as_strict_json(value: Any, body: bytes) -> None:
    """A deliberate difference: FastAPI answers 500, dispatch strict JSON.

    NaN becomes null as everywhere in the untyped path (a model whose configuration writes it
    as a string keeps the string); an enum's value is encoded by the rules for that value
    (orjson reads an enum's value itself).
    """

    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        app.get("/x")(decorate(lambda: {"v": value}))
        return app

    [fastapi], [ours] = (get_all(app, "/x") for app in built_both(build))
    assert fastapi.status_code == 500
    assert (ours.status_code, ours.headers["content-type"], ours.content) == (
        200,
        "application/json",
        body,
    )


@pytest.mark.parametrize(
    ("value", "options", "plain"),
    [
        ({"v": Price.HALF}, {"exclude_none": True}, {"v": Decimal("0.5")}),
        ([2**64, Day.LEAP], {}, [2**64, Day.LEAP.value]),
    ],
    ids=["options", "big-int"],
)
def test_unwritable_enum_value_is_encoded_as_its_value_on_the_exact_path_too(
    value: Any, options: dict[str, bool], plain: Any
) -> None:
    with pytest.raises(TypeError):
        fastapi_untyped(value, **options)  # FastAPI: 500
    assert dumps(value, **options) == fastapi_untyped(plain, **options)  # the deliberate rule


@pytest.mark.filterwarnings("ignore:ORJSONResponse is deprecated:DeprecationWarning")
def test_big_int_with_orjson_response_class_is_written_as_its_digits() -> None:
    """A deliberate difference: orjson's ORJSONResponse refuses integers beyond 64 bits (500);
    dispatch writes their digits, as FastAPI's default response class does."""
    from fastapi import responses

    if not hasattr(responses, "ORJSONResponse"):
        pytest.skip("this FastAPI has no ORJSONResponse")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        response_class = responses.ORJSONResponse

    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        app.get("/x", response_class=response_class)(decorate(lambda: {"n": 2**70}))
        return app

    [fastapi], [ours] = (get_all(app, "/x") for app in built_both(build))
    assert fastapi.status_code == 500
    assert (ours.status_code, ours.content) == (200, b'{"n":1180591620717411303424}')


# --- deep nesting: orjson stops at 254 levels, the exact path goes on ---------------------------


def nested_lists(depth: int, inner: Any = None) -> Any:
    value: Any = [] if inner is None else inner
    for _ in range(depth):
        value = [value]
    return value


def nested_dicts(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize("make", [nested_lists, nested_dicts])
@pytest.mark.parametrize("depth", [300, 900])
def test_deeply_nested_untyped_value_answers_like_fastapi(
    make: Callable[[int], Any], depth: int
) -> None:
    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        app.get("/x")(decorate(lambda: make(depth)))
        return app

    [(status, _, _)] = assert_answers_alike(build, "/x")
    assert status == 200


@pytest.mark.parametrize("inner", [[], {}], ids=["list", "dict"])
def test_empty_container_at_orjsons_depth_limit(inner: Any) -> None:
    value = nested_lists(254, inner)
    assert dumps(value) == fastapi_untyped(value)


@pytest.mark.parametrize("leaf", [2**64, np.int64(7)], ids=["big-int", "numpy"])
def test_big_integer_or_numpy_nested_deeper_than_orjsons_limit(leaf: Any) -> None:
    value = nested_lists(255, leaf)
    assert dumps(value) == fastapi_untyped(nested_lists(255, int(leaf)))


# --- numpy: encoded as tolist(), a deliberate difference ---------------------------------------


def test_numpy_values_encode_alike_on_both_paths() -> None:
    values = {"empty": np.array([], dtype=np.int64), "grid": np.arange(4).reshape(2, 2)}
    expected = b'{"empty":[],"grid":[[0,1],[2,3]]}'
    assert dumps(values) == expected
    # A non-str key sends the whole value down the exact path.
    assert json_pairs(dumps({**values, 0: None})) == json_pairs(expected[:-1] + b',"0":null}')


@pytest.mark.parametrize("flag", ["exclude_none", "exclude_unset", "exclude_defaults"])
def test_empty_numpy_array_is_an_empty_list_with_every_option(flag: str) -> None:
    """An array is its ``tolist()``, whatever the options.

    (FastAPI answers ``{}`` for an empty array: ``dict(array)`` of nothing succeeds.)
    """
    value = [np.array([], dtype=np.int64), np.zeros((0, 3))]
    assert dumps(value) == b"[[],[]]"
    assert dumps(value, **{flag: True}) == b"[[],[]]"


def test_float32_is_written_with_its_own_shortest_representation() -> None:
    assert dumps(np.float32(43328352.0)) == b"43328350.0"
    assert dumps(np.float64(0.1)) == fastapi_untyped(np.float64(0.1)) == b"0.1"


class Loose(BaseModel):
    """A model with an int field and an Any field."""

    n: int
    a: Any


class LooseComputed(Loose):
    """Converted by pydantic whole (a computed field)."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def c(self) -> int:
        return 1


def test_numpy_value_inside_a_model_is_encoded_whichever_path_the_model_takes() -> None:
    assert dumps(Loose(n=1, a=np.False_)) == b'{"n":1,"a":false}'
    assert dumps(LooseComputed(n=1, a=np.False_)) == b'{"n":1,"a":false,"c":1}'


# --- known discrepancies (strict xfails; the strategies leave their inputs out) -----------------


@pytest.mark.skipif(not NAN_AS_STRINGS, reason=NEEDS_NAN_AS_STRINGS)
@KnownDiscrepancy.NAN_IN_STRINGS_MODEL_ON_THE_EXACT_PATH.xfail
@pytest.mark.parametrize(
    ("value", "options"),
    [
        ({"v": NanStrings(f=math.nan), "b": 2**64}, {}),
        ({"v": NanStrings(f=math.nan)}, {"exclude_none": True}),
    ],
    ids=["big-int", "options"],
)
def test_nan_in_a_strings_model_is_a_string_on_every_path(
    value: dict[str, Any], options: dict[str, bool]
) -> None:
    assert dumps({"v": NanStrings(f=math.nan)}) == b'{"v":{"f":"NaN"}}'  # the deliberate rule
    assert json_pairs(dumps(value, **options))[0] == ("v", [("f", "NaN")])


@pytest.mark.parametrize(
    "array",
    [np.array([1j]), np.array([1, "x"], dtype=object), np.array(["x", "y"])],
    ids=["complex", "object", "str"],
)
def test_a_numpy_array_orjson_refuses_is_refused_as_fastapi_refuses_it(array: Any) -> None:
    """Its dtype is not one orjson writes: FastAPI's rules decide (`dict()`, then `vars()`)."""
    value = {"a": array}
    expected, ours = outcome(fastapi_untyped, value), outcome(dumps, value)
    assert isinstance(expected, ValueError)
    assert type(ours) is ValueError
    assert str(ours) == str(expected)
