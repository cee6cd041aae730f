"""``benchmarks/jct_loaded.py``'s target line judges the ETA goal on both of its figures (issue 16, session 27).

Until session 26 the line read only the ETA error *without* progress reports ("target <= 15 % with the default:
NOT MET" at 17 %), printed nothing of the figure with them (11 %) and judged no JCT goal: a reader could not tell
which goals were met. :func:`jct_loaded.verdict` now names every goal with its figure and says MET only where
all are met."""

from __future__ import annotations


def test_issue16_s27_eta_target_line_reads_both_figures(jct_loaded) -> None:  # type: ignore[no-untyped-def]
    # session 26's final figures: JCT -35.3 % vs FIFO, +6.0 % vs SJF, coverage 100 %, ETA 16.7 % / 10.7 %
    line = jct_loaded.verdict(vs_fifo=-0.353, vs_sjf=0.060, coverage=1.0, without=0.167, with_=0.107)
    assert line.startswith("target (main replay, default profile): NOT MET")
    assert "without progress reports 16.7% (NOT met), with them 10.7% (met)" in line
    assert "-35.3% vs FIFO (met), +6.0% vs SJF (met)" in line
    assert "ETA coverage 100.0% (met)" in line

    every = jct_loaded.verdict(vs_fifo=-0.35, vs_sjf=0.06, coverage=1.0, without=0.149, with_=0.107)
    assert every.startswith("target (main replay, default profile): MET")
    assert "NOT met" not in every

    # a JCT goal missed is a verdict NOT MET whatever the ETA figures say
    slow = jct_loaded.verdict(vs_fifo=-0.30, vs_sjf=0.15, coverage=1.0, without=0.10, with_=0.10)
    assert slow.startswith("target (main replay, default profile): NOT MET")
    assert "+15.0% vs SJF (NOT met)" in slow
    # a figure that could not be measured is never met
    none = jct_loaded.verdict(vs_fifo=-0.35, vs_sjf=0.06, coverage=None, without=None, with_=0.10)
    assert "ETA coverage - (NOT met)" in none and "without progress reports - (NOT met)" in none
