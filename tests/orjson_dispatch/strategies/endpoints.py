"""Endpoints of every shape FastAPI accepts, each returning a given value.

A function, a ``functools.partial`` of one, and an object with a ``__call__`` method, each sync or
async. Their return annotation names the module global ``Declared``; ``make`` sets it before it
defines a fresh endpoint. With ``postponed=True`` every annotation of the endpoint's function is
left as the string of its source, exactly what a module under ``from __future__ import
annotations`` (PEP 563) holds: FastAPI (and ``dispatch``) must then resolve ``"Declared"`` against
this module's globals, from a partial or a callable object as from a function. (This module has
no such import, so that both kinds exist side by side.)
"""

import functools
import types
from collections.abc import Callable
from typing import Any

from tests.orjson_dispatch.apps import UNTYPED

#: The shapes ``make`` builds.
KINDS = ("function", "partial", "object")

#: What the endpoints defined next declare to return (set by ``make``).
Declared: Any = None


def _function(value: Any, is_async: bool) -> Callable[..., Any]:
    if is_async:

        async def endpoint() -> Declared:
            return value

        return endpoint

    def sync_endpoint() -> Declared:
        return value

    return sync_endpoint


def _partial(value: Any, is_async: bool) -> Callable[..., Any]:
    if is_async:

        async def returning(held: Any) -> Declared:
            return held

        return functools.partial(returning, value)

    def sync_returning(held: Any) -> Declared:
        return held

    return functools.partial(sync_returning, value)


def _object(value: Any, is_async: bool) -> Callable[..., Any]:
    if is_async:

        class AsyncEndpoint:
            async def __call__(self) -> Declared:
                return value

        return AsyncEndpoint()

    class SyncEndpoint:
        def __call__(self) -> Declared:
            return value

    return SyncEndpoint()


def _function_of(endpoint: Any) -> Any:
    """The function whose annotations FastAPI reads for ``endpoint``."""
    if isinstance(endpoint, functools.partial):
        return endpoint.func
    if isinstance(endpoint, types.FunctionType):
        return endpoint
    return type(endpoint).__call__


_FACTORIES = {"function": _function, "partial": _partial, "object": _object}


def make(
    value: Any, annotation: Any, *, kind: str, is_async: bool, postponed: bool
) -> Callable[..., Any]:
    """A fresh endpoint of shape ``kind`` returning ``value``, declared ``-> annotation``.

    Args:
        value: What the endpoint returns.
        annotation: The declared return type; ``UNTYPED`` for no return annotation.
        kind: One of ``KINDS``.
        is_async: ``async def`` (or ``async def __call__``).
        postponed: The annotations are strings, as under ``from __future__ import annotations``.
    """
    globals()["Declared"] = annotation
    endpoint = _FACTORIES[kind](value, is_async)
    function = _function_of(endpoint)
    if annotation is UNTYPED:
        del function.__annotations__["return"]
    elif postponed:
        # What PEP 563 stores: each annotation's source text.
        function.__annotations__.update(
            {name: "Declared" if name == "return" else "Any" for name in function.__annotations__}
        )
    return endpoint
