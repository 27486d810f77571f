"""The settings, with their defaults, ranges and environment variables; the package's logger."""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Mapping

# A child of uvicorn's "uvicorn.error" logger: uvicorn's handlers, format and --log-level
# apply to it, and it can still be tuned on its own.
logger = logging.getLogger("uvicorn.error.keepalive")

PREFIX = "UVICORN_KEEPALIVE_"
# Linux caps the three keepalive options (MAX_TCP_KEEPIDLE, MAX_TCP_KEEPINTVL and
# MAX_TCP_KEEPCNT in include/net/tcp.h) and answers EINVAL beyond; the same bounds
# everywhere make a setting portable. TCP_USER_TIMEOUT takes a C int.
RANGES = {
    "idle": (32767, "seconds"),
    "interval": (32767, "seconds"),
    "count": (127, "probes"),
    "user_timeout": (2**31 - 1, "milliseconds"),
}
#: The environment variable of each setting, in the order of the fields.
VARIABLES = {field: PREFIX + field.upper() for field in (*RANGES, "nodelay")}


@dataclasses.dataclass(frozen=True)
class KeepaliveSettings:
    """Validated settings: TCP keepalive, and TCP_NODELAY.

    A connection that carried no data for ``idle`` seconds gets a keepalive probe, then
    one every ``interval`` seconds while the peer stays silent; after ``count``
    unanswered probes the kernel resets the connection. A silent peer is therefore
    noticed ``idle + interval * count`` seconds after the last data at the latest.

    Attributes:
        idle: Seconds of silence before the first probe, 1 to 32767 (default 60).
        interval: Seconds between unanswered probes, 1 to 32767 (default 10).
        count: Unanswered probes before the connection is reset, 1 to 127 (default 3).
        user_timeout: Milliseconds that sent data may stay unacknowledged before the
            connection is reset (``TCP_USER_TIMEOUT``, RFC 5482, Linux), 1 to 2**31 - 1,
            or ``None`` (the default) to leave the kernel's.
        nodelay: Whether ``TCP_NODELAY`` is set too (default ``True``): asyncio sets it
            only on sockets created with ``IPPROTO_TCP``, which uvicorn's ``--workers``
            and gunicorn listeners are not; without it, Nagle's algorithm holds a small
            response back until the client's delayed ACK (tens of milliseconds).
            ``False`` leaves it as the event loop set it.

    Raises:
        TypeError: A value is not an int (``nodelay``: not a bool).
        ValueError: A value is out of its range; the message names the setting.
    """

    idle: int = 60
    interval: int = 10
    count: int = 3
    user_timeout: int | None = None
    nodelay: bool = True

    def __post_init__(self) -> None:
        for name, (high, unit) in RANGES.items():
            value = getattr(self, name)
            if value is None and name == "user_timeout":
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int ({unit}), got {value!r}")
            if not 1 <= value <= high:
                raise ValueError(f"{name} must be from 1 to {high} {unit}, got {value}")
        if not isinstance(self.nodelay, bool):
            raise TypeError(f"nodelay must be a bool, got {self.nodelay!r}")

    @property
    def detection_time(self) -> int:
        """Seconds after the last data by which a silent peer is detected."""
        return self.idle + self.interval * self.count

    def __str__(self) -> str:
        timeout = "" if self.user_timeout is None else f", user timeout {self.user_timeout} ms"
        nodelay = "on" if self.nodelay else "left to the event loop"
        return (
            f"TCP keepalive: idle {self.idle} s, interval {self.interval} s, {self.count} probes"
            f"{timeout}; TCP_NODELAY {nodelay}"
        )

    @classmethod
    def from_environment(
        cls, environ: Mapping[str, str] | None = None, /, **explicit: int | bool | None
    ) -> KeepaliveSettings:
        """Each setting from ``explicit`` (unless ``None``), else its variable, else its default.

        A setting's variable is ``UVICORN_KEEPALIVE_`` and its name in capitals; empty or blank
        counts as unset, any other value must be ASCII decimal digits, blanks around them
        allowed (``UVICORN_KEEPALIVE_NODELAY``: ``1`` or ``0``). Other ``UVICORN_KEEPALIVE_*``
        variables are logged at WARNING, naming the known ones, and ignored.

        Args:
            environ: The environment to read; ``os.environ`` when ``None``.
            **explicit: Settings that win over the environment, by field name.

        Raises:
            TypeError: An explicit value has the wrong type.
            ValueError: A value is out of range; for a variable, the message names it
                and repeats its value.
        """
        environ = os.environ if environ is None else environ
        known = VARIABLES.values()
        for variable in environ:
            if variable.startswith(PREFIX) and variable not in known:
                logger.warning(
                    "%s is not a uvicorn-keepalive setting and is ignored; the settings are %s",
                    variable,
                    ", ".join(known),
                )
        values = {name: value for name, value in explicit.items() if value is not None}
        for name, variable in VARIABLES.items():
            raw = environ.get(variable, "").strip()
            if name in values or not raw:
                continue
            try:
                if name == "nodelay" and raw not in ("0", "1"):
                    raise ValueError("nodelay must be 1 or 0")
                # int() would also take "1_0", "+5" and non-ASCII digits such as "٣".
                if not (raw.isascii() and raw.isdigit()):
                    raise ValueError(f"{name} must be a decimal integer (ASCII digits 0-9)")
                values[name] = raw == "1" if name == "nodelay" else int(raw)
                cls(**{name: values[name]})  # type: ignore[arg-type]
            except ValueError as exc:
                raise ValueError(f"{variable}={raw!r} is invalid: {exc}") from None
        return cls(**values)  # type: ignore[arg-type]


def from_arguments(*values: int | bool | None) -> KeepaliveSettings:
    """`KeepaliveSettings.from_environment` of idle, interval, count, user_timeout, nodelay."""
    return KeepaliveSettings.from_environment(**dict(zip(VARIABLES, values, strict=True)))


def announce(settings: KeepaliveSettings) -> bool:
    """Log ``settings`` at INFO if INFO records are shown; return whether they were."""
    if not logger.isEnabledFor(logging.INFO):
        return False
    logger.info("%s", settings)
    return True
