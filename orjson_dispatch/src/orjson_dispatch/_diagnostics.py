"""How orjson_dispatch tells its user: the "orjson_dispatch" logger, misuse warnings."""

from __future__ import annotations

import logging
import sys
import warnings
from typing import Any

__all__ = ["logger", "methods", "user_frame", "warn"]

logger = logging.getLogger("orjson_dispatch")


def warn(message: str) -> None:
    """Issue a UserWarning at the user's line (`user_frame`), once per line."""
    frame = user_frame()
    warnings.warn_explicit(
        message,
        UserWarning,
        frame.f_code.co_filename,
        frame.f_lineno,
        module=frame.f_globals.get("__name__"),
        registry=frame.f_globals.setdefault("__warningregistry__", {}),
    )


def methods(route: Any) -> str:
    """Return a route's HTTP methods as its messages name them: `GET,POST`."""
    return ",".join(sorted(getattr(route, "methods", None) or ()))


_LIBRARIES = ("orjson_dispatch", "fastapi", "starlette")


def user_frame() -> Any:
    """Return the innermost frame of code outside orjson_dispatch, FastAPI and Starlette."""
    frame: Any = sys._getframe(1)
    while frame.f_back is not None and str(frame.f_globals.get("__name__")).startswith(_LIBRARIES):
        frame = frame.f_back
    return frame
