"""``orjson_dispatch.dumps`` and the orjson options: layout options change only the layout, options
that change content are refused (by ``@dispatch(option=...)`` at decoration time, see
``test_decoration_errors.py``), a value it cannot write raises ``TypeError``.

What ``dumps`` writes for each value is tested against FastAPI's encoders in
``test_untyped_encoding.py`` and ``test_typed_encoding.py``.
"""

import json
from typing import Any

import orjson
import pytest
from fastapi import FastAPI
from hypothesis import given, settings
from hypothesis import strategies as st

from orjson_dispatch import dispatch, dumps
from tests.orjson_dispatch.apps import Ask
from tests.orjson_dispatch.compare import json_pairs, outcome
from tests.orjson_dispatch.oracles import fastapi_untyped
from tests.orjson_dispatch.strategies import examples
from tests.orjson_dispatch.strategies.untyped import untyped_values


@pytest.mark.parametrize(
    "option", [orjson.OPT_INDENT_2, orjson.OPT_SORT_KEYS, orjson.OPT_APPEND_NEWLINE]
)
def test_layout_options_are_accepted_by_the_decorator(option: int, ask: Ask) -> None:
    @dispatch(option=option)
    async def endpoint() -> dict[str, int]:
        return {"b": 1, "a": 2}

    app = FastAPI()
    app.get("/x")(endpoint)
    answer = ask(app, "GET", "/x")
    assert answer.json() == {"b": 1, "a": 2}
    assert answer.content == orjson.dumps({"b": 1, "a": 2}, option=option)


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
def test_layout_options_change_only_the_layout_of_dumps(value: Any, option: int) -> None:
    plain = outcome(dumps, value)
    laid_out = outcome(dumps, value, option=option)
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
def test_content_changing_options_are_refused_by_dumps(option: int) -> None:
    with pytest.raises(TypeError, match="option"):
        dumps({"a": 1}, option=option)


def test_dumps_of_a_cycle_raises_type_error() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    with pytest.raises(TypeError):
        dumps(cyclic)


@pytest.mark.parametrize(
    "options",
    [{"include": {"a", "c"}}, {"exclude": {"b"}}, {"include": {"a", "b"}, "exclude": {"a"}}],
    ids=["include a, c", "exclude b", "include a, b and exclude a"],  # a set's repr varies
)
def test_include_and_exclude_filter_an_untyped_dicts_own_keys(options: dict[str, Any]) -> None:
    """As ``jsonable_encoder(value, include=..., exclude=...)``: the dict's keys, not deeper."""
    value = {"a": 1, "b": {"a": 2, "b": 3}, "c": [{"b": 4}]}
    assert dumps(value, **options) == fastapi_untyped(value, **options)
