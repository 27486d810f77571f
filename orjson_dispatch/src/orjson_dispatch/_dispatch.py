"""The `dispatch` decorator."""

from __future__ import annotations

import builtins
import functools
import inspect
import types
from collections.abc import Callable, Mapping
from typing import Any, NoReturn, ParamSpec, TypeVar, overload

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Router, get_name

from orjson_dispatch import _fastapi
from orjson_dispatch._diagnostics import logger, user_frame, warn
from orjson_dispatch._encoders import UNTYPED
from orjson_dispatch._options import check_options
from orjson_dispatch._responder import Responder
from orjson_dispatch._serving import (
    MARKER,
    REQUEST_PARAMETER,
    RESPONSE_PARAMETER,
    Wrapped,
    bare,
    check_stream_options,
    generator_function,
    returns_response,
    wrapped_endpoint,
)

P = ParamSpec("P")
R = TypeVar("R")

__all__ = ["dispatch"]


@overload
def dispatch(endpoint: Callable[P, R], /) -> Callable[P, R]: ...


@overload
def dispatch(
    *,
    status_code: int | None = None,
    headers: Mapping[str, str] | None = None,
    media_type: str | None = None,
    option: int | None = None,
    by_alias: bool | None = None,
    exclude_unset: bool | None = None,
    exclude_defaults: bool | None = None,
    exclude_none: bool | None = None,
    **unknown: NoReturn,
) -> Callable[[Callable[P, R]], Callable[P, R]]: ...


def dispatch(endpoint: Any = None, /, **options: Any) -> Any:
    """Answer an endpoint's returned value with a finished orjson Response.

    Use it bare or with options, under the route decorator::

        @app.post("/v1/responses")
        @dispatch
        async def responses(body: RequestBody) -> ResponseModel: ...

    The endpoint keeps its name, docstring, signature and annotations, so FastAPI injects its
    dependencies and documents it exactly as before; FastAPI awaits the wrapper exactly when it
    would await the endpoint, and runs it (with its serialization) in the threadpool otherwise.
    Applied twice, `dispatch` is applied once, with the outer options over the inner ones.

    What the endpoint returns is answered as FastAPI would answer it, only faster:

    - A Response of any kind is returned untouched.
    - With a declared type (the return annotation, or the route's `response_model=`), the value
      is validated and filtered to that type (a failure raises FastAPI's
      `ResponseValidationError`, a 500, naming the endpoint) and serialized with the route's
      `response_model_*` settings, as FastAPI's typed path does.
    - Without one, the value is serialized as FastAPI's `jsonable_encoder` path does.
    - The route's `status_code=` and response class in force (its own, its router's or the
      app's `default_response_class`), and the status, headers and cookies set on an injected
      `Response` parameter, are applied; FastAPI attaches injected `BackgroundTasks`; 1xx, 204,
      205 and 304 responses have an empty body.
    - A route whose response class renders content in a way of its own (not JSON) is left to
      FastAPI, with a warning when the route is first served.
    - A generator endpoint (JSON Lines, Server-Sent Events) is streamed with orjson by a
      `DispatchRoute`, which applies the options to its items; any other route streams it as
      FastAPI does, with a warning when it is first called.

    In a Starlette app, wrap the endpoint (`Route("/x", dispatch(endpoint))`): the return
    annotation is the declared type, and the options give the status, headers and media type.

    Args:
        endpoint: The endpoint function (when used bare).
        **options: `status_code` (used when the route sets none), `headers` (added to every
            response), `media_type` (default `application/json`), `option` (orjson layout
            options: `OPT_INDENT_2`, `OPT_SORT_KEYS`, `OPT_APPEND_NEWLINE`), and `by_alias`,
            `exclude_unset`, `exclude_defaults`, `exclude_none`, which override the route's
            `response_model_*` settings.

    Returns:
        The wrapped endpoint, or a decorator when called with options only.

    Raises:
        TypeError: At decoration time, naming the function: `endpoint` is not a function (a
            class, a non-callable), its return annotation cannot be resolved, an option is
            unknown or has a wrong type, `option` would change the JSON, or a generator
            endpoint is given `status_code`, `headers`, `media_type` or a layout option that
            would split an event over lines.
    """
    if endpoint is None:
        return functools.partial(_decorate, given=options)
    if options:  # pragma: no cover - the signature makes this unreachable
        msg = "dispatch() takes either an endpoint or keyword options"
        raise TypeError(msg)
    return _decorate(endpoint, given={})


def _warn_if_routed(endpoint: Any, name: str) -> None:
    """Warn when `endpoint` is being decorated and a router in the caller's scope routes to it.

    `@dispatch` above `@app.get(...)` wraps a function the route decorator has registered
    already: the route serves it without dispatch, and nothing else would say so.
    """
    route = _route_in_scope(endpoint)
    if route is not None:
        warn(
            f"dispatch() wraps {name}, which a route ({route.path}) already serves as it is, "
            "without dispatch: apply @dispatch below the route decorator, next to the function"
        )


def _route_in_scope(endpoint: Any) -> Any:
    """Return a route of a router in the user's scope (`user_frame`) serving `endpoint`, or None.

    A function that a name in the scope holds already (registered plain at one path, wrapped
    for another) is not being decorated: None.
    """
    frame = user_frame()
    scope = {**frame.f_globals, **frame.f_locals}
    if any(value is endpoint for value in scope.values()):
        return None
    owners = {id(v): v for v in scope.values() if isinstance(v, (Router, Starlette))}
    for owner in owners.values():
        for route in _fastapi.served_routes(owner.routes):
            if getattr(route, "endpoint", None) is endpoint:
                return route
    return None


def _describe(endpoint: Any) -> str:
    module = getattr(endpoint, "__module__", None)
    qualname = getattr(endpoint, "__qualname__", None) or getattr(endpoint, "__name__", None)
    if qualname is None:
        return repr(endpoint)
    return f"{module}.{qualname}" if module else str(qualname)


def _decorate(endpoint: Any, given: dict[str, Any]) -> Any:
    earlier = wrapped_endpoint(endpoint)
    if earlier is not None:
        return _decorate(earlier.endpoint, {**earlier.options, **given})
    name = _describe(endpoint)
    _warn_if_routed(endpoint, name)
    options = check_options(given, name)
    generator = _check_endpoint(endpoint, name)
    signature = _fastapi.signature(endpoint)
    marker = Wrapped(endpoint, given, generator=generator is not None)
    if generator is not None:
        check_stream_options(options, name)
        return _dressed(_items_wrapper(endpoint, generator, name), endpoint, signature, marker)
    declared = _declared_type(signature, name)
    request_name, response_name = _injected_parameters(signature, name)
    responder: Responder

    def injected(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
        request = (
            kwargs.pop(REQUEST_PARAMETER, None)
            if request_name is None
            else kwargs.get(request_name)
        )
        sub_response = (
            kwargs.pop(RESPONSE_PARAMETER, None)
            if response_name is None
            else kwargs.get(response_name)
        )
        if request is None and args and isinstance(args[0], Request):
            request = args[0]  # Starlette calls endpoint(request)
        return request, sub_response

    async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
        request, sub_response = injected(args, kwargs)
        return responder.respond(await endpoint(*args, **kwargs), request, sub_response)

    def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
        request, sub_response = injected(args, kwargs)
        return responder.respond(endpoint(*args, **kwargs), request, sub_response)

    wrapper: Any = async_wrapper if _fastapi.is_async(endpoint) else sync_wrapper
    wrapped = _dressed(
        wrapper,
        endpoint,
        _with_injected(signature, request_name is None, response_name is None),
        marker,
    )
    responder = Responder(wrapped, options, name, declared)
    return wrapped


def _dressed(wrapper: Any, endpoint: Any, signature: inspect.Signature, marker: Wrapped) -> Any:
    """Give `wrapper` the endpoint's module, name, documentation and `signature`."""
    wrapped = _in_module_of(wrapper, endpoint)
    functools.update_wrapper(wrapped, endpoint)
    # FastAPI and Starlette name a route after its endpoint (a partial or a callable object has
    # no __name__ of its own): its summary and operationId stay the same.
    wrapped.__name__ = getattr(endpoint, "__name__", get_name(endpoint))
    wrapped.__qualname__ = getattr(endpoint, "__qualname__", wrapped.__name__)
    # FastAPI reads the parameters to inject from the signature (inspect.signature honours
    # __signature__), its annotations already evaluated in the endpoint's own namespace.
    wrapped.__signature__ = signature  # type: ignore[attr-defined]
    setattr(wrapped, MARKER, marker)
    _fastapi.seed_endpoint_context(wrapped, endpoint)
    return wrapped


def _items_wrapper(endpoint: Any, generator: Callable[..., Any], name: str) -> Any:
    """Return a generator function yielding what the generator endpoint yields.

    `DispatchRoute` calls the endpoint itself and streams its items with orjson; any other
    route streams through this wrapper as it would stream the endpoint, with a warning.
    """
    warned = False

    def warn() -> None:
        nonlocal warned
        if not warned:
            warned = True
            logger.warning(
                "the generator endpoint %s is streamed by FastAPI itself; serve "
                "it with orjson_dispatch.DispatchRoute to stream it with orjson",
                name,
            )

    async def async_items(*args: Any, **kwargs: Any) -> Any:
        warn()
        items = endpoint(*args, **kwargs)
        try:
            async for item in items:
                yield item
        finally:
            await items.aclose()

    def sync_items(*args: Any, **kwargs: Any) -> Any:
        warn()
        yield from endpoint(*args, **kwargs)

    return async_items if inspect.isasyncgenfunction(generator) else sync_items


def _in_module_of(wrapper: types.FunctionType, endpoint: Any) -> types.FunctionType:
    """Return `wrapper` with the endpoint's module globals as its own.

    FastAPI reads `endpoint.__globals__["__file__"]` to say where an endpoint is defined
    (duplicate operation ids); the wrapper must name the user's file, not this one. Its code
    reads only its closure, never its globals, so it runs the same in any module.
    """
    namespace = getattr(endpoint, "__globals__", None)
    if not isinstance(namespace, dict):  # a partial or a callable object: no file either
        namespace = {"__builtins__": builtins}
    return types.FunctionType(
        wrapper.__code__, namespace, wrapper.__name__, wrapper.__defaults__, wrapper.__closure__
    )


def _check_endpoint(endpoint: Any, name: str) -> Callable[..., Any] | None:
    """Refuse what cannot be an endpoint; return the generator function it is, if any."""
    if inspect.isclass(endpoint):
        msg = f"dispatch() takes an endpoint function, not the class {name}"
        raise TypeError(msg)
    if not callable(endpoint):
        msg = f"dispatch() takes an endpoint function, not {name}"
        raise TypeError(msg)
    return generator_function(endpoint)


def _injected_parameters(signature: inspect.Signature, name: str) -> tuple[str | None, str | None]:
    """Return the names of the endpoint's own Request and Response parameters, if any."""
    request_name = response_name = None
    for parameter in signature.parameters.values():
        if parameter.name in (REQUEST_PARAMETER, RESPONSE_PARAMETER):
            msg = f"dispatch() reserves the parameter name {parameter.name!r}, used by {name}"
            raise TypeError(msg)
        annotation = bare(parameter.annotation)
        if not isinstance(annotation, type):
            continue
        # FastAPI injects a parameter annotated with a subclass of these (lenient_issubclass).
        if request_name is None and issubclass(annotation, Request):
            request_name = parameter.name
        elif response_name is None and issubclass(annotation, Response):
            response_name = parameter.name
    return request_name, response_name


def _with_injected(
    signature: inspect.Signature, add_request: bool, add_response: bool
) -> inspect.Signature:
    parameters = list(signature.parameters.values())
    extra = []
    if add_request:
        extra.append(
            inspect.Parameter(REQUEST_PARAMETER, inspect.Parameter.KEYWORD_ONLY, annotation=Request)
        )
    if add_response:
        extra.append(
            inspect.Parameter(
                RESPONSE_PARAMETER, inspect.Parameter.KEYWORD_ONLY, annotation=Response
            )
        )
    if parameters and parameters[-1].kind is inspect.Parameter.VAR_KEYWORD:
        parameters[-1:-1] = extra
    else:
        parameters.extend(extra)
    return signature.replace(parameters=parameters)


def _declared_type(signature: inspect.Signature, name: str) -> Any:
    """Return the endpoint's return annotation as the declared type, or `UNTYPED`.

    Raises:
        TypeError: The return annotation names something that cannot be resolved; answering
            without the declared type would skip its filtering.
    """
    annotation = signature.return_annotation
    if annotation is inspect.Signature.empty or annotation is None or annotation is type(None):
        return UNTYPED
    if isinstance(annotation, str):
        msg = f"dispatch(): cannot resolve the return annotation {annotation!r} of {name}"
        raise TypeError(msg)
    return UNTYPED if returns_response(annotation) else annotation
