"""Model values FastAPI writes in ways a per-class encoder could miss, compared with FastAPI.

A field assigned an iterator after validation, a union whose members differ only by order, and
an endpoint (under ``from __future__ import annotations``) returning a class local to a function.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from pydantic import BaseModel, PydanticUndefinedAnnotation

from orjson_dispatch import DispatchRoute, dumps
from tests.orjson_dispatch.apps import Twin, get_all
from tests.orjson_dispatch.compare import assert_same_answer
from tests.orjson_dispatch.oracles import fastapi_typed, fastapi_untyped


class Leaf(BaseModel):
    x: int


class Branch(BaseModel):
    leaves: list[Leaf]
    by_name: dict[str, Leaf] = {}
    maybe: list[Leaf] | None = None


def _assigned_iterators() -> Branch:
    branch = Branch(leaves=[])
    branch.leaves = (Leaf(x=i) for i in range(3))  # type: ignore[assignment]
    branch.maybe = iter([])  # type: ignore[assignment]  # an empty iterator is written []
    return branch


@pytest.mark.filterwarnings("ignore::UserWarning")  # pydantic warns of the unexpected type
def test_list_field_assigned_an_iterator_writes_its_items() -> None:
    expected = fastapi_untyped(_assigned_iterators())
    assert b'"x":2' in expected
    assert dumps(_assigned_iterators()) == expected


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("twin", [None, DispatchRoute], indirect=True)
def test_untyped_endpoint_writes_the_items_of_an_assigned_iterator(twin: Twin) -> None:
    twin.add("GET", "/i", _assigned_iterators)
    fastapi, ours = twin.both("GET", "/i")
    assert b'"x":2' in fastapi.content
    assert_same_answer(ours, fastapi)


class First(BaseModel):
    v: int


class Second(BaseModel):
    v: int
    w: int = 0


@pytest.mark.parametrize("annotation", [First | Second, Second | First])
def test_union_members_in_another_order_are_another_type(annotation: Any) -> None:
    # pydantic's smart union breaks the tie by order: First writes {"v":1}, Second adds "w".
    dumps({"v": 1}, response_model=First | Second)
    dumps({"v": 1}, response_model=Second | First)
    assert dumps({"v": 1}, response_model=annotation) == fastapi_typed(annotation, {"v": 1})


# --- a class local to a function, under postponed annotations -----------------------------------


def _local_app(route_class: type[APIRoute]) -> FastAPI:
    class Local(BaseModel):
        n: int

    router = APIRouter(route_class=route_class)

    @router.get("/local")
    def local() -> Local:  # the annotation is the string "Local": FastAPI cannot resolve it
        return Local(n=1)

    @router.get("/other")
    def other() -> dict[str, int]:
        return {"a": 1}

    app = FastAPI()
    app.include_router(router)
    return app


def _built(route_class: type[APIRoute]) -> FastAPI | PydanticUndefinedAnnotation:
    try:
        return _local_app(route_class)
    except PydanticUndefinedAnnotation as error:
        return error


def test_unresolvable_return_class_fails_only_its_own_route() -> None:
    # (`@dispatch` refuses such an endpoint when it decorates it: test_decoration_errors.)
    fastapi_app = _built(APIRoute)
    if isinstance(fastapi_app, PydanticUndefinedAnnotation):
        # Before pydantic 2.10, the TypeAdapter of FastAPI's response field raises for the
        # unresolvable annotation: the route's decorator fails, under DispatchRoute the same.
        failed = _built(DispatchRoute)
        assert isinstance(failed, PydanticUndefinedAnnotation)
        assert str(failed) == str(fastapi_app)
        return
    expected = get_all(fastapi_app, "/other", "/local")
    assert [r.status_code for r in expected] == [200, 500]
    ours = get_all(_local_app(DispatchRoute), "/other", "/local")
    for mine, theirs in zip(ours, expected, strict=True):
        assert_same_answer(mine, theirs)
