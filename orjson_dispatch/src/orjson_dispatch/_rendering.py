"""Response classes that take a finished JSON body.

FastAPI builds a route's response as `response_class(content, status_code=..., background=...)`
and the class renders `content`. To keep everything a JSON response class does (its media type,
the headers its `__init__` sets) while the body comes from orjson, the class is given an
`Encoded` body through `rendering(cls)`, a subclass whose `render` passes it through.
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any

from starlette.responses import JSONResponse, Response

from orjson_dispatch._fastapi import JSON_RENDERS

__all__ = ["Encoded", "body_allowed", "reads_content", "rendering", "renders_json"]


class Encoded:
    """A finished JSON body, rendered as it is by `rendering(cls)`."""

    __slots__ = ("body",)

    def __init__(self, body: bytes) -> None:
        self.body = body


def renders_json(response_class: type[Response]) -> bool:
    """Tell whether `response_class(content)` renders `content` as the JSON we would write.

    True for JSONResponse and FastAPI's ORJSONResponse and UJSONResponse, and their subclasses
    that keep their `render` and JSONResponse's `__init__` (see `reads_content`).
    """
    if not issubclass(response_class, JSONResponse) or reads_content(response_class):
        return False
    return response_class.render in JSON_RENDERS


def reads_content(response_class: type[Response]) -> bool:
    """Tell whether the class has an `__init__` of its own, which may read the content.

    Such a class (one that wraps the content in an envelope, or picks a status from it) must be
    given the value FastAPI gives it, not a finished body.
    """
    return response_class.__init__ not in (JSONResponse.__init__, Response.__init__)


def rendering(response_class: type[Response]) -> type[Response]:
    """Return the subclass of `response_class` that renders an `Encoded` body as it is.

    It has the same name, module and `__init__`, and renders any other content as
    `response_class` does. Made once per class while in use: the cache holds neither the class
    nor its subclass, so that a class created on the fly is collected with its subclass.
    """
    known = _subclasses.get(response_class)
    subclass = known() if known is not None else None
    if subclass is None:
        render = response_class.render

        def render_encoded(self: Response, content: Any) -> bytes:
            if type(content) is Encoded:
                return content.body
            return bytes(render(self, content))

        with warnings.catch_warnings():
            # FastAPI deprecates ORJSONResponse and UJSONResponse (a FastAPIDeprecationWarning,
            # a UserWarning), subclassing included; FastAPI warns when such a response is
            # created, as it still is, not here.
            warnings.simplefilter("ignore")
            subclass = type(
                response_class.__name__,
                (response_class,),
                {
                    "render": render_encoded,
                    "__module__": response_class.__module__,
                    "__qualname__": response_class.__qualname__,
                    "__doc__": response_class.__doc__,
                },
            )
        _subclasses[response_class] = weakref.ref(subclass)
    return subclass


_subclasses: weakref.WeakKeyDictionary[type[Response], weakref.ref[type[Response]]] = (
    weakref.WeakKeyDictionary()
)


def body_allowed(status_code: int) -> bool:
    """Tell whether a response with this status may carry content.

    RFC 9110 sections 15.2, 15.3.5, 15.3.6 and 15.4.5: 1xx, 204, 205 and 304 carry none.
    """
    return not (status_code < 200 or status_code in (204, 205, 304))
