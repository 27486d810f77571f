"""The keepalive settings: their ranges, their defaults and the environment variables."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

from uvicorn_keepalive._log import warn_once

# Linux caps the three keepalive options at these values (MAX_TCP_KEEPIDLE,
# MAX_TCP_KEEPINTVL and MAX_TCP_KEEPCNT in include/net/tcp.h) and answers EINVAL
# beyond them; using the same bounds everywhere makes a setting portable.
MAX_IDLE = 32767
MAX_INTERVAL = 32767
MAX_COUNT = 127
# setsockopt(TCP_USER_TIMEOUT) takes a C int of milliseconds.
MAX_USER_TIMEOUT = 2**31 - 1

DEFAULT_IDLE = 60
DEFAULT_INTERVAL = 10
DEFAULT_COUNT = 3

ENV_IDLE = "UVICORN_KEEPALIVE_IDLE"
ENV_INTERVAL = "UVICORN_KEEPALIVE_INTERVAL"
ENV_COUNT = "UVICORN_KEEPALIVE_COUNT"
ENV_USER_TIMEOUT = "UVICORN_KEEPALIVE_USER_TIMEOUT"

#: The environment variable of each setting, in the order of the fields.
ENVIRONMENT_VARIABLES: Mapping[str, str] = {
    "idle": ENV_IDLE,
    "interval": ENV_INTERVAL,
    "count": ENV_COUNT,
    "user_timeout": ENV_USER_TIMEOUT,
}

_RANGES: Mapping[str, tuple[int, int, str]] = {
    "idle": (1, MAX_IDLE, "seconds"),
    "interval": (1, MAX_INTERVAL, "seconds"),
    "count": (1, MAX_COUNT, "probes"),
    "user_timeout": (1, MAX_USER_TIMEOUT, "milliseconds"),
}


def _check(name: str, value: object) -> int:
    """Return ``value`` if it is an int within the range of the setting ``name``.

    Raises:
        TypeError: ``value`` is not an int (a bool is not accepted either).
        ValueError: ``value`` is outside the range of the setting.
    """
    low, high, unit = _RANGES[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int ({unit}), got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be from {low} to {high} {unit}, got {value}")
    return value


@dataclasses.dataclass(frozen=True)
class KeepaliveSettings:
    """Validated TCP keepalive settings.

    A connection that carried no data for ``idle`` seconds gets a keepalive probe,
    then one every ``interval`` seconds while the peer stays silent; after ``count``
    unanswered probes the kernel resets the connection and the application sees a
    disconnect. A dead peer is therefore noticed ``idle + interval * count`` seconds
    after the last data at the latest.

    Attributes:
        idle: Seconds of silence before the first probe, 1 to 32767.
        interval: Seconds between probes, 1 to 32767.
        count: Unanswered probes before the connection is dropped, 1 to 127.
        user_timeout: Milliseconds that sent data may stay unacknowledged before
            the connection is dropped (``TCP_USER_TIMEOUT``, RFC 5482; Linux only),
            at least 1, or ``None`` to leave the kernel default.

    A ``user_timeout`` shorter than ``idle + interval * count`` seconds is accepted
    with a WARNING, once per process and settings.

    Raises:
        TypeError: A value is not an int.
        ValueError: A value is out of its range; the message names the setting.
    """

    idle: int = DEFAULT_IDLE
    interval: int = DEFAULT_INTERVAL
    count: int = DEFAULT_COUNT
    user_timeout: int | None = None

    def __post_init__(self) -> None:
        _check("idle", self.idle)
        _check("interval", self.interval)
        _check("count", self.count)
        if self.user_timeout is not None:
            _check("user_timeout", self.user_timeout)
            if self.user_timeout < self.detection_time * 1000:
                # With TCP_USER_TIMEOUT set, Linux drops a connection as soon as one
                # probe is unanswered past the user timeout, so the probe count no
                # longer applies (tcp_keepalive_timer in net/ipv4/tcp_timer.c).
                warn_once(
                    f"user_timeout {self}",
                    "user_timeout=%d ms is shorter than idle + interval x count = %d ms: "
                    "a single unanswered keepalive probe will close an idle connection",
                    self.user_timeout,
                    self.detection_time * 1000,
                )

    @property
    def detection_time(self) -> int:
        """Seconds after the last data by which a silent peer is detected."""
        return self.idle + self.interval * self.count

    @classmethod
    def from_environment(
        cls,
        environ: Mapping[str, str] | None = None,
        /,
        **explicit: int | None,
    ) -> KeepaliveSettings:
        """Build settings from ``UVICORN_KEEPALIVE_*`` variables.

        Each setting comes from ``explicit`` when given there, else from its
        variable (``UVICORN_KEEPALIVE_IDLE``, ``UVICORN_KEEPALIVE_INTERVAL``,
        ``UVICORN_KEEPALIVE_COUNT``, ``UVICORN_KEEPALIVE_USER_TIMEOUT``), else from
        the default (60, 10, 3, off). A variable that is empty or only blanks counts
        as unset; any other value must be a decimal integer in range.

        Args:
            environ: The environment to read; ``os.environ`` when ``None``.
            **explicit: Settings that win over the environment, by field name.

        Returns:
            The validated settings.

        Raises:
            ValueError: A variable is not an integer or out of range; the message
                names the variable and repeats its value.
        """
        environ = os.environ if environ is None else environ
        values: dict[str, int | None] = {}
        for field, variable in ENVIRONMENT_VARIABLES.items():
            if field in explicit:
                values[field] = explicit[field]
                continue
            raw = environ.get(variable, "").strip()
            if not raw:
                continue
            try:
                number = int(raw, 10)
            except ValueError:
                raise ValueError(
                    f"{variable}={raw!r} is invalid: {field} must be a decimal integer"
                ) from None
            try:
                values[field] = _check(field, number)
            except ValueError as exc:
                raise ValueError(f"{variable}={raw!r} is invalid: {exc}") from None
        return cls(**values)  # type: ignore[arg-type]
