"""Validation of the settings, from Python and from the environment, read once per process."""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import re
import subprocess
import sys
import typing
from collections.abc import Callable
from pathlib import Path

import pytest
from uvicorn.protocols.http.h11_impl import H11Protocol as UvicornH11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn_keepalive._settings import OPTIONS, Fields

import uvicorn_keepalive
from uvicorn_keepalive import KeepaliveSettings, protocol, socket_options

LOGGER = "uvicorn.error.keepalive"


def test_defaults_are_60_10_3_no_user_timeout_and_nodelay() -> None:
    assert KeepaliveSettings() == KeepaliveSettings(60, 10, 3, None, True)
    assert KeepaliveSettings().detection_time == 90


@pytest.mark.parametrize(
    ("field", "good", "bad"),
    [
        ("idle", [1, 32767], [0, -1, 32768]),
        ("interval", [1, 32767], [0, 32768]),
        ("count", [1, 127], [0, 128]),
        ("user_timeout", [1, 2**31 - 1], [0, -5, 2**31]),
    ],
)
def test_each_range_is_enforced_and_named(field: str, good: list[int], bad: list[int]) -> None:
    for value in good:
        assert getattr(KeepaliveSettings(**{field: value}), field) == value  # type: ignore[arg-type]
    for value in bad:
        with pytest.raises(ValueError, match=rf"^{field}={value} is out of range: 1 to \d+ \w+$"):
            KeepaliveSettings(**{field: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [1.5, "60", True, None])
def test_a_non_int_is_a_type_error_naming_the_setting(value: object) -> None:
    with pytest.raises(TypeError, match=r"^idle must be an int \(seconds\)"):
        KeepaliveSettings(idle=value)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [1, 0, "yes", None])
def test_nodelay_is_a_bool(value: object) -> None:
    with pytest.raises(TypeError, match=r"^nodelay must be a bool, got "):
        KeepaliveSettings(nodelay=value)  # type: ignore[arg-type]


def test_user_timeout_shorter_than_detection_time_warns(logs: pytest.LogCaptureFixture) -> None:
    logs.set_level(logging.WARNING, logger=LOGGER)
    socket_options(idle=61, interval=10, count=3, user_timeout=91_000)
    assert logs.records == []
    socket_options(idle=61, interval=10, count=3, user_timeout=90_999)
    socket_options(idle=61, interval=10, count=3, user_timeout=90_999)  # once per settings
    [record] = logs.records
    assert record.levelno == logging.WARNING
    assert record.getMessage().startswith(
        "user_timeout=90999 ms is shorter than idle + interval x count = 91000 ms"
    )


def test_environment_variables_are_read() -> None:
    environ = {
        "UVICORN_KEEPALIVE_IDLE": "30",
        "UVICORN_KEEPALIVE_INTERVAL": " 5 ",
        "UVICORN_KEEPALIVE_COUNT": "4",
        "UVICORN_KEEPALIVE_USER_TIMEOUT": "60000",
        "UVICORN_KEEPALIVE_NODELAY": "0",
    }
    assert KeepaliveSettings.from_environment(environ) == KeepaliveSettings(30, 5, 4, 60000, False)
    nodelay = {"UVICORN_KEEPALIVE_NODELAY": "1"}
    assert KeepaliveSettings.from_environment(nodelay) == KeepaliveSettings(nodelay=True)


def test_empty_variables_count_as_unset() -> None:
    environ = {"UVICORN_KEEPALIVE_IDLE": "", "UVICORN_KEEPALIVE_COUNT": "  "}
    assert KeepaliveSettings.from_environment(environ) == KeepaliveSettings()


# A variable out of its range, or not a value: each named with its value and what it takes.
BAD_VARIABLES = {
    "UVICORN_KEEPALIVE_IDLE": ("0", "is out of range: 1 to 32767 seconds"),
    "UVICORN_KEEPALIVE_INTERVAL": ("40000", "is out of range: 1 to 32767 seconds"),
    "UVICORN_KEEPALIVE_COUNT": (" 128", "is out of range: 1 to 127 probes"),
    "UVICORN_KEEPALIVE_USER_TIMEOUT": ("0", "is out of range: 1 to 2147483647 milliseconds"),
    "UVICORN_KEEPALIVE_NODELAY": ("2", "must be 1 or 0"),
}
# int() takes most of these; a setting takes ASCII decimal digits only, a switch 1 or 0.
NOT_DECIMAL = ["ten", "3.0", "1_0", "+5", "-5", "\u0663", "\uff17"]


@pytest.mark.parametrize(
    ("variable", "raw", "message"), [(v, *b) for v, b in BAD_VARIABLES.items()]
)
def test_a_bad_variable_is_named_with_its_value_and_range(
    variable: str, raw: str, message: str
) -> None:
    with pytest.raises(ValueError, match=rf"^{variable}={re.escape(repr(raw))} {message}$"):
        KeepaliveSettings.from_environment({variable: raw})


@pytest.mark.parametrize("raw", NOT_DECIMAL)
@pytest.mark.parametrize(
    ("variable", "message"),
    [
        ("UVICORN_KEEPALIVE_COUNT", r"is not a decimal integer \(ASCII digits 0-9\)"),
        ("UVICORN_KEEPALIVE_NODELAY", "must be 1 or 0"),
    ],
)
def test_a_variable_that_is_not_ascii_digits_is_named(
    variable: str, message: str, raw: str
) -> None:
    with pytest.raises(ValueError, match=rf"^{variable}={re.escape(repr(raw))} {message}$"):
        KeepaliveSettings.from_environment({variable: raw})


def test_an_adopters_own_variables_read_with_its_prefix(logs: pytest.LogCaptureFixture) -> None:
    # A server's own configuration, validated by the package, its errors naming its keys.
    config = {"MYSERVER_TCP_IDLE": "45", "MYSERVER_TCP_COUNT": "6", "MYSERVER_PORT": "80"}
    settings = KeepaliveSettings.from_environment(config, prefix="MYSERVER_TCP_")
    assert settings == KeepaliveSettings(idle=45, count=6)
    assert logs.records == []
    with pytest.raises(
        ValueError, match=r"^MYSERVER_TCP_IDLE='99999' is out of range: 1 to 32767 seconds$"
    ):
        KeepaliveSettings.from_environment({"MYSERVER_TCP_IDLE": "99999"}, prefix="MYSERVER_TCP_")


def test_blanks_around_the_digits_are_allowed() -> None:
    environ = {"UVICORN_KEEPALIVE_IDLE": "\t30\n", "UVICORN_KEEPALIVE_COUNT": " 007 "}
    assert KeepaliveSettings.from_environment(environ) == KeepaliveSettings(idle=30, count=7)


def test_an_unknown_variable_is_warned_about_naming_the_known_ones(
    logs: pytest.LogCaptureFixture,
) -> None:
    logs.set_level(logging.WARNING, logger=LOGGER)
    environ = {"UVICORN_KEEPALIVE_IDEL": "30", "UVICORN_KEEPALIVE_COUNT": "4", "UVICORN_X": "1"}
    assert KeepaliveSettings.from_environment(environ) == KeepaliveSettings(count=4)
    [record] = logs.records
    assert record.getMessage() == (
        "UVICORN_KEEPALIVE_IDEL is not a setting and is ignored; the settings "
        "are UVICORN_KEEPALIVE_IDLE, UVICORN_KEEPALIVE_INTERVAL, UVICORN_KEEPALIVE_COUNT, "
        "UVICORN_KEEPALIVE_USER_TIMEOUT, UVICORN_KEEPALIVE_NODELAY"
    )


def test_given_settings_never_take_a_variable(environ: Callable[..., None]) -> None:
    environ(UVICORN_KEEPALIVE_IDLE="15", UVICORN_KEEPALIVE_USER_TIMEOUT="70000")
    assert protocol().keepalive == KeepaliveSettings(idle=15, user_timeout=70000)
    # An explicit 60 is explicit, even though it equals the default.
    assert protocol(idle=60, count=5).keepalive == KeepaliveSettings(count=5)
    assert protocol(KeepaliveSettings()).keepalive == KeepaliveSettings()
    assert protocol(interval=6).keepalive.user_timeout is None


def test_fields_replace_those_of_the_given_settings() -> None:
    base = KeepaliveSettings(idle=20, interval=4, user_timeout=90_000)
    assert protocol(base, count=5, nodelay=False).keepalive == KeepaliveSettings(
        20, 4, 5, 90_000, nodelay=False
    )
    with pytest.raises(ValueError, match=r"^count=0 is out of range: 1 to 127 probes$"):
        protocol(base, count=0)
    with pytest.raises(TypeError, match=r"^settings must be a KeepaliveSettings .*, got 30$"):
        protocol(30)  # type: ignore[call-overload]


def test_protocol_rejects_bad_values_when_called() -> None:
    with pytest.raises(ValueError, match=r"^interval=0 is out of range: 1 to 32767 seconds$"):
        protocol(interval=0)


class OwnProtocol(HttpToolsProtocol):
    """A server's own protocol class, derived from uvicorn's."""


@pytest.mark.parametrize("http", ["h11", "httptools", "auto", "zttp", "app:Protocol", OwnProtocol])
def test_a_bad_setting_raises_whatever_http_is(http: str | type[asyncio.Protocol]) -> None:
    with pytest.raises(ValueError, match=r"^count=0 is out of range: 1 to 127 probes$"):
        protocol(count=0, http=http)


def test_http_names_and_uvicorn_classes_get_keepalive() -> None:
    settings = KeepaliveSettings(idle=27)
    httptools, h11 = protocol(settings), protocol(settings, http="h11")
    assert issubclass(httptools, uvicorn_keepalive.Protocol)
    assert issubclass(h11, uvicorn_keepalive.H11Protocol)
    assert protocol(settings, http=HttpToolsProtocol) is httptools
    assert protocol(settings, http=UvicornH11Protocol) is h11
    # "auto" is what uvicorn's "auto" is: httptools, a dependency of this package.
    assert protocol(settings, http="auto") is httptools


def test_auto_is_resolved_by_uvicorns_own_table() -> None:
    # Without httptools, uvicorn's "auto" is h11 (uvicorn/protocols/http/auto.py): hidden
    # here after the package imported it, before uvicorn's "auto" module is imported.
    script = (
        "import sys, uvicorn_keepalive\n"
        "sys.modules['httptools'] = None\n"
        "cls = uvicorn_keepalive.protocol(idle=31, http='auto')\n"
        "print(cls.__name__, issubclass(cls, uvicorn_keepalive.H11Protocol))\n"
    )
    result = run("-c", script)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == "H11Protocol(idle=31, interval=10, count=3, nodelay=True) True\n"


def test_a_class_of_the_package_is_kept_with_its_own_settings() -> None:
    own = protocol(idle=41)
    assert protocol(idle=42, http=own) is own
    assert protocol(idle=42, http=uvicorn_keepalive.H11Protocol) is uvicorn_keepalive.H11Protocol


@pytest.mark.parametrize("http", ["zttp", OwnProtocol])
def test_another_protocol_is_kept_without_keepalive_and_said(
    http: str | type[asyncio.Protocol], logs: pytest.LogCaptureFixture
) -> None:
    logs.set_level(logging.WARNING, logger=LOGGER)
    assert protocol(idle=43, http=http) is http
    [record] = logs.records
    assert record.getMessage() == (
        f"TCP keepalive: http={http!r} is neither httptools nor h11: served without"
    )


def test_an_import_string_is_left_to_uvicorn(logs: pytest.LogCaptureFixture) -> None:
    logs.set_level(logging.DEBUG, logger=LOGGER)
    assert protocol(idle=44, http="uvicorn_keepalive:Protocol") == "uvicorn_keepalive:Protocol"
    assert protocol(idle=44, http="no_such_module:Nothing") == "no_such_module:Nothing"
    assert logs.records == []


def test_the_typed_keywords_follow_the_options_table() -> None:
    # A new option is its row, a field of KeepaliveSettings; the typed keywords must follow.
    rows = typing.get_type_hints(KeepaliveSettings)
    assert list(rows) == [option.name for option in OPTIONS]
    assert rows == typing.get_type_hints(Fields)  # names and types


ROOT = Path(__file__).parents[2]
PAGES = ["uvicorn_keepalive/README.md", "docs/keepalive.md"]


@pytest.mark.parametrize("page", PAGES)
def test_the_documented_variables_are_the_options_table(page: str) -> None:
    # The page's table of variables: a row per option, in order, with its range and default.
    text = (ROOT / page).read_text()
    rows = re.findall(r"^\| `(UVICORN_KEEPALIVE_\w+)` \|.*\| (.+) \| (.+) \|$", text, re.M)
    documented = []
    for option in OPTIONS:
        switch = isinstance(option.default, bool)
        default = {None: "off", True: "1", False: "0"}.get(option.default, str(option.default))
        documented.append(
            (
                f"UVICORN_KEEPALIVE_{option.name.upper()}",
                "0 or 1" if switch else f"1 to {option.high}",
                default,
            )
        )
    assert rows == documented


@pytest.mark.parametrize("page", PAGES)
def test_the_documented_constants_are_the_options_table(page: str) -> None:
    # The platforms table: Linux's row names each keepalive option's constant, in order
    # (TCP_NODELAY has a section of its own), macOS's row its own names.
    text = (ROOT / page).read_text()
    rows = dict(re.findall(r"^\| (Linux|macOS) \|(.*)\|$", text, re.M))
    linux = [name for name in re.findall(r"`(\w+)`", rows["Linux"]) if name != "SO_KEEPALIVE"]
    assert linux == [option.constants[0] for option in OPTIONS if option.name != "nodelay"]
    macos = {name for option in OPTIONS for name in option.constants[1:]}
    assert macos <= set(re.findall(r"`(\w+)`", rows["macOS"]))


def test_without_settings_a_bad_variable_is_raised_when_called(
    environ: Callable[..., None],
) -> None:
    environ(UVICORN_KEEPALIVE_COUNT="200")
    with pytest.raises(ValueError, match=r"^UVICORN_KEEPALIVE_COUNT='200' is out of range"):
        protocol()
    # Given settings read no variable.
    assert protocol(count=4).keepalive == KeepaliveSettings(count=4)


def test_making_a_class_says_nothing(logs: pytest.LogCaptureFixture) -> None:
    # The settings line is said by a class's first connection only (test_server.py).
    logs.set_level(logging.DEBUG, logger=LOGGER)
    protocol(idle=25, count=4)
    protocol(idle=25, count=4, http="h11")
    assert logs.records == []


def run(*args: str, **environment: str) -> subprocess.CompletedProcess[str]:
    """Run ``python *args`` with these UVICORN_KEEPALIVE_* variables (only)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("UVICORN_KEEPALIVE_")}
    return subprocess.run(
        [sys.executable, *args],
        env={**env, **environment},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_environment_is_read_once_per_process() -> None:
    script = (
        "from uvicorn_keepalive import protocol, socket_options\n"
        "for _ in range(5):\n"
        "    assert socket_options()[1][2] == 33\n"
        "    assert protocol().keepalive.idle == 33\n"
    )
    result = run("-c", script, UVICORN_KEEPALIVE_IDLE="33", UVICORN_KEEPALIVE_INTERAVL="5")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("UVICORN_KEEPALIVE_INTERAVL is not a setting") == 1, result.stderr


def test_importing_with_a_bad_variable_ends_no_process_that_gives_its_settings() -> None:
    script = (
        "import uvicorn_keepalive\n"
        "from uvicorn_keepalive import KeepaliveSettings, protocol, socket_options\n"
        "assert socket_options(idle=30)[1][2] == 30\n"
        "assert protocol(KeepaliveSettings()).keepalive == KeepaliveSettings()\n"
        "try:\n"
        "    socket_options()\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
    )
    result = run("-c", script, UVICORN_KEEPALIVE_IDLE="0")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == "UVICORN_KEEPALIVE_IDLE='0' is out of range: 1 to 32767 seconds\n"


@pytest.mark.parametrize("name", ["Protocol", "H11Protocol"])
def test_looking_up_a_public_class_with_a_bad_variable_exits_3(name: str) -> None:
    # What uvicorn's --http uvicorn_keepalive:Protocol does at startup, in each worker.
    script = f"import uvicorn_keepalive\nuvicorn_keepalive.{name}\n"
    result = run("-c", script, UVICORN_KEEPALIVE_COUNT="0")
    assert result.returncode == 3
    assert result.stderr == "UVICORN_KEEPALIVE_COUNT='0' is out of range: 1 to 127 probes\n"


def check(**environment: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m uvicorn_keepalive --check`` with these variables (only)."""
    return run("-m", "uvicorn_keepalive", "--check", **environment)


def test_check_prints_the_settings_the_environment_gives() -> None:
    defaults = check()
    assert (defaults.returncode, defaults.stderr) == (0, "")
    assert defaults.stdout == "TCP keepalive: idle=60, interval=10, count=3, nodelay=True\n"
    tuned = check(
        UVICORN_KEEPALIVE_IDLE="42",
        UVICORN_KEEPALIVE_USER_TIMEOUT="300000",
        UVICORN_KEEPALIVE_NODELAY="0",
    )
    assert tuned.returncode == 0
    assert tuned.stdout == (
        "TCP keepalive: idle=42, interval=10, count=3, user_timeout=300000, nodelay=False\n"
    )


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("UVICORN_KEEPALIVE_IDLE", "0", "is out of range: 1 to 32767 seconds"),
        ("UVICORN_KEEPALIVE_NODELAY", "on", "must be 1 or 0"),
    ],
)
def test_check_names_a_bad_variable_and_exits_3(variable: str, value: str, message: str) -> None:
    # Status 3 is uvicorn's and gunicorn's "failed to start", on which they stop.
    result = check(**{variable: value})
    assert result.returncode == 3
    assert result.stderr == f"{variable}={value!r} {message}\n"
    assert result.stdout == ""


def test_check_is_the_only_command() -> None:
    result = run("-m", "uvicorn_keepalive")
    assert result.returncode == 1
    assert result.stderr.startswith("usage: python -m uvicorn_keepalive --check\n")


def test_settings_pickle() -> None:
    settings = KeepaliveSettings(1, 2, 3, 4000)
    assert pickle.loads(pickle.dumps(settings)) == settings


def test_public_names() -> None:
    assert uvicorn_keepalive.__all__ == sorted(uvicorn_keepalive.__all__)
    assert uvicorn_keepalive.__version__ == "0.1.0.dev0"
    for name in uvicorn_keepalive.__all__:
        assert getattr(uvicorn_keepalive, name) is not None
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = uvicorn_keepalive.nope  # type: ignore[attr-defined]
