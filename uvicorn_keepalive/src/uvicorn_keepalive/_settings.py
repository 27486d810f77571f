"""The settings, validated; the environment, read once per process; the package's logger."""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
from collections.abc import Mapping
from typing import TypedDict

# A child of "uvicorn.error": uvicorn's handlers, format and --log-level apply to it.
logger = logging.getLogger("uvicorn.error.keepalive")
# uvicorn's STARTUP_FAILURE and gunicorn's WORKER_BOOT_ERROR: both stop on it, not respawn.
STARTUP_FAILURE = 3
# Linux's caps (MAX_TCP_KEEPIDLE, MAX_TCP_KEEPINTVL, MAX_TCP_KEEPCNT in include/net/tcp.h),
# everywhere, so that a setting is portable; TCP_USER_TIMEOUT takes a C int.
RANGES = {"idle": (32767, "seconds"), "interval": (32767, "seconds"), "count": (127, "probes"),
          "user_timeout": (2**31 - 1, "milliseconds")}  # fmt: skip


class Fields(TypedDict, total=False):  # KeepaliveSettings' fields: the settings' signature
    idle: int
    interval: int
    count: int
    user_timeout: int | None
    nodelay: bool


@dataclasses.dataclass(frozen=True)
class KeepaliveSettings:
    """Validated settings: TCP keepalive, and TCP_NODELAY.

    After ``idle`` s without data (1 to 32767, default 60) a connection gets a probe, then
    one every ``interval`` s (1 to 32767, default 10); after ``count`` (1 to 127, default 3)
    unanswered the kernel resets it. ``user_timeout``: TCP_USER_TIMEOUT (1 to 2**31 - 1 ms,
    None: unset); ``nodelay=False`` leaves TCP_NODELAY to the event loop. Bad values raise
    TypeError or ValueError with the value and range: ``idle=0 is out of range: 1 to 32767
    seconds``. The functions taking settings take one of these and/or its fields by name
    (replacing its fields, or the defaults'); given neither, `from_environment`'s, read once
    per process; given either, they never read the environment.
    """

    idle: int = 60
    interval: int = 10
    count: int = 3
    user_timeout: int | None = None
    nodelay: bool = True

    def __post_init__(self) -> None:
        for name, (_, unit) in RANGES.items():
            value = getattr(self, name)
            if value is None and name == "user_timeout":
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int ({unit}), got {value!r}")
            _in_range(f"{name}={value}", name, value)
        if not isinstance(self.nodelay, bool):
            raise TypeError(f"nodelay must be a bool, got {self.nodelay!r}")

    @property
    def detection_time(self) -> int:
        """Seconds after the last data by which a silent peer is detected."""
        return self.idle + self.interval * self.count

    def __str__(self) -> str:
        timeout = "" if self.user_timeout is None else f", user timeout {self.user_timeout} ms"
        return (
            f"TCP keepalive: idle {self.idle} s, interval {self.interval} s, {self.count} probes"
            f"{timeout}; TCP_NODELAY {'on' if self.nodelay else 'left to the event loop'}"
        )

    @classmethod
    def from_environment(
        cls, environ: Mapping[str, str] | None = None, /, *, prefix: str = "UVICORN_KEEPALIVE_"
    ) -> KeepaliveSettings:
        """Each setting from the variable ``prefix`` + its name in capitals, else its default.

        ``environ``: ``os.environ``, or a server's own configuration. Blank is unset; a value
        is ASCII digits (``NODELAY``: 1 or 0), else ValueError names the variable, its value
        and range: ``UVICORN_KEEPALIVE_IDLE='0' is out of range: 1 to 32767 seconds``. Other
        variables starting with ``prefix`` are logged at WARNING and ignored.
        """
        environ = os.environ if environ is None else environ
        variables = {name: prefix + name.upper() for name in (*RANGES, "nodelay")}
        known = ", ".join(variables.values())
        for unknown in sorted(set(environ) - set(variables.values())):
            if unknown.startswith(prefix):
                logger.warning(
                    "%s is not a setting and is ignored; the settings are %s", unknown, known
                )
        values: dict[str, int | bool] = {}
        for name, variable in variables.items():
            raw, given = environ.get(variable, "").strip(), f"{variable}={environ.get(variable)!r}"
            if name == "nodelay" and raw not in ("", "0", "1"):
                raise ValueError(f"{given} must be 1 or 0")
            if raw and not (raw.isascii() and raw.isdigit()):  # int() takes "1_0", "+5", "٣"
                raise ValueError(f"{given} is not a decimal integer (ASCII digits 0-9)")
            if raw:
                values[name] = raw == "1" if name == "nodelay" else _in_range(given, name, int(raw))
        return cls(**values)  # type: ignore[arg-type]


def _in_range(given: str, name: str, value: int) -> int:
    high, unit = RANGES[name]
    if not 1 <= value <= high:
        raise ValueError(f"{given} is out of range: 1 to {high} {unit}")
    return value


#: `KeepaliveSettings.from_environment` of ``os.environ``, read once per process.
environment = functools.cache(KeepaliveSettings.from_environment)


def resolve(settings: KeepaliveSettings | None, fields: Fields) -> KeepaliveSettings:
    # The settings a function was given, as KeepaliveSettings says.
    if settings is None:
        return KeepaliveSettings(**fields) if fields else environment()
    if not isinstance(settings, KeepaliveSettings):
        raise TypeError(f"settings must be a KeepaliveSettings (or idle=...), got {settings!r}")
    return dataclasses.replace(settings, **fields)
