"""The package's logger and its once-per-process warnings."""

from __future__ import annotations

import logging

# A child of uvicorn's "uvicorn.error" logger: uvicorn's handlers, format and
# --log-level apply to it, and it can still be tuned on its own.
logger = logging.getLogger("uvicorn.error.keepalive")

_warned: set[str] = set()


def warn_once(key: str, message: str, *args: object) -> None:
    """Log ``message`` at WARNING the first time ``key`` is seen in this process."""
    if key in _warned:
        return
    _warned.add(key)
    logger.warning(message, *args)
