"""The command line: a missing setup named, suites checked, summaries from result files."""

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.cli import RESULTS, SUITES, load_results, main
from tests.paths import ROOT


def test_a_missing_dependency_names_the_setup_instead_of_a_traceback() -> None:
    hide_h11 = (
        "import runpy, sys; sys.modules['h11'] = None; "
        "runpy.run_module('benchmarks', run_name='__main__')"
    )
    completed = subprocess.run(
        [sys.executable, "-c", hide_h11], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert completed.returncode == 1
    assert "h11 is not installed" in completed.stderr
    assert "scripts/bootstrap dev docs bench" in completed.stderr
    assert "Traceback" not in completed.stderr


def test_unknown_suites_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--only", "serialization,nothing"])
    assert "unknown suites ['nothing']" in capsys.readouterr().err


def test_render_prints_the_summary_of_the_committed_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in SUITES:
        (tmp_path / f"{name}.json").write_bytes((RESULTS / "quick" / f"{name}.json").read_bytes())
    assert set(load_results(tmp_path)) == set(SUITES)
    before = {path: path.stat().st_mtime_ns for path in tmp_path.parent.rglob("*")}
    status = tracked_outputs()
    assert main(["--render", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    titles = ("Serialization over HTTP", "Request bodies", "in process", "Streaming", "TCP keep")
    for title in (*titles, "Stalled readers", "generic -> Response", "first answer"):
        assert title in printed
    # It writes nothing: not beside the results, not into the tracked tree.
    assert {path: path.stat().st_mtime_ns for path in tmp_path.parent.rglob("*")} == before
    assert main(["--render", str(tmp_path), "--plots", str(tmp_path / "plots")]) == 0
    drawn = {p.name for p in (tmp_path / "plots").iterdir()}
    assert drawn == {"serialization.png", "streaming.png"}
    assert tracked_outputs() == status


def tracked_outputs() -> dict[Path, int]:
    """The files where plots and results went before: the docs' assets and the results."""
    places = [ROOT / "docs", RESULTS]
    return {path: path.stat().st_mtime_ns for place in places for path in place.rglob("*")}
