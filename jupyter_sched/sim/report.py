"""Figures of simulation results (plotly): allocation vs arrived demand, queue length, utilisation.

Each function returns a ``plotly.graph_objects.Figure``; write it with ``fig.write_html(path)``
(self-contained, no network needed to view it when ``include_plotlyjs=True``).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go

__all__ = ["allocation_figure", "queue_figure", "utilization_figure"]


def allocation_figure(curves: Mapping[str, pd.Series], published: Mapping[str, pd.Series] | None = None,
                      title: str = "GPU allocation ratio vs arrived GPU demand") -> go.Figure:
    """Allocation ratio (%) against arrived demand (% of capacity), one line per policy.

    Args:
        curves: policy -> series indexed by arrived demand (%), values allocation (%).
        published: optional policy -> published series, drawn dashed.
        title: figure title.
    """
    fig = go.Figure()
    for name, series in curves.items():
        fig.add_trace(go.Scatter(x=list(series.index), y=list(series.values), mode="lines", name=name))
    for name, series in (published or {}).items():
        fig.add_trace(go.Scatter(x=list(series.index), y=list(series.values), mode="lines",
                                 name=f"{name} (published)", line={"dash": "dash"}))
    fig.update_layout(title=title, xaxis_title="arrived GPU demand (% of capacity)",
                      yaxis_title="GPU allocation ratio (%)")
    return fig


def queue_figure(timeseries: pd.DataFrame, title: str = "Queue length over time") -> go.Figure:
    """Pending and running jobs against simulated time (hours) from a ``SimResult.timeseries``."""
    hours = timeseries["t_s"] / 3600.0
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=hours, y=timeseries["pending"], mode="lines", name="pending", line_shape="hv"))
    fig.add_trace(go.Scatter(x=hours, y=timeseries["running"], mode="lines", name="running", line_shape="hv"))
    fig.update_layout(title=title, xaxis_title="time (h)", yaxis_title="jobs")
    return fig


def utilization_figure(timeseries: pd.DataFrame, title: str = "GPU allocation over time") -> go.Figure:
    """Allocated GPUs as % of capacity against simulated time (hours)."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=timeseries["t_s"] / 3600.0, y=timeseries["utilization_pct"], mode="lines",
                             name="allocated", line_shape="hv"))
    fig.update_layout(title=title, xaxis_title="time (h)", yaxis_title="GPUs allocated (% of capacity)",
                      yaxis_range=[0, 105])
    return fig
