"""docs/dispatch.md's table of FastAPI releases is the table of `orjson_dispatch._fastapi`.

Every name the module exports is in the table, every name the table gives exists, and every
release a function's code names is in its row: a branch added or dropped shows in the docs.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from orjson_dispatch import _fastapi

GUIDE = Path(__file__).parents[2] / "docs" / "dispatch.md"
RELEASE = re.compile(r"\b0\.\d+(?:\.\d+)?\b")


def _table() -> dict[str, set[str]]:
    """The releases of each `_fastapi` name, from the rows of the guide's table."""
    text = GUIDE.read_text()
    table = text[text.index("| FastAPI | Change followed | Where |") :].split("\n\n")[0]
    releases: dict[str, set[str]] = {}
    for row in table.splitlines()[2:]:
        first, _, where = row.strip("|").split(" | ")
        for name in re.findall(r"`_fastapi\.(\w+)`", where):
            releases.setdefault(name, set()).update(RELEASE.findall(first))
    return releases


def test_the_table_names_every_export_and_only_exports() -> None:
    assert sorted(_table()) == sorted(_fastapi.__all__)


def test_each_release_a_function_names_is_in_its_row() -> None:
    table = _table()
    for name in _fastapi.__all__:
        value = getattr(_fastapi, name)
        if inspect.isfunction(value):
            named = set(RELEASE.findall(inspect.getsource(value)))
            assert named <= table[name], f"_fastapi.{name} names {named - table[name]}"
