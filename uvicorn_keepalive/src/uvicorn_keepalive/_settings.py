"""The settings, validated; the environment, read once per process; the package's logger."""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
from collections.abc import Mapping
from typing import TypedDict

# A child of uvicorn's "uvicorn.error" logger: uvicorn's handlers, format and --log-level
# apply to it, and it can still be tuned on its own.
logger = logging.getLogger("uvicorn.error.keepalive")
# uvicorn's STARTUP_FAILURE and gunicorn's WORKER_BOOT_ERROR: both stop on it, not respawn.
STARTUP_FAILURE = 3
# Linux caps the keepalive options (MAX_TCP_KEEPIDLE, MAX_TCP_KEEPINTVL, MAX_TCP_KEEPCNT in
# include/net/tcp.h), answering EINVAL beyond: the same bounds everywhere make a setting
# portable. TCP_USER_TIMEOUT takes a C int.
RANGES = {"idle": (32767, "seconds"), "interval": (32767, "seconds"), "count": (127, "probes"),
          "user_timeout": (2**31 - 1, "milliseconds")}  # fmt: skip


class Fields(TypedDict, total=False):
    """The fields of `KeepaliveSettings` as keyword arguments: the one signature of settings."""

    idle: int
    interval: int
    count: int
    user_timeout: int | None
    nodelay: bool


@dataclasses.dataclass(frozen=True)
class KeepaliveSettings:
    """Validated settings: TCP keepalive, and TCP_NODELAY.

    After ``idle`` seconds without data (1 to 32767, default 60) a connection gets a probe,
    then one every ``interval`` seconds (1 to 32767, default 10) while the peer is silent;
    after ``count`` (1 to 127, default 3) unanswered probes the kernel resets it.
    ``user_timeout`` (Linux's TCP_USER_TIMEOUT, 1 to 2**31 - 1 ms; default None: unset)
    bounds how long sent data may stay unacknowledged; ``nodelay=False`` leaves TCP_NODELAY
    as the event loop set it. A wrong type raises TypeError (``idle must be an int (seconds),
    got '60'``), a value out of range ValueError (``idle=0 is out of range: 1 to 32767
    seconds``).

    `protocol`, `set_keepalive`, `socket_options` and `socket_factory` take a
    ``KeepaliveSettings``, and these fields as keyword arguments, which replace its fields
    (or the defaults); given neither, the settings of `from_environment`, read once per
    process. Given either, they never read the environment.
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
            _check_range(f"{name}={value}", name, value)
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

        ``environ`` defaults to ``os.environ`` (an adopter's configuration reads with its own
        ``prefix``). Empty or blank is unset; a value is ASCII decimal digits, blanks around
        allowed (``NODELAY``: ``1`` or ``0``), else ValueError names the variable, its value
        and the range: ``UVICORN_KEEPALIVE_IDLE='0' is out of range: 1 to 32767 seconds``.
        Other variables starting with ``prefix`` are logged at WARNING and ignored.
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
            if not (raw := environ.get(variable, "").strip()):
                continue
            given = f"{variable}={environ[variable]!r}"
            if name == "nodelay" and raw not in ("0", "1"):
                raise ValueError(f"{given} must be 1 or 0")
            # int() would also take "1_0", "+5" and non-ASCII digits such as "٣".
            if not (raw.isascii() and raw.isdigit()):
                raise ValueError(f"{given} is not a decimal integer (ASCII digits 0-9)")
            if name != "nodelay":
                _check_range(given, name, int(raw))
            values[name] = raw == "1" if name == "nodelay" else int(raw)
        return cls(**values)  # type: ignore[arg-type]


def _check_range(given: str, name: str, value: int) -> None:
    high, unit = RANGES[name]
    if not 1 <= value <= high:
        raise ValueError(f"{given} is out of range: 1 to {high} {unit}")


@functools.cache
def environment() -> KeepaliveSettings:
    """`KeepaliveSettings.from_environment` of ``os.environ``, read once per process."""
    return KeepaliveSettings.from_environment()


def environment_or_exit() -> KeepaliveSettings:
    """`environment`; a bad variable is logged at ERROR and ends the process with status 3."""
    try:
        return environment()
    except ValueError as exc:
        logger.error("%s", exc)
        raise SystemExit(STARTUP_FAILURE) from None


def resolve(settings: KeepaliveSettings | None, fields: Fields) -> KeepaliveSettings:
    """The settings a function was given, as `KeepaliveSettings` says."""
    if settings is None:
        return KeepaliveSettings(**fields) if fields else environment()
    if not isinstance(settings, KeepaliveSettings):
        raise TypeError(f"settings must be a KeepaliveSettings (or idle=...), got {settings!r}")
    return dataclasses.replace(settings, **fields)
