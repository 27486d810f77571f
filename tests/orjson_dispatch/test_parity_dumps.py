"""Parity of ``orjson_dispatch.dumps`` with FastAPI's two encoders, called directly.

* ``dumps(value)`` against FastAPI's untyped path, ``JSONResponse(jsonable_encoder(value)).body``;
* ``dumps(value, response_model=T)`` against FastAPI's typed path,
  ``TypeAdapter(T).dump_json(TypeAdapter(T).validate_python(value, from_attributes=True),
  by_alias=True)``,

with the ``include``/``exclude``/``by_alias``/``exclude_*`` options passed to both sides. No HTTP:
these run many more examples than the HTTP parity tests. Numbers are compared with their JSON
type. Where FastAPI fails, ``dumps`` must raise, except for the documented deliberate differences
(``oracles``: non-finite floats become ``null`` in the untyped conversion; an enum whose value
``json.dumps`` cannot write is encoded as that value; numpy scalars and arrays are encoded as their
``tolist()`` equivalents). A ``list[float]``/``list[int]`` model field holding ints/bools assigned
without validation is written as held (``held_containers_as_written``).
"""

from typing import Any

from hypothesis import event, given, note, settings
from hypothesis import strategies as st

from orjson_dispatch import dumps
from tests.orjson_dispatch.compare import outcome
from tests.orjson_dispatch.oracles import (
    deliberate_untyped_body,
    denumpy,
    fastapi_typed,
    fastapi_untyped,
    same_json_or_held,
)
from tests.orjson_dispatch.strategies import examples
from tests.orjson_dispatch.strategies.leaves import contains_numpy
from tests.orjson_dispatch.strategies.returned import Returned, disguised_values, returned_values
from tests.orjson_dispatch.strategies.specs import TypeSpec, type_specs
from tests.orjson_dispatch.strategies.untyped import untyped_values
from tests.orjson_dispatch.versions import FASTAPI_NESTED_EXCLUDE_DEFAULTS


def assert_same_json(ours: bytes, expected: bytes, value: Any) -> None:
    """The same JSON, or ``expected`` with containers written as held (a deliberate rule)."""
    assert same_json_or_held(ours, expected, value), "different JSON"


jsonable_options = st.fixed_dictionaries(
    {},
    optional={
        "by_alias": st.booleans(),
        "exclude_unset": st.booleans(),
        # Before FastAPI 0.140.9 a model inside a dict kept its defaults: not comparable there.
        **({"exclude_defaults": st.booleans()} if FASTAPI_NESTED_EXCLUDE_DEFAULTS else {}),
        "exclude_none": st.booleans(),
    },
)


@settings(max_examples=examples(1500))
@given(
    value=untyped_values(numpy=True, max_leaves=16, deep=True),
    options=st.just({}) | jsonable_options,
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
        assert_same_json(ours, expected, value)
        return
    event(f"untyped: FastAPI raises {type(expected).__name__}")
    deliberate = deliberate_untyped_body(value, **options)
    if deliberate is None:
        assert isinstance(ours, Exception), "FastAPI cannot encode this value: dumps must raise"
        return
    event("untyped: deliberate difference (NaN/inf -> null, enum value, dataclass not copied)")
    assert isinstance(ours, bytes), ours
    assert_same_json(ours, deliberate, value)


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
    expected = outcome(fastapi_typed, spec.annotation, returned.value, **options)
    ours = outcome(dumps, returned.value, response_model=spec.annotation, **options)
    note(f"FastAPI: {expected!r}")
    note(f"dumps: {ours!r}")
    if isinstance(expected, bytes):
        event(f"typed: returned {returned.how}, FastAPI encodes")
        assert isinstance(ours, bytes), ours
        assert_same_json(ours, expected, returned.value)
        return
    event(f"typed: returned {returned.how}, FastAPI raises {type(expected).__name__}")
    if contains_numpy(returned.value) and isinstance(ours, bytes):
        event("typed: deliberate difference (numpy)")
        plain = fastapi_typed(spec.annotation, denumpy(returned.value), **options)
        assert_same_json(ours, plain, returned.value)
        return
    assert isinstance(ours, Exception), "FastAPI's typed path fails here: dumps must raise"
