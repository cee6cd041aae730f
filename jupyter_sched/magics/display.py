"""Updating displays for waits and live charts: ipywidgets where available, text otherwise.

Set ``JUPYTER_SCHED_WIDGETS=0`` in the kernel's environment to force plain text (e.g. for
frontends without widget support). Final results are always also printed as text lines, so
headless runs (nbclient, ``jupyter execute``) keep a readable record.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["LiveFigure", "Progress", "show", "widgets_enabled"]


def show(obj: Any, **kwargs: Any) -> Any:
    """``IPython.display.display`` with a type (returns the display handle when ``display_id=True``)."""
    from IPython.display import display

    return display(obj, **kwargs)  # type: ignore[no-untyped-call]


def widgets_enabled() -> bool:
    """True when ipywidgets imports and widgets are not switched off by ``JUPYTER_SCHED_WIDGETS=0``."""
    if os.environ.get("JUPYTER_SCHED_WIDGETS", "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True


class Progress:
    """A one-line status that updates in place while the cell waits.

    Uses an ``ipywidgets.HTML`` when widgets are enabled, else an IPython display handle
    (``display(..., display_id=True)`` + ``update``), which also updates in place in JupyterLab.
    """

    def __init__(self, text: str) -> None:
        self._widget: Any = None
        self._handle: Any = None
        if widgets_enabled():
            import ipywidgets

            self._widget = ipywidgets.HTML(value=self._html(text))
            show(self._widget)
        else:
            self._handle = show({"text/plain": text}, raw=True, display_id=True)

    @staticmethod
    def _html(text: str) -> str:
        return f"<code>{html.escape(text)}</code>"

    def update(self, text: str) -> None:
        """Replace the shown line with ``text``."""
        if self._widget is not None:
            self._widget.value = self._html(text)
        elif self._handle is not None:
            self._handle.update({"text/plain": text}, raw=True)


class LiveFigure:
    """A plotly chart of utilization (%) and memory (MiB) per GPU over time, updated in place.

    ``plotly.graph_objects.FigureWidget`` when widgets are enabled (needs anywidget), else a
    static ``go.Figure`` re-rendered through a display handle.
    """

    def __init__(self, uuids: Sequence[str], title: str) -> None:
        import plotly.graph_objects as go
        from plotly.subplots import make_subplots

        fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                            subplot_titles=("GPU utilization (%)", "GPU memory used (MiB)"))
        for uuid in uuids:
            fig.add_trace(go.Scatter(x=[], y=[], mode="lines+markers", name=f"{uuid} util"), row=1, col=1)
            fig.add_trace(go.Scatter(x=[], y=[], mode="lines+markers", name=f"{uuid} mem"), row=2, col=1)
        fig.update_layout(title=title, height=480, yaxis={"range": [0, 100]})
        self.uuids = list(uuids)
        self.widget: Any = None
        self._handle: Any = None
        self._fig = fig
        if widgets_enabled():
            try:
                self.widget = go.FigureWidget(fig)
            except ImportError:  # plotly >= 6 needs anywidget for FigureWidget
                self.widget = None
        if self.widget is not None:
            show(self.widget)
        else:
            self._handle = show(fig, display_id=True)

    @property
    def figure(self) -> Any:
        """The figure being shown (FigureWidget or Figure)."""
        return self.widget if self.widget is not None else self._fig

    def update(self, history: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        """Redraw from ``history[uuid] = [{"t", "utilization_pct", "memory_used_mib"}, ...]``."""
        fig = self.figure
        for i, uuid in enumerate(self.uuids):
            points = history.get(uuid, ())
            xs = [p["t"] for p in points]
            fig.data[2 * i].x, fig.data[2 * i].y = xs, [p.get("utilization_pct") for p in points]
            fig.data[2 * i + 1].x, fig.data[2 * i + 1].y = xs, [p.get("memory_used_mib") for p in points]
        if self._handle is not None:
            self._handle.update(fig)
