"""Merge a partial run into earlier results, and tell whether hand-written notes are current."""

import copy
from typing import Any

#: Where each suite's measurements live in the results.
SUITE_KEYS: dict[str, tuple[str, ...]] = {
    "serialization": ("suites", "serialization"),
    "keepalive": ("suites", "keepalive"),
    "streaming": ("suites", "streaming"),
    "inprocess": ("inprocess",),
    "connections": ("connection_cost",),
}


def merge(earlier: dict[str, Any], later: dict[str, Any], suites: set[str]) -> dict[str, Any]:
    """Return ``earlier`` with the measurements of ``suites`` replaced by those of ``later``.

    The merged results keep the earlier run's command, machine description and start time,
    and list each update (suites, command, start time, load average, git commit, the
    package versions that differ from the earlier run's) under ``updates``, so that the
    report says which figures come from which run (an earlier update is dropped once all
    its suites are measured again).

    Raises:
        ValueError: The two runs used different profiles (full and quick do not mix).
    """
    if earlier["profile"] != later["profile"]:
        raise ValueError(
            f"cannot update {earlier['profile']} results with a {later['profile']} run"
        )
    merged = copy.deepcopy(earlier)
    # An earlier update whose suites are all measured again no longer describes any figure.
    kept = []
    for update in merged.get("updates", []):
        update["suites"] = [suite for suite in update["suites"] if suite not in suites]
        if update["suites"]:
            kept.append(update)
    merged["updates"] = kept
    for suite in sorted(suites):
        *parents, key = SUITE_KEYS[suite]
        source, target = later, merged
        for parent in parents:
            source, target = source[parent], target.setdefault(parent, {})
        target[key] = copy.deepcopy(source[key])
    merged["updates"].append(
        {
            "suites": sorted(suites),
            "command": later["command"],
            "started_at": later["started_at"],
            "elapsed_s": later.get("elapsed_s"),
            "git_commit": later["machine"]["git_commit"],
            "load_average_at_start": later["machine"]["load_average_at_start"],
            "load_average_at_end": later["machine"].get("load_average_at_end"),
            "packages": {
                name: version
                for name, version in later["machine"].get("packages", {}).items()
                if earlier["machine"].get("packages", {}).get(name) != version
            },
        }
    )
    return merged


def latest_run(results: dict[str, Any]) -> str:
    """Return the start time of the latest run the results contain figures from."""
    times: list[str] = [results["started_at"]]
    times += [update["started_at"] for update in results.get("updates", [])]
    return max(times)


def notes_are_current(notes: str, results: dict[str, Any]) -> bool:
    """Whether ``notes`` name the latest run's start time (they were written for it)."""
    return latest_run(results) in notes
