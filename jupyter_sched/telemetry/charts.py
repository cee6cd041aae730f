"""Utilization and memory over time as a pandas DataFrame and a plotly figure, gaps drawn as gaps.

:func:`utilization_frame` turns ``GET telemetry/history`` answers (or :class:`~.history.HistoryPoint`
lists) into a DataFrame, one row per device and minute; :func:`utilization_figure` draws it: one
line per device for utilization (%) and memory (MiB), lines broken (never interpolated) where a
minute has no valid reading, and each gap span shaded with its reason written on it
(``blank: DCGM blank value (no data)``, ``suspect: no process, 0 MiB``) — case 009/026: a rejected or
latched reading is never drawn as a number.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from .history import GapSpan, HistoryPoint

__all__ = ["FRAME_COLUMNS", "gaps_from_frame", "utilization_figure", "utilization_frame"]

FRAME_COLUMNS = ("time", "gpu_uuid", "mig_instance", "device", "utilization_pct", "memory_used_mib", "validity",
                 "note")
"""Columns of :func:`utilization_frame` (``time`` is tz-aware UTC; ``utilization_pct`` NaN in a gap)."""

_SHADE = {"blank": "rgba(128,128,128,0.18)", "suspect": "rgba(230,120,0,0.18)", "missing": "rgba(128,128,128,0.10)"}


def _device(uuid: str, mig: Any) -> str:
    return uuid if mig is None or mig != mig else f"{uuid}/{int(mig)}"


def utilization_frame(points: Iterable[HistoryPoint | Mapping[str, Any]]) -> pd.DataFrame:
    """One row per device and minute (:data:`FRAME_COLUMNS`), sorted by device and time.

    Accepts :class:`HistoryPoint` objects or the JSON points of ``GET telemetry/history``.
    """
    rows = []
    for p in points:
        if isinstance(p, HistoryPoint):
            data: Mapping[str, Any] = {"t": p.t, "gpu_uuid": p.gpu_uuid, "mig_instance": p.mig_instance,
                                       "utilization_pct": p.utilization_pct, "memory_used_mib": p.memory_used_mib,
                                       "validity": p.validity, "note": p.note}
        else:
            data = p
        rows.append({"time": data["t"], "gpu_uuid": data["gpu_uuid"], "mig_instance": data.get("mig_instance"),
                     "device": _device(str(data["gpu_uuid"]), data.get("mig_instance")),
                     "utilization_pct": data.get("utilization_pct"), "memory_used_mib": data.get("memory_used_mib"),
                     "validity": data.get("validity", "valid"), "note": data.get("note", "")})
    frame = pd.DataFrame(rows, columns=list(FRAME_COLUMNS))
    frame["time"] = pd.to_datetime(frame["time"], utc=True)
    for column in ("utilization_pct", "memory_used_mib"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return frame.sort_values(["device", "time"], kind="stable").reset_index(drop=True)


def gaps_from_frame(frame: pd.DataFrame) -> list[GapSpan]:
    """The gap spans of a frame: consecutive non-valid minutes of one device with one reason."""
    out: list[GapSpan] = []
    for _, rows in frame.groupby("device", sort=False):
        current: list[Any] | None = None
        for row in rows.itertuples():
            key = (row.validity, row.note)
            if current is not None and (row.validity == "valid" or (current[3], current[4]) != key):
                out.append(GapSpan(current[0], current[1], current[2], row.time.to_pydatetime(), current[3],
                                   current[4]))
                current = None
            if row.validity != "valid" and current is None:
                mig = None if row.mig_instance is None or row.mig_instance != row.mig_instance else int(row.mig_instance)
                current = [row.gpu_uuid, mig, row.time.to_pydatetime(), row.validity, row.note]
        if current is not None:
            end = rows["time"].iloc[-1] + pd.Timedelta(minutes=1)
            out.append(GapSpan(current[0], current[1], current[2], end.to_pydatetime(), current[3], current[4]))
    return out


def utilization_figure(frame: pd.DataFrame, *, gaps: Sequence[GapSpan] | None = None, title: str = "") -> Any:
    """A plotly figure: utilization (%) above, memory (MiB) below, one line per device, gaps shaded
    and labelled (module docstring).

    Args:
        frame: :func:`utilization_frame` output.
        gaps: the spans to shade (default: :func:`gaps_from_frame`).
        title: figure title.

    Returns:
        ``plotly.graph_objects.Figure``.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=("GPU utilization (%)", "GPU memory used (MiB)"))
    for device, rows in frame.groupby("device", sort=False):
        hover = [f"{v}: {n}" if v != "valid" else "" for v, n in zip(rows["validity"], rows["note"], strict=True)]
        fig.add_trace(go.Scatter(x=rows["time"], y=rows["utilization_pct"], mode="lines", name=f"{device} util",
                                 connectgaps=False, text=hover, hovertemplate="%{x}<br>%{y:.0f} %<br>%{text}"),
                      row=1, col=1)
        fig.add_trace(go.Scatter(x=rows["time"], y=rows["memory_used_mib"], mode="lines", name=f"{device} mem",
                                 connectgaps=False), row=2, col=1)
    for gap in gaps_from_frame(frame) if gaps is None else gaps:
        fig.add_vrect(x0=gap.start, x1=gap.end, fillcolor=_SHADE.get(gap.validity, _SHADE["blank"]), line_width=0,
                      layer="below", row=1, col=1, annotation_text=gap.label(), annotation_position="top left",
                      annotation_font_size=10)
    fig.update_yaxes(range=[0, 100], row=1, col=1)
    fig.update_layout(title=title or "GPU utilization and memory", height=480, hovermode="x unified")
    return fig
