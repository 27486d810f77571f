"""The `dispatch` decorator."""

from __future__ import annotations

import functools
import inspect
import logging
import threading
import typing
from collections.abc import Callable, Mapping
from typing import Any, NoReturn, ParamSpec, TypeVar, overload

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from orjson_dispatch._options import check_format_option
from orjson_dispatch._responder import (
    DispatchOptions,
    ResponsePlan,
    plan_for_route,
    standalone_plan,
)

P = ParamSpec("P")
R = TypeVar("R")

__all__ = ["dispatch"]

logger = logging.getLogger("orjson_dispatch")

# Parameters added to the endpoint's signature when it declares none of these types itself, so
# that FastAPI injects the request (to find the route and its settings) and the response whose
# status, headers and cookies dependencies set. Neither appears in the OpenAPI document.
_REQUEST_PARAMETER = "orjson_dispatch_request"
_RESPONSE_PARAMETER = "orjson_dispatch_response"
_OPTIONS = frozenset(
    {
        "status_code",
        "headers",
        "media_type",
        "option",
        "by_alias",
        "exclude_unset",
        "exclude_defaults",
        "exclude_none",
    }
)


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
    dependencies and documents it exactly as before; an `async def` endpoint stays a coroutine
    function and a plain `def` endpoint stays plain, so FastAPI still runs it (and its
    serialization) in the threadpool.

    What the endpoint returns is answered as FastAPI would answer it, only faster:

    - A Response of any kind is returned untouched.
    - With a declared type (the return annotation, or the route's `response_model=`), the value
      is validated and filtered to that type (a failure raises FastAPI's
      `ResponseValidationError`, a 500) and serialized with the route's `response_model_*`
      settings, as FastAPI's typed path does.
    - Without one, the value is serialized as FastAPI's `jsonable_encoder` path does.
    - The route's `status_code=`, and the status, headers and cookies set on an injected
      `Response` parameter, are applied; FastAPI attaches injected `BackgroundTasks`; 1xx, 204,
      205 and 304 responses have an empty body.
    - A route whose `response_class` renders content in a way of its own (not JSON) is left to
      FastAPI, with a warning when the route is first served.

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
            class, a generator or async generator function, a non-callable), an option is
            unknown or has a wrong type, or `option` would change the JSON.
    """
    if endpoint is None:
        return functools.partial(_decorate, options=options)
    if options:  # pragma: no cover - the signature makes this unreachable
        msg = "dispatch() takes either an endpoint or keyword options"
        raise TypeError(msg)
    return _decorate(endpoint, options={})


def _describe(endpoint: Any) -> str:
    module = getattr(endpoint, "__module__", None)
    qualname = getattr(endpoint, "__qualname__", None) or getattr(endpoint, "__name__", None)
    if qualname is None:
        return repr(endpoint)
    return f"{module}.{qualname}" if module else str(qualname)


def _decorate(endpoint: Any, options: dict[str, Any]) -> Any:
    name = _describe(endpoint)
    checked = _check_options(options, name)
    is_async = _check_endpoint(endpoint, name)
    signature = inspect.signature(endpoint)
    request_name, response_name = _injected_parameters(endpoint, signature)
    responder = _Responder(endpoint, checked, name)

    def finish(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
        request = (
            kwargs.pop(_REQUEST_PARAMETER, None)
            if request_name is None
            else kwargs.get(request_name)
        )
        sub_response = (
            kwargs.pop(_RESPONSE_PARAMETER, None)
            if response_name is None
            else kwargs.get(response_name)
        )
        if request is None and args and isinstance(args[0], Request):
            request = args[0]  # Starlette calls endpoint(request)
        return request, sub_response

    wrapper: object
    if is_async:

        @functools.wraps(endpoint)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            request, sub_response = finish(args, kwargs)
            content = await endpoint(*args, **kwargs)
            return responder.respond(content, request, sub_response)

        wrapper = async_wrapper
    else:

        @functools.wraps(endpoint)
        def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
            request, sub_response = finish(args, kwargs)
            content = endpoint(*args, **kwargs)
            return responder.respond(content, request, sub_response)

        wrapper = sync_wrapper
    # FastAPI reads the parameters to inject from the signature (inspect.signature honours
    # __signature__); it reads string annotations' globals from the unwrapped endpoint.
    setattr(  # noqa: B010 - functions accept any attribute; mypy does not know this one
        wrapper,
        "__signature__",
        _with_injected(signature, request_name is None, response_name is None),
    )
    return wrapper


def _check_options(options: dict[str, Any], name: str) -> DispatchOptions:
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        msg = (
            f"dispatch() got unknown option(s) {', '.join(unknown)} for {name}; "
            f"the options are {', '.join(sorted(_OPTIONS))}"
        )
        raise TypeError(msg)
    status_code = options.get("status_code")
    if status_code is not None and (
        not isinstance(status_code, int)
        or isinstance(status_code, bool)
        or not 100 <= status_code <= 599
    ):
        msg = (
            f"dispatch(status_code=...) for {name} must be an HTTP status (100-599), "
            f"not {status_code!r}"
        )
        raise TypeError(msg)
    headers = options.get("headers")
    if headers is not None and not (
        isinstance(headers, Mapping)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items())
    ):
        msg = f"dispatch(headers=...) for {name} must map str to str, not {headers!r}"
        raise TypeError(msg)
    media_type = options.get("media_type")
    if media_type is not None and not isinstance(media_type, str):
        msg = f"dispatch(media_type=...) for {name} must be a str, not {media_type!r}"
        raise TypeError(msg)
    flags = {}
    for flag in ("by_alias", "exclude_unset", "exclude_defaults", "exclude_none"):
        value = options.get(flag)
        if value is not None and not isinstance(value, bool):
            msg = f"dispatch({flag}=...) for {name} must be a bool, not {value!r}"
            raise TypeError(msg)
        flags[flag] = value
    return DispatchOptions(
        status_code=status_code,
        headers=dict(headers) if headers is not None else None,
        media_type=media_type,
        layout=check_format_option(options.get("option"), f"dispatch() for {name}"),
        **flags,
    )


def _check_endpoint(endpoint: Any, name: str) -> bool:
    """Refuse what cannot be an endpoint returning data; return whether it is async."""
    if inspect.isclass(endpoint):
        msg = f"dispatch() takes an endpoint function, not the class {name}"
        raise TypeError(msg)
    if not callable(endpoint):
        msg = f"dispatch() takes an endpoint function, not {name}"
        raise TypeError(msg)
    function = inspect.unwrap(endpoint)
    while isinstance(function, functools.partial):
        function = inspect.unwrap(function.func)
    if inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function):
        msg = (
            f"dispatch() cannot wrap the generator function {name}: it answers with one finished "
            "body; stream with a StreamingResponse instead"
        )
        raise TypeError(msg)
    if not (inspect.isfunction(function) or inspect.ismethod(function)):
        function = getattr(function, "__call__", function)  # noqa: B004 - a callable object
    return inspect.iscoroutinefunction(function)


def _injected_parameters(
    endpoint: Any, signature: inspect.Signature
) -> tuple[str | None, str | None]:
    """Return the names of the endpoint's own Request and Response parameters, if any."""
    hints = _type_hints(endpoint)
    request_name = response_name = None
    for parameter in signature.parameters.values():
        if parameter.name in (_REQUEST_PARAMETER, _RESPONSE_PARAMETER):
            msg = (
                f"dispatch() reserves the parameter name {parameter.name!r}, "
                f"used by {_describe(endpoint)}"
            )
            raise TypeError(msg)
        annotation = hints.get(parameter.name, parameter.annotation)
        while typing.get_origin(annotation) is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        if not isinstance(annotation, type):
            continue
        # FastAPI injects a parameter annotated with a subclass of these (lenient_issubclass).
        if request_name is None and issubclass(annotation, Request):
            request_name = parameter.name
        elif response_name is None and issubclass(annotation, Response):
            response_name = parameter.name
    return request_name, response_name


def _type_hints(endpoint: Any) -> dict[str, Any]:
    function = inspect.unwrap(endpoint)
    try:
        return typing.get_type_hints(function, include_extras=True)
    except Exception:
        return {}


def _with_injected(
    signature: inspect.Signature, add_request: bool, add_response: bool
) -> inspect.Signature:
    parameters = list(signature.parameters.values())
    extra = []
    if add_request:
        extra.append(
            inspect.Parameter(
                _REQUEST_PARAMETER, inspect.Parameter.KEYWORD_ONLY, annotation=Request
            )
        )
    if add_response:
        extra.append(
            inspect.Parameter(
                _RESPONSE_PARAMETER, inspect.Parameter.KEYWORD_ONLY, annotation=Response
            )
        )
    if parameters and parameters[-1].kind is inspect.Parameter.VAR_KEYWORD:
        parameters[-1:-1] = extra
    else:
        parameters.extend(extra)
    return signature.replace(parameters=parameters)


class _Responder:
    """Finds the plan for each call: one per FastAPI route, one for everything else."""

    def __init__(self, endpoint: Any, options: DispatchOptions, name: str) -> None:
        self._endpoint = endpoint
        self._options = options
        self._name = name
        self._lock = threading.Lock()
        # Keyed by id(route); the route is kept so that its id stays its own.
        self._route_plans: dict[int, tuple[Any, ResponsePlan]] = {}
        self._standalone: ResponsePlan | None = None

    def respond(self, content: Any, request: Request | None, sub_response: Any) -> Any:
        if isinstance(content, Response):
            return content
        plan = self._plan(request)
        try:
            return plan.respond(content, sub_response)
        except ValidationError:
            raise  # the value does not fit the declared type: a 500 like FastAPI's, no log here
        except (TypeError, ValueError) as error:
            # orjson's JSONEncodeError is a TypeError, pydantic's serialization error a
            # ValueError: the value holds something neither can encode.
            logger.error(
                "orjson_dispatch: %s returned a value of type %s that cannot be serialized: %s",
                self._name,
                type(content).__qualname__,
                error,
            )
            raise

    def _plan(self, request: Request | None) -> ResponsePlan:
        route = request.scope.get("route") if request is not None else None
        if route is not None and hasattr(route, "response_field"):
            entry = self._route_plans.get(id(route))
            if entry is None or entry[0] is not route:
                with self._lock:
                    entry = (route, plan_for_route(self._options, route, self._name))
                    self._route_plans[id(route)] = entry
            return entry[1]
        if self._standalone is None:
            self._standalone = standalone_plan(self._options, _declared_type(self._endpoint))
        return self._standalone


def _declared_type(endpoint: Any) -> Any:
    """Return the endpoint's return annotation as the declared type, or None.

    Raises:
        TypeError: The return annotation names something that cannot be resolved; answering
            without the declared type would skip its filtering.
    """
    function = inspect.unwrap(endpoint)
    raw = getattr(function, "__annotations__", {}).get("return", inspect.Signature.empty)
    if raw is inspect.Signature.empty:
        return None
    hints = _type_hints(endpoint)
    if "return" not in hints:
        msg = f"dispatch(): cannot resolve the return annotation {raw!r} of {_describe(endpoint)}"
        raise TypeError(msg)
    annotation = hints["return"]
    if annotation is None or annotation is type(None):
        return None
    bare = annotation
    while typing.get_origin(bare) is typing.Annotated:
        bare = typing.get_args(bare)[0]
    if isinstance(bare, type) and issubclass(bare, Response):
        return None
    return annotation
