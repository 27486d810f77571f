"""pytest plugin: the garbage collector's full collections put off for the whole run.

Loaded by our own suite (tests/conftest.py) and by every run of FastAPI's (suite_runner.py).
Full collections come after ``FULL_COLLECTION_THRESHOLD`` collections of the middle generation
instead of CPython's 10 (https://docs.python.org/3/library/gc.html#gc.set_threshold). The
imports, the SDKs' model classes, the strategies and the apps the test modules build are
hundreds of thousands of objects that live as long as the process; the tests' own transient
data (JSON bodies of megabytes, hypothesis' examples, FastAPI apps per test) set off a full
collection every few tests, each walking every one of them: 17% of the CPU time of the property
and SDK tests, 11% of FastAPI's suite, 15% of a collection. The young generations, which free
most cycles, run as before, and ``gc.collect()`` collects everything, so a test that needs the
garbage gone gets it. (Not ``gc.freeze``: ``gc.get_referrers`` misses frozen referrers, and
hypothesis' ``register_random`` then warns that a module's generator has none.)
"""

from __future__ import annotations

import gc

import pytest

#: Full collections after this many collections of the middle generation (CPython: 10).
FULL_COLLECTION_THRESHOLD = 1000


def pytest_configure(config: pytest.Config) -> None:
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_THRESHOLD)
