"""The options table, a row per setting (KeepaliveSettings' fields); the environment, read once."""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
from collections.abc import Mapping
from typing import Annotated, TypedDict, get_type_hints

# A child of "uvicorn.error": uvicorn's handlers, format and --log-level apply to it.
logger = logging.getLogger("uvicorn.error.keepalive")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Option:
    """A row of the options table: a setting, annotating its field of KeepaliveSettings.

    Attributes:
        constants: The ``socket`` constants setting it (level IPPROTO_TCP), the first this
            platform has: Linux's (FreeBSD's and Windows'), then macOS's where it differs.
        high: An int's largest value, 1 its smallest; ``unit``: what it counts.
        name, default: The field's (set by `OPTIONS`); a bool default makes it a switch.
    """

    constants: tuple[str, ...]
    high: int = 1
    unit: str = ""
    name: str = dataclasses.field(default="", repr=False)
    default: object = dataclasses.field(default=None, repr=False)

    def check(self, value: object, given: str) -> None:
        """Raise TypeError naming the option, or ValueError naming ``given``, unless it fits."""
        switch = isinstance(self.default, bool)
        if value is None and self.default is None:
            return
        if switch != isinstance(value, bool) or not isinstance(value, int):
            expected = "a bool" if switch else f"an int ({self.unit})"
            raise TypeError(f"{self.name} must be {expected}, got {value!r}")
        if not switch and not 1 <= value <= self.high:
            raise ValueError(f"{given} is out of range: 1 to {self.high} {self.unit}")


@dataclasses.dataclass(frozen=True)
class KeepaliveSettings:
    """Validated settings: TCP keepalive, and TCP_NODELAY.

    After ``idle`` s without data a connection gets a probe, then one every ``interval`` s;
    after ``count`` unanswered the kernel resets it. ``user_timeout``: TCP_USER_TIMEOUT, ms
    (None: unset); ``nodelay=False`` leaves TCP_NODELAY to the event loop. A value out of its
    range (each field's row) raises ValueError: ``idle=0 is out of range: 1 to 32767 seconds``;
    one of another type TypeError. Functions taking settings take one of these and/or fields
    by name, which replace its (or the defaults'); given neither, `from_environment`'s.
    """

    # The options table: a new option is a row here and its key in Fields. The highs are
    # Linux's (MAX_TCP_KEEPIDLE, MAX_TCP_KEEPINTVL, MAX_TCP_KEEPCNT in include/net/tcp.h)
    # everywhere, so that a setting is portable; TCP_USER_TIMEOUT takes a C int. macOS's
    # TCP_KEEPALIVE (0x10 in netinet/tcp.h) is its idle time.
    idle: Annotated[
        int, Option(constants=("TCP_KEEPIDLE", "TCP_KEEPALIVE"), high=32767, unit="seconds")
    ] = 60
    interval: Annotated[int, Option(constants=("TCP_KEEPINTVL",), high=32767, unit="seconds")] = 10
    count: Annotated[int, Option(constants=("TCP_KEEPCNT",), high=127, unit="probes")] = 3
    user_timeout: Annotated[
        int | None, Option(constants=("TCP_USER_TIMEOUT",), high=2**31 - 1, unit="milliseconds")
    ] = None
    nodelay: Annotated[bool, Option(constants=("TCP_NODELAY",))] = True

    def __post_init__(self) -> None:
        for option in OPTIONS:
            value = getattr(self, option.name)
            option.check(value, f"{option.name}={value}")

    @property
    def detection_time(self) -> int:
        """Seconds after the last data by which a silent peer is detected."""
        return self.idle + self.interval * self.count

    def __str__(self) -> str:
        """The fields but None ones as keywords: ``idle=60, interval=10, count=3, nodelay=True``."""
        values = {option.name: getattr(self, option.name) for option in OPTIONS}
        return ", ".join(f"{name}={value!r}" for name, value in values.items() if value is not None)

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
        values: dict[str, int] = {}
        for variable, option in variables.items():
            if not (raw := environ.get(variable, "").strip()):  # blank: unset
                continue
            given = f"{variable}={environ[variable]!r}"
            switch = isinstance(option.default, bool)
            if switch and raw not in ("0", "1"):
                raise ValueError(f"{given} must be 1 or 0")
            if not (raw.isascii() and raw.isdigit()):  # int() takes "1_0", "+5", "٣"
                raise ValueError(f"{given} is not a decimal integer (ASCII digits 0-9)")
            values[option.name] = raw == "1" if switch else int(raw)
            option.check(values[option.name], given)
        return cls(**values)  # type: ignore[arg-type]  # a switch's value is a bool


#: The options table's rows, in the order of KeepaliveSettings' fields.
OPTIONS = tuple(
    dataclasses.replace(hint.__metadata__[0], name=name, default=getattr(KeepaliveSettings, name))
    for name, hint in get_type_hints(KeepaliveSettings, include_extras=True).items()
)
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
