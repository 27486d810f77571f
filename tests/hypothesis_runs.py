"""The one place that sizes hypothesis runs: its profiles and each test's example count.

``tests/conftest.py`` registers the profiles and loads the one ``HYPOTHESIS_PROFILE`` names;
every ``@settings(max_examples=...)`` is ``examples(count)``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings


def register_profiles() -> None:
    """Register the hypothesis profiles and load the one ``HYPOTHESIS_PROFILE`` names.

    ``default`` is what CI runs, derandomized so that a run's outcome depends only on the code
    (every run draws the same examples); ``thorough`` multiplies every test's example count by
    ten and draws new examples on every run (a long local run that explores); ``floor`` takes a
    quarter of the examples, also derandomized, for the run on the lowest supported versions
    (``scripts/test-versions lowest``). Example counts are per test (``examples``); the profiles
    set what every test shares.
    """
    shared: dict[str, object] = {
        "deadline": None,
        # Generated model classes and whole FastAPI apps per example are slow and large by design.
        "suppress_health_check": [
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
            HealthCheck.large_base_example,
        ],
        "print_blob": True,
    }
    settings.register_profile("default", **shared, derandomize=True)  # type: ignore[arg-type]
    settings.register_profile("thorough", **shared)  # type: ignore[arg-type]
    settings.register_profile("floor", **shared, derandomize=True)  # type: ignore[arg-type]
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def examples(count: int) -> int:
    """A test's example count: ten times more under ``HYPOTHESIS_PROFILE=thorough``, a quarter
    (at least 25, never more than ``count``) under ``HYPOTHESIS_PROFILE=floor``, the run on the
    lowest supported versions, which checks the version branches once the full run has checked
    the rules."""
    profile = os.environ.get("HYPOTHESIS_PROFILE")
    if profile == "thorough":
        return count * 10
    if profile == "floor":
        return max(min(25, count), count // 4)
    return count
