"""The options, a row each (KeepaliveSettings' fields), checked; the environment, read once."""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
from collections.abc import Mapping
from typing import Any, TypedDict

# A child of "uvicorn.error": uvicorn's handlers, format and --log-level apply to it.
logger = logging.getLogger("uvicorn.error.keepalive")


@dataclasses.dataclass(frozen=True)
class Option:
    # A setting: a bool default is a switch (True sets 1), else an int 1 to `high` `unit` or
    # None (unset); `said` is its part of the settings line, "{}" its value. Set by the first
    # of `constants` that socket has.
    name: str
    default: int | bool | None
    high: int
    unit: str
    said: str
    constants: str

    @property
    def switch(self) -> bool:
        return isinstance(self.default, bool)

    def check(self, value: object, given: str) -> None:
        # TypeError, or ValueError naming ``given`` (name=value), unless ``value`` fits.
        if value is None and self.default is None:  # unset
            return
        if self.switch != isinstance(value, bool) or not isinstance(value, int):
            expected = "a bool" if self.switch else f"an int ({self.unit})"
            raise TypeError(f"{self.name} must be {expected}, got {value!r}")
        if not self.switch and not 1 <= value <= self.high:
            raise ValueError(f"{given} is out of range: 1 to {self.high} {self.unit}")


def option(*row: Any) -> Any:
    # A row of the table: Option's fields after its name, the first the field's default.
    return dataclasses.field(default=row[0], metadata={"row": row})


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

    # A row per option: a new one is a row here and its key in Fields. The highs are Linux's
    # (MAX_TCP_KEEPIDLE, MAX_TCP_KEEPINTVL, MAX_TCP_KEEPCNT in include/net/tcp.h) everywhere, so
    # that a setting is portable; TCP_USER_TIMEOUT takes a C int. macOS names the idle time
    # TCP_KEEPALIVE (0x10 in netinet/tcp.h).
    idle: int = option(60, 32767, "seconds", "idle {} s", "TCP_KEEPIDLE TCP_KEEPALIVE")
    interval: int = option(10, 32767, "seconds", "interval {} s", "TCP_KEEPINTVL")
    count: int = option(3, 127, "probes", "{} probes", "TCP_KEEPCNT")
    user_timeout: int | None = option(
        None, 2**31 - 1, "milliseconds", "user timeout {} ms", "TCP_USER_TIMEOUT"
    )
    nodelay: bool = option(True, 1, "", "TCP_NODELAY {}", "TCP_NODELAY")

    def __post_init__(self) -> None:
        for option in OPTIONS:
            value = getattr(self, option.name)
            option.check(value, f"{option.name}={value}")

    @property
    def detection_time(self) -> int:
        """Seconds after the last data by which a silent peer is detected."""
        return self.idle + self.interval * self.count

    def __str__(self) -> str:
        said: dict[bool, list[str]] = {False: [], True: []}  # the switches after a semicolon
        for option in OPTIONS:
            value = getattr(self, option.name)
            if option.switch:
                value = "on" if value else "left to the event loop"
            if value is not None:
                said[option.switch].append(option.said.format(value))
        return "TCP keepalive: " + "; ".join(", ".join(parts) for parts in said.values())

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
        variables = {prefix + option.name.upper(): option for option in OPTIONS}
        known = ", ".join(variables)
        for name in sorted(n for n in environ if n.startswith(prefix) and n not in variables):
            logger.warning("%s is not a setting and is ignored; the settings are %s", name, known)
        values: dict[str, int | bool] = {}
        for variable, option in variables.items():
            if not (raw := environ.get(variable, "").strip()):  # unset
                continue
            given = f"{variable}={environ[variable]!r}"
            if option.switch and raw not in ("0", "1"):
                raise ValueError(f"{given} must be 1 or 0")
            if not (raw.isascii() and raw.isdigit()):  # int() takes "1_0", "+5", "٣"
                raise ValueError(f"{given} is not a decimal integer (ASCII digits 0-9)")
            values[option.name] = raw == "1" if option.switch else int(raw)
            option.check(values[option.name], given)
        return cls(**values)  # type: ignore[arg-type]


#: The table's rows, in the order of KeepaliveSettings' fields.
OPTIONS = tuple(Option(f.name, *f.metadata["row"]) for f in dataclasses.fields(KeepaliveSettings))
#: `KeepaliveSettings.from_environment` of ``os.environ``, read once per process.
environment = functools.cache(KeepaliveSettings.from_environment)


class Fields(TypedDict, total=False):  # the table's names and types, for typed keywords
    idle: int
    interval: int
    count: int
    user_timeout: int | None
    nodelay: bool


def resolve(settings: KeepaliveSettings | None, fields: Fields) -> KeepaliveSettings:
    # The settings a function was given, as KeepaliveSettings says.
    if settings is None:
        return KeepaliveSettings(**fields) if fields else environment()
    if not isinstance(settings, KeepaliveSettings):
        raise TypeError(f"settings must be a KeepaliveSettings (or idle=...), got {settings!r}")
    return dataclasses.replace(settings, **fields)
