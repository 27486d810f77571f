"""Building wrk command lines and parsing the summary its Lua hook prints."""

from pathlib import Path

import pytest

from benchmarks.runner import WrkError, parse_wrk_output, require_wrk, wrk_command

# What wrk prints with benchmarks/wrk_report.lua: its own report, then the JSON line.
OUTPUT = """\
Running 2s test @ http://127.0.0.1:40000/typed/tokens-32
  1 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     4.73ms    1.20ms  20.10ms   90.00%
  13248 requests in 2.00s, 60.10MB read
Requests/sec:   6624.10
BENCH_JSON {"requests":13248,"duration_us":2000000,"bytes":63020000,\
"errors":{"connect":0,"read":0,"write":0,"status":3,"timeout":1},\
"latency_us":{"mean":4730.5,"max":20100,"p50":4600,"p90":5800,"p99":9660}}
"""


def test_parse_reads_the_json_summary() -> None:
    result = parse_wrk_output(OUTPUT)
    assert result["requests"] == 13248
    assert result["duration_s"] == 2.0
    assert result["rps"] == pytest.approx(6624.0)
    assert result["errors"] == {"connect": 0, "read": 0, "write": 0, "status": 3, "timeout": 1}
    assert result["latency_us"]["p50"] == 4600
    assert result["latency_us"]["p99"] == 9660


def test_parse_without_summary_shows_the_output() -> None:
    with pytest.raises(WrkError, match=r"(?s)no summary line.*Running 2s test"):
        parse_wrk_output(OUTPUT.split("BENCH_JSON", maxsplit=1)[0])


def test_command_uses_one_thread_the_lua_hook_and_connection_close() -> None:
    command = wrk_command("wrk", "http://x/", connections=256, duration_s=3, timeout_s=40)
    assert command[:9] == ["wrk", "--threads", "1", "--connections", "256", "--duration", "3s",
                           "--timeout", "40s"]  # fmt: skip
    assert command[command.index("--script") + 1].endswith("wrk_report.lua")
    assert "Connection: close" not in command
    assert command[-1] == "http://x/"
    churn = wrk_command("wrk", "http://x/", connections=1, duration_s=1, timeout_s=1, close=True)
    assert churn[churn.index("--header") + 1] == "Connection: close"
    post = wrk_command("wrk", "http://x/", connections=1, duration_s=1, timeout_s=1,
                       posted=Path("/tmp/chat.json"))  # fmt: skip
    assert post[-2:] == ["http://x/", "/tmp/chat.json"]  # the Lua hook's init(args) reads it


def test_missing_wrk_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(WrkError, match=r"scripts/system-packages.*apt-get install wrk"):
        require_wrk()
