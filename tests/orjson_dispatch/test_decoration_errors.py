"""Misuse of the decorator fails at decoration time, naming the function or the argument."""

from collections.abc import AsyncIterator, Iterator
from typing import Any

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


@pytest.mark.parametrize(
    "function",
    [a_generator, an_async_generator, AnEndpointClass],
    ids=["generator", "async-generator", "class"],
)
def test_generators_and_classes_are_refused_naming_the_function(function: Any) -> None:
    with pytest.raises(TypeError, match=function.__name__):
        dispatch(function)


def test_unknown_option_is_refused_naming_the_function() -> None:
    def endpoint_with_typo() -> dict[str, int]:
        return {}

    with pytest.raises(
        TypeError, match=r"statuscode.*endpoint_with_typo|endpoint_with_typo.*statuscode"
    ):
        dispatch(statuscode=201)(endpoint_with_typo)  # type: ignore[call-overload]
