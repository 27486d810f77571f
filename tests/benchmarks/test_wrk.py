"""wrk runs: its command line, the summary its Lua hook prints, and its failures."""

from pathlib import Path

import pytest

from benchmarks.keepalive import CONFIGS
from benchmarks.runner import WrkError, require_wrk, running, wrk


def test_a_run_reports_the_exact_counts_of_wrk_report_lua(tmp_path: Path) -> None:
    with running([CONFIGS[0]], tmp_path) as servers:
        url = f"http://127.0.0.1:{servers['stock'].port}/"
        found = wrk(require_wrk(), url, connections=2, duration_s=1, timeout_s=5, close=True)
    assert found["requests"] > 0
    assert found["rps"] == found["requests"] / found["duration_s"]
    assert 1 <= found["duration_s"] < 2
    assert found["errors"] == {"connect": 0, "read": 0, "write": 0, "status": 0, "timeout": 0}
    assert 0 < found["latency_us"]["p50"] <= found["latency_us"]["p99"]


def test_the_command_line_is_one_thread_the_lua_hook_close_and_the_posted_file() -> None:
    # echo prints the command line instead of a summary: the error shows it.
    with pytest.raises(WrkError, match="no summary line") as raised:
        wrk("echo", "http://x/", connections=256, duration_s=3, timeout_s=40)
    options = "--threads 1 --connections 256 --duration 3s --timeout 40s --script"
    assert options in str(raised.value)
    assert "wrk_report.lua http://x/\n" in str(raised.value)
    with pytest.raises(WrkError) as raised:
        wrk("echo", "u", connections=1, duration_s=1, timeout_s=1, close=True, posted=Path("p"))
    assert "--header Connection: close u p\n" in str(raised.value)  # init(args) reads p


def test_a_failed_run_shows_the_command() -> None:
    with pytest.raises(WrkError, match=r"false --threads 1 .* exited 1"):
        wrk("false", "http://x/", connections=1, duration_s=1, timeout_s=1)


def test_missing_wrk_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(WrkError, match=r"scripts/system-packages.*apt-get install wrk"):
        require_wrk()
