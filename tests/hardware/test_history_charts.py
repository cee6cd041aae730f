"""History from stored rollups and the plotly figure: blank and suspect minutes are gaps with a
note, never numbers (cases 009, 026); rollups come from the real ring buffer."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from jupyter_sched.telemetry import parse_dcgm_text, rollup_minutes, rollup_to_dict
from jupyter_sched.telemetry.charts import utilization_figure, utilization_frame
from jupyter_sched.telemetry.history import history_from_rollups, history_to_dict
from jupyter_sched.telemetry.validity import validate_series

T0 = datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc)


def scrape(minute: int, util: str, fb: str = "20480") -> str:
    labels = 'gpu="0",UUID="GPU-aaaa",Hostname="n1"'
    return f"DCGM_FI_DEV_GPU_UTIL{{{labels}}} {util}\nDCGM_FI_DEV_FB_USED{{{labels}}} {fb}\n"


def rows() -> list[dict[str, object]]:
    """10 minutes: 5 valid, 2 blank (DCGM sentinel), 1 rejected (101 %), 2 valid; minute 10 missing."""
    readings = ["40", "50", "60", "70", "80", "9223372036854775792", "9223372036854775792", "101", "30", "20"]
    samples = [s for m, util in enumerate(readings)
               for s in parse_dcgm_text(scrape(m, util), received_at=T0 + timedelta(minutes=m)).samples]
    return [rollup_to_dict(r) for r in rollup_minutes(validate_series(samples))]


def test_blank_suspect_and_missing_minutes_are_gaps_with_their_reason() -> None:
    points, gaps = history_from_rollups(rows(), devices=[("GPU-aaaa", None)], since=T0, until=T0 + timedelta(minutes=11))
    assert [p.utilization_pct for p in points] == [40.0, 50.0, 60.0, 70.0, 80.0, None, None, None, 30.0, 20.0, None]
    assert [(g.start.minute, g.end.minute, g.label()) for g in gaps] == [
        (5, 7, "blank: DCGM blank value (no data)"), (7, 8, "suspect: outside 0-100 %"), (10, 11, "missing: no telemetry")]
    body = history_to_dict(points, gaps)
    assert all(p["utilization_pct"] is None or p["utilization_pct"] <= 100 for p in body["points"])


def test_the_figure_breaks_its_line_at_the_gap_and_labels_it() -> None:
    points, gaps = history_from_rollups(rows(), devices=[("GPU-aaaa", None)], since=T0, until=T0 + timedelta(minutes=10))
    frame = utilization_frame(history_to_dict(points, gaps)["points"])
    assert list(frame.columns) == ["time", "gpu_uuid", "mig_instance", "device", "utilization_pct", "memory_used_mib",
                                   "validity", "note"]
    assert frame["time"].dt.tz is not None and frame["utilization_pct"].isna().sum() == 3
    figure = utilization_figure(frame, title="job j-1")
    util = figure.data[0]
    assert util.connectgaps is False and pd.isna(util.y[5])
    labels = [a.text for a in figure.layout.annotations if (a.text or "").startswith(("blank", "suspect"))]
    assert labels == ["blank: DCGM blank value (no data)", "suspect: outside 0-100 %"]


def test_gpu_watch_draws_a_latched_sample_as_a_gap_with_its_note(monkeypatch: pytest.MonkeyPatch) -> None:
    from jupyter_sched.magics.display import LiveFigure
    from jupyter_sched.model.samples import GpuSample, Validity
    from jupyter_sched.telemetry import sample_to_dict

    monkeypatch.setenv("JUPYTER_SCHED_WIDGETS", "0")  # the static figure (no frontend here)
    latched = GpuSample(gpu_uuid="GPU-0", mig_instance=None, timestamp=T0, utilization_pct=100.0, memory_used_mib=0.0,
                        process_count=0, validity=Validity.SUSPECT, validity_rule="util_latch")
    busy = GpuSample(gpu_uuid="GPU-0", mig_instance=None, timestamp=T0, utilization_pct=60.0, memory_used_mib=512.0)
    figure = LiveFigure(["GPU-0"], "lease l-1")
    figure.update({"GPU-0": [{"t": T0, **sample_to_dict(busy)}, {"t": T0 + timedelta(seconds=1), **sample_to_dict(latched)}]})
    util = figure.figure.data[0]
    assert list(util.y) == [60.0, None] and util.connectgaps is False
    assert list(util.text) == ["", "100 % (suspect: no process, 0 MiB)"]


def test_a_live_history_at_five_seconds_shows_a_blank_span_as_a_gap() -> None:
    from jupyter_sched.telemetry.report import history_answer

    texts = ["50"] * 10 + ["9223372036854775792"] * 6 + ["70"] * 8  # 1 Hz: 10 s busy, 6 s blank, 8 s busy
    live = [s for k, util in enumerate(texts)
            for s in parse_dcgm_text(scrape(0, util), received_at=T0 + timedelta(seconds=k)).samples]
    body = history_answer([], live, devices=[("GPU-aaaa", None)], since=T0, until=T0 + timedelta(seconds=24),
                          step_s=5)
    assert [p["utilization_pct"] for p in body["points"]] == [50.0, 50.0, None, 70.0, 70.0]
    assert [(g["start"], g["end"], g["label"]) for g in body["gaps"]] == [
        ("2026-03-02T10:00:10Z", "2026-03-02T10:00:15Z", "blank: DCGM blank value (no data)")]
