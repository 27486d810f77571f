"""pytest plugin: the garbage collector's full collections put off, the collected tests frozen.

Loaded by our own suite (tests/conftest.py) and by every run of FastAPI's (suite_runner.py).
Full collections come after ``FULL_COLLECTION_THRESHOLD`` collections of the middle generation
instead of CPython's 10, and once the tests are collected everything alive is frozen
(``gc.freeze``: the imported modules, the SDKs' model classes, the strategies and the apps the
test modules build, which live as long as the process). The imports, then the tests' own
transient data (JSON bodies of megabytes, hypothesis' examples, FastAPI apps per test) otherwise
set off a full collection every few tests, each walking every object of the process: 17% of the
CPU time of the property and SDK tests, 11% of FastAPI's suite, 15% of a collection. The young
generations, which free most cycles, run as before, and ``gc.collect()`` still collects
everything that is not frozen, so a test that needs the garbage gone gets it.
"""

from __future__ import annotations

import gc

import pytest

#: Full collections after this many collections of the middle generation (CPython: 10).
FULL_COLLECTION_THRESHOLD = 1000


def pytest_configure(config: pytest.Config) -> None:
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_THRESHOLD)


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.freeze()  # https://docs.python.org/3/library/gc.html#gc.freeze
