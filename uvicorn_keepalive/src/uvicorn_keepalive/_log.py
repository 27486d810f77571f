"""The package's logger, its once-per-process warnings and the settings in force."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from uvicorn_keepalive._settings import KeepaliveSettings

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


_announced: set[KeepaliveSettings] = set()


def announce(settings: KeepaliveSettings | None) -> None:
    """Log the settings in force at INFO, once per process and settings.

    Only once INFO records are shown: a class made before uvicorn set up logging
    (``uvicorn.run(app, http=...)``) is announced at its first connection instead.
    """
    if settings is None or settings in _announced or not logger.isEnabledFor(logging.INFO):
        return
    _announced.add(settings)
    timeout = "" if settings.user_timeout is None else f", user timeout {settings.user_timeout} ms"
    idle, interval, count = settings.idle, settings.interval, settings.count
    logger.info(
        "TCP keepalive: idle %d s, interval %d s, %d probes%s", idle, interval, count, timeout
    )
