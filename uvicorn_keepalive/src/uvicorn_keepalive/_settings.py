"""The keepalive settings: their ranges, their defaults and the environment variables."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

from uvicorn_keepalive._log import warn_once

DEFAULT_IDLE = 60
DEFAULT_INTERVAL = 10
DEFAULT_COUNT = 3

# Linux caps the three keepalive options (MAX_TCP_KEEPIDLE, MAX_TCP_KEEPINTVL and
# MAX_TCP_KEEPCNT in include/net/tcp.h) and answers EINVAL beyond; the same bounds
# everywhere make a setting portable. TCP_USER_TIMEOUT takes a C int.
_RANGES = {
    "idle": (32767, "seconds"),
    "interval": (32767, "seconds"),
    "count": (127, "probes"),
    "user_timeout": (2**31 - 1, "milliseconds"),
}
PREFIX = "UVICORN_KEEPALIVE_"
#: The environment variable of each setting, in the order of the fields.
ENVIRONMENT_VARIABLES = {field: PREFIX + field.upper() for field in _RANGES}


def _check(name: str, value: object) -> int:
    """Return ``value`` if it is an int (not a bool) within the range of ``name``."""
    high, unit = _RANGES[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int ({unit}), got {value!r}")
    if not 1 <= value <= high:
        raise ValueError(f"{name} must be from 1 to {high} {unit}, got {value}")
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
        if self.user_timeout is not None and _check("user_timeout", self.user_timeout) < (
            self.detection_time * 1000
        ):
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
        as unset; any other value must be ASCII decimal digits (blanks around them
        allowed) giving a number in range. Any other ``UVICORN_KEEPALIVE_*``
        variable is logged at WARNING, once per process and name, and ignored.

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
        known = ENVIRONMENT_VARIABLES.values()
        for variable in environ:
            if variable.startswith(PREFIX) and variable not in known:
                warn_once(
                    variable,
                    "%s is not a uvicorn-keepalive setting and is ignored; the settings are %s",
                    variable,
                    ", ".join(known),
                )
        values = dict(explicit)
        for field, variable in ENVIRONMENT_VARIABLES.items():
            raw = environ.get(variable, "").strip()
            if field in explicit or not raw:
                continue
            # int() would also take "1_0", "+5" and non-ASCII digits such as "٣".
            if not (raw.isascii() and raw.isdigit()):
                raise ValueError(
                    f"{variable}={raw!r} is invalid: {field} must be a decimal integer"
                    " (ASCII digits 0-9)"
                )
            try:
                values[field] = _check(field, int(raw))
            except ValueError as exc:
                raise ValueError(f"{variable}={raw!r} is invalid: {exc}") from None
        return cls(**values)  # type: ignore[arg-type]
