"""How orjson_dispatch tells its user: the "orjson_dispatch" logger, misuse warnings."""

from __future__ import annotations

import logging
import warnings
from typing import Any

from orjson_dispatch._fastapi import user_frame

__all__ = ["logger", "methods", "warn"]

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
