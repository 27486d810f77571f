"""Misuse of the decorator fails at decoration time, naming the function or the argument."""

import inspect
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import orjson
import pytest

from orjson_dispatch import dispatch


def a_generator() -> Iterator[int]:
    yield 1


async def an_async_generator() -> AsyncIterator[int]:
    yield 1


class AnEndpointClass:
    """Classes are callables, but not endpoint functions."""

    def __call__(self) -> dict[str, int]:
        return {}


def test_non_callable_is_refused() -> None:
    with pytest.raises(TypeError, match="42"):
        dispatch(42)  # type: ignore[call-overload]


def test_classes_are_refused_naming_the_function() -> None:
    with pytest.raises(TypeError, match=AnEndpointClass.__name__):
        dispatch(AnEndpointClass)


@pytest.mark.parametrize(
    ("function", "kind"),
    [(a_generator, inspect.isgeneratorfunction), (an_async_generator, inspect.isasyncgenfunction)],
    ids=["generator", "async-generator"],
)
def test_generator_endpoints_stay_generator_functions(
    function: Any, kind: Callable[[Any], bool]
) -> None:
    """FastAPI streams what a generator endpoint yields: the wrapper must be one too."""
    wrapped = dispatch(function)
    assert kind(wrapped)
    assert wrapped.__name__ == function.__name__
    assert inspect.signature(wrapped) == inspect.signature(function)


def test_unknown_option_is_refused_naming_the_function() -> None:
    def endpoint_with_typo() -> dict[str, int]:
        return {}

    with pytest.raises(
        TypeError, match=r"statuscode.*endpoint_with_typo|endpoint_with_typo.*statuscode"
    ):
        dispatch(statuscode=201)(endpoint_with_typo)  # type: ignore[call-overload]


@pytest.mark.parametrize(
    "options",
    [
        {"status_code": 201},
        {"headers": {"x-a": "1"}},
        {"media_type": "text/plain"},
        {"option": orjson.OPT_INDENT_2},
        {"option": orjson.OPT_APPEND_NEWLINE},
    ],
    ids=["status_code", "headers", "media_type", "indent", "newline"],
)
def test_stream_options_a_generator_cannot_honour_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(TypeError, match="an_async_generator"):
        dispatch(**options)(an_async_generator)


def test_item_options_are_accepted_on_a_generator() -> None:
    wrapped = dispatch(by_alias=False, exclude_none=True, option=orjson.OPT_SORT_KEYS)(
        an_async_generator
    )
    assert inspect.isasyncgenfunction(wrapped)
