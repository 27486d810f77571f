"""Misuse fails at decoration time, naming the function or the argument, or warns where it is."""

import inspect
import logging
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import orjson
import pytest
from fastapi import APIRouter, FastAPI, Request
from orjson_dispatch._route import DispatchRoute

from orjson_dispatch import JSONLines, ServerSentEvents, dispatch, dispatched_routes
from tests.orjson_dispatch.apps import get_all


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
    ("options", "named"),
    [
        ({"status_code": 999}, "status_code"),
        ({"status_code": "201"}, "status_code"),
        ({"status_code": True}, "status_code"),
        ({"headers": {"x-a": 1}}, "headers"),
        ({"headers": [("x-a", "1")]}, "headers"),
        ({"media_type": b"text/plain"}, "media_type"),
        ({"by_alias": "yes"}, "by_alias"),
        ({"exclude_none": 1}, "exclude_none"),
    ],
    ids=repr,
)
def test_an_option_of_a_wrong_type_is_refused_naming_it_and_the_function(
    options: dict[str, Any], named: str
) -> None:
    def endpoint_with_bad_option() -> dict[str, int]:
        return {}

    with pytest.raises(TypeError, match=rf"^dispatch\({named}=\.\.\.\) for .*endpoint_with_bad"):
        dispatch(**options)(endpoint_with_bad_option)


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


@pytest.mark.parametrize(
    "option", [orjson.OPT_NAIVE_UTC, orjson.OPT_UTC_Z, orjson.OPT_NON_STR_KEYS, 1 << 20]
)
def test_content_changing_option_is_refused_by_the_decorator(option: int) -> None:
    def endpoint_with_option() -> dict[str, int]:
        return {}

    with pytest.raises(TypeError, match="option"):
        dispatch(option=option)(endpoint_with_option)


def test_unresolvable_return_annotation_fails_at_decoration() -> None:
    def missing_return(request: Request) -> Any:
        return {"a": 1}

    missing_return.__annotations__["return"] = "Missing"
    with pytest.raises(TypeError, match="missing_return"):
        dispatch(missing_return)


@pytest.mark.parametrize("name", ["orjson_dispatch_request", "orjson_dispatch_response"])
def test_the_injected_parameters_names_are_refused_naming_the_function(name: str) -> None:
    def endpoint_taking_ours(**parameters: Any) -> dict[str, int]:
        return {}

    endpoint_taking_ours.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None)]
    )
    with pytest.raises(TypeError, match=rf"reserves the parameter name '{name}'.*endpoint_taking"):
        dispatch(endpoint_taking_ours)


def test_an_endpoint_taking_keyword_arguments_is_answered_as_fastapi_answers_it() -> None:
    """The injected parameters go before ``**extra``: a signature ends with it."""

    def with_extra(x: int = 1, **extra: Any) -> dict[str, Any]:
        return {"x": x, "extra": extra}

    app = FastAPI()
    app.get("/fastapi")(with_extra)
    app.get("/dispatch")(dispatch(with_extra))
    assert list(inspect.signature(dispatch(with_extra)).parameters)[-1] == "extra"
    answers = get_all(app, "/fastapi?x=2&extra=a", "/dispatch?x=2&extra=a", "/fastapi", "/dispatch")
    assert [(a.status_code, a.json()) for a in answers[:2]] == [
        (200, {"x": 2, "extra": {"extra": "a"}})
    ] * 2
    assert answers[2].status_code == answers[3].status_code == 422
    assert answers[2].json() == answers[3].json()


def test_a_return_type_declaring_two_streams_is_refused_when_the_route_is_made() -> None:
    async def either() -> JSONLines[int] | ServerSentEvents[int]:
        return JSONLines(an_async_generator())

    with pytest.raises(TypeError, match=r"declares more than one stream"):
        APIRouter(route_class=DispatchRoute).add_api_route("/either", either)


# --- misuse that cannot fail, warned where it happens ------------------------------------------


def test_dispatch_above_the_route_decorator_warns_naming_the_function_and_the_fix() -> None:
    app = FastAPI()
    with pytest.warns(UserWarning, match=r"wraps .*routed.*\(/routed\).*below the route decorator"):

        @dispatch
        @app.get("/routed")
        async def routed() -> dict[str, int]:
            return {}

    assert dispatched_routes(app)["GET /routed"] is False


def test_a_status_beside_the_routes_own_is_warned_and_the_routes_is_sent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The route's status code is the one its OpenAPI document shows."""
    app = FastAPI()

    @app.get("/created", status_code=202)
    @dispatch(status_code=201)
    async def created() -> dict[str, int]:
        return {}

    with caplog.at_level(logging.WARNING, logger="orjson_dispatch"):
        answers = get_all(app, "/created", "/created")
    assert [answer.status_code for answer in answers] == [202, 202]
    assert [record.getMessage() for record in caplog.records] == [
        f"{created.__module__}.{created.__qualname__} has status_code=201 in dispatch() and 202 "
        "on its route; the route's status code, which its OpenAPI document shows, is used"
    ]


def test_dispatch_below_the_route_decorator_does_not_warn() -> None:
    app = FastAPI()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)

        @app.get("/routed")
        @dispatch
        async def routed() -> dict[str, int]:
            return {}

    assert dispatched_routes(app)["GET /routed"] is True


def test_route_class_override_beside_plain_routes_does_not_warn() -> None:
    async def endpoint() -> dict[str, int]:
        return {}

    router = APIRouter()
    router.add_api_route("/plain", endpoint)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        router.add_api_route("/ours", endpoint, route_class_override=DispatchRoute)
    assert dispatched_routes(router) == {"GET /plain": False, "GET /ours": True}
