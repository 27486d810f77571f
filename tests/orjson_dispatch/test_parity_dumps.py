"""Parity of ``orjson_dispatch.dumps`` with FastAPI's two encoders, called directly.

* ``dumps(value)`` against FastAPI's untyped path, ``JSONResponse(jsonable_encoder(value)).body``;
* ``dumps(value, response_model=T)`` against FastAPI's typed path,
  ``TypeAdapter(T).dump_json(TypeAdapter(T).validate_python(value, from_attributes=True),
  by_alias=True)``,

with the ``include``/``exclude``/``by_alias``/``exclude_*`` options passed to both sides. No HTTP:
these run many more examples than the HTTP parity tests. Where FastAPI fails, ``dumps`` must raise,
except for the documented deliberate differences (non-finite floats become ``null`` in the untyped
conversion; numpy scalars and arrays are encoded as their ``tolist()`` equivalents).
"""

import json
from typing import Any

import orjson
import pytest
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from hypothesis import event, given, note, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from orjson_dispatch import dumps
from tests.orjson_dispatch.strategies import (
    Returned,
    TypeSpec,
    contains_numpy,
    deliberate_untyped_body,
    denumpy,
    disguised_values,
    examples,
    json_pairs,
    returned_values,
    same_json,
    type_specs,
    untyped_values,
)


def fastapi_untyped(value: Any, **options: Any) -> bytes:
    """FastAPI's untyped body for ``value``: ``jsonable_encoder`` then ``JSONResponse``."""
    return bytes(JSONResponse(jsonable_encoder(value, **options)).body)


def fastapi_typed(annotation: Any, value: Any, **options: Any) -> bytes:
    """FastAPI's typed body: validate (``from_attributes``), then pydantic's ``dump_json``."""
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    validated = adapter.validate_python(value, from_attributes=True)
    return adapter.dump_json(validated, **{"by_alias": True, **options})


def _outcome(function: Any, *args: Any, **kwargs: Any) -> bytes | Exception:
    try:
        result: bytes = function(*args, **kwargs)
    except Exception as exc:  # the failure is the observed behaviour
        return exc
    return result


jsonable_options = st.fixed_dictionaries(
    {},
    optional={
        "by_alias": st.booleans(),
        "exclude_unset": st.booleans(),
        "exclude_defaults": st.booleans(),
        "exclude_none": st.booleans(),
    },
)


@settings(max_examples=examples(1500))
@given(value=untyped_values(numpy=True, max_leaves=16), options=st.just({}) | jsonable_options)
def test_dumps_untyped_matches_jsonable_encoder(value: Any, options: dict[str, Any]) -> None:
    # numpy: the reference is FastAPI's answer for the numpy-free equivalent (tolist()).
    plain = denumpy(value)
    expected = _outcome(fastapi_untyped, plain, **options)
    ours = _outcome(dumps, value, **options)
    note(f"FastAPI: {expected!r}")
    note(f"dumps: {ours!r}")
    if plain is not value:
        event("untyped: numpy, compared with FastAPI on tolist()")
        fastapi_numpy = _outcome(fastapi_untyped, value, **options)
        if isinstance(fastapi_numpy, bytes):
            event("untyped: numpy that FastAPI itself encodes")
    if isinstance(expected, bytes):
        event("untyped: FastAPI encodes")
        assert isinstance(ours, bytes), ours
        assert same_json(ours, expected)
        return
    event(f"untyped: FastAPI raises {type(expected).__name__}")
    deliberate = deliberate_untyped_body(value, **options)
    if deliberate is None:
        assert isinstance(ours, Exception), "FastAPI cannot encode this value: dumps must raise"
        return
    event("untyped: deliberate difference (NaN/inf -> null, dataclass not copied)")
    assert isinstance(ours, bytes), ours
    assert same_json(ours, deliberate)


@st.composite
def typed_dumps_cases(draw: st.DrawFn) -> tuple[TypeSpec, Returned, dict[str, Any]]:
    spec = draw(type_specs())
    returned = draw(returned_values(spec) | disguised_values(spec))
    options: dict[str, Any] = dict(draw(jsonable_options))
    if spec.model is not None and spec.model.model_fields and draw(st.booleans()):
        names = st.sets(st.sampled_from(sorted(spec.model.model_fields)))
        options[draw(st.sampled_from(["include", "exclude"]))] = draw(names)
    return spec, returned, options


@settings(max_examples=examples(700))
@given(case=typed_dumps_cases())
def test_dumps_typed_matches_pydantic_dump_json(
    case: tuple[TypeSpec, Returned, dict[str, Any]],
) -> None:
    spec, returned, options = case
    note(f"type: {spec.annotation!r}, options: {options}, returned ({returned.how})")
    expected = _outcome(fastapi_typed, spec.annotation, returned.value, **options)
    ours = _outcome(dumps, returned.value, response_model=spec.annotation, **options)
    note(f"FastAPI: {expected!r}")
    note(f"dumps: {ours!r}")
    if isinstance(expected, bytes):
        event(f"typed: returned {returned.how}, FastAPI encodes")
        assert isinstance(ours, bytes), ours
        assert same_json(ours, expected)
        return
    event(f"typed: returned {returned.how}, FastAPI raises {type(expected).__name__}")
    if contains_numpy(returned.value) and isinstance(ours, bytes):
        event("typed: deliberate difference (numpy)")
        plain = fastapi_typed(spec.annotation, denumpy(returned.value), **options)
        assert same_json(ours, plain)
        return
    assert isinstance(ours, Exception), "FastAPI's typed path fails here: dumps must raise"


@settings(max_examples=examples(150))
@given(
    value=untyped_values(max_leaves=8),
    option=st.sampled_from(
        [
            orjson.OPT_INDENT_2,
            orjson.OPT_SORT_KEYS,
            orjson.OPT_APPEND_NEWLINE,
            orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE,
        ]
    ),
)
def test_layout_options_change_only_the_layout(value: Any, option: int) -> None:
    plain = _outcome(dumps, value)
    laid_out = _outcome(dumps, value, option=option)
    if isinstance(plain, Exception):
        assert isinstance(laid_out, Exception)
        return
    assert isinstance(laid_out, bytes), laid_out
    assert laid_out.endswith(b"\n") == bool(option & orjson.OPT_APPEND_NEWLINE)
    if option & orjson.OPT_SORT_KEYS:
        # Key order aside (duplicate keys collapse the same way on both sides).
        assert json.loads(laid_out) == json.loads(plain)
    else:
        assert json_pairs(laid_out) == json_pairs(plain)
    if option & orjson.OPT_INDENT_2 and laid_out.strip() not in {b"[]", b"{}"}:
        assert b"\n  " in laid_out or laid_out.count(b"\n") <= 1


@pytest.mark.parametrize(
    "option",
    [
        orjson.OPT_NAIVE_UTC,
        orjson.OPT_OMIT_MICROSECONDS,
        orjson.OPT_UTC_Z,
        orjson.OPT_STRICT_INTEGER,
        orjson.OPT_SERIALIZE_NUMPY,
        orjson.OPT_PASSTHROUGH_DATETIME,
        orjson.OPT_NON_STR_KEYS,
    ],
)
def test_content_changing_options_are_refused(option: int) -> None:
    with pytest.raises(TypeError, match="option"):
        dumps({"a": 1}, option=option)
