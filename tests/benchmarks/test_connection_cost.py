"""The in-process connection-cost measurement on real accepted connections."""

from benchmarks.analysis import connection_summary
from benchmarks.connection_cost import measure


def test_measures_both_protocols_on_every_loop() -> None:
    measured = measure(rounds=1, connections=20, log=lambda line: None)
    assert measured["connections"] == 20
    assert "asyncio" in measured["samples"]
    for by_protocol in measured["samples"].values():
        assert set(by_protocol) == {"stock", "keepalive"}
        assert all(len(values) == 1 and values[0] > 0 for values in by_protocol.values())
    summary = connection_summary(measured)
    for row in summary.values():
        assert row["delta"] == row["keepalive"] - row["stock"]
