"""Updating displays for waits and live charts: ipywidgets where available, text otherwise.

Set ``JUPYTER_SCHED_WIDGETS=0`` in the kernel's environment to force plain text (e.g. for
frontends without widget support). Final results are always also printed as text lines, so
headless runs (nbclient, ``jupyter execute``) keep a readable record.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ..wording import WaitProgress

__all__ = ["BarOutcome", "LiveFigure", "Progress", "show", "text_bar", "wait_outcome", "widgets_enabled"]

BarOutcome = Literal["success", "danger", "warning"]
"""How a wait ended, as its bar's colour (``ipywidgets`` bar styles): :meth:`Progress.finish`."""


def wait_outcome(ended: bool) -> BarOutcome:
    """The colour of a wait whose work ended as asked (``ended``: a job succeeded, a lease was granted or given
    back) or not (failed, cancelled, preempted out)."""
    return "success" if ended else "danger"


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
    """A progress bar that updates in place while the cell waits: the frames of
    :func:`jupyter_sched.wording.wait_progress`, the same ones ``jupyter-sched wait`` draws with tqdm.

    With widgets: an ``ipywidgets.FloatProgress`` (0..1; hidden while the fraction is unknown) and
    an ``HTML`` label in one row. Without: one text line through an IPython display handle
    (``[#####-----] waited 5m of ~10m · job j-7 · queued #1 · … · ETA 19:42 UTC (in 5m)``), which JupyterLab also updates
    in place. :meth:`finish` leaves a short "waited" note: the caller prints the final line itself,
    so a headless record shows it once. The widget row is shown through a display handle too, so
    that :meth:`finish` also replaces its ``text/plain``: a notebook saved by ``nbconvert --execute``
    (or reopened without the widgets' state) reads the note, not the first frame's ``queued ·
    waited 0s`` above the outcome (new user 15, N15).

    Args:
        title: what is waited for, e.g. ``job j-7`` (prefixes every label).
    """

    WIDTH = 20

    def __init__(self, title: str) -> None:
        self.title = title
        self._bar: Any = None
        self._label: Any = None
        self._handle: Any = None
        self._bundle: dict[str, Any] = {}

    @staticmethod
    def _html(text: str) -> str:
        return f"<code>{html.escape(text)}</code>"

    def _open(self, text: str) -> None:
        """Display the bar on first use, its ``text/plain`` being ``text`` (what a headless run
        records, instead of the widget's ``HBox(children=...)`` repr)."""
        if widgets_enabled():
            import ipywidgets

            self._bar = ipywidgets.FloatProgress(value=0.0, min=0.0, max=1.0, bar_style="info",
                                                 layout=ipywidgets.Layout(width="30%"))
            self._label = ipywidgets.HTML(value=self._html(text))
            bundle = dict(ipywidgets.HBox([self._bar, self._label])._repr_mimebundle_() or {})
            bundle["text/plain"] = text
            self._bundle = bundle
            self._handle = show(bundle, raw=True, display_id=True)
        else:
            self._handle = show({"text/plain": text}, raw=True, display_id=True)

    def show(self, frame: WaitProgress, waited_s: float) -> None:
        """Draw ``frame`` after ``waited_s`` seconds of waiting: the bar, what its fill is (the frame's
        gauge, ``12 % done``: never a bare percentage, newuser23 N18), then the title and the frame's
        first line — the words ``jupyter-sched wait`` draws on a wide terminal (newuser23 N4: one renderer)."""
        label = f"{self.title} · {frame.bar_lines[0]}"  # what blocks it before the ETA, as in every reason line
        if frame.phase == "queued" and not frame.gauge:  # a running frame counts its run time, a gauge its wait
            label += f" · waited {waited_s:.0f}s"
        if frame.gauge and frame.fraction is not None:
            label = f"{frame.gauge} · {label}"
        if self._bar is None and self._handle is None:
            self._open(label)
        if self._bar is not None:
            self._bar.layout.visibility = "hidden" if frame.fraction is None else "visible"
            self._bar.value = frame.fraction or 0.0
            self._label.value = self._html(label)
        elif self._handle is not None:
            self._handle.update({"text/plain": text_bar(frame.fraction, self.WIDTH) + " " + label}, raw=True)

    def finish(self, waited_s: float, outcome: BarOutcome = "success") -> None:
        """End the bar with ``<title>: waited 12s``; the caller prints the outcome. Its colour says how the wait
        ended (newuser33 n3: a full green bar stood beside "failed"): ``success`` (green, full) for what ended as
        asked (a job succeeded, a lease granted), ``danger`` (red, full) for an end that was not (failed, cancelled,
        preempted out), ``warning`` (orange, its fill as far as it got) for a ``--for`` that ran out first."""
        note = f"{self.title}: waited {waited_s:.0f}s"
        if self._bar is not None:
            self._bar.layout.visibility = "visible"
            if outcome != "warning":
                self._bar.value = 1.0
            self._bar.bar_style = outcome
            self._label.value = self._html(note)
        if self._handle is not None:  # the widget's row keeps its view; its text/plain is the note
            self._handle.update({**self._bundle, "text/plain": note}, raw=True)


def text_bar(fraction: float | None, width: int) -> str:
    """``[#####-----]`` for a known fraction, ``[   ...    ]`` while it is unknown. No number: what the
    fill is follows it in words (the frame's gauge, ``12 % done``, ``waited 10s of ~1m``; newuser23 N18:
    a bare ``15%`` of the wait read as the job's own progress)."""
    if fraction is None:
        return "[" + "...".center(width) + "]"
    filled = round(max(0.0, min(1.0, fraction)) * width)
    return f"[{'#' * filled}{'-' * (width - filled)}]"


class LiveFigure:
    """A plotly chart of utilization (%) and memory (MiB) per GPU over time, updated in place.

    ``plotly.graph_objects.FigureWidget`` when widgets are enabled (needs anywidget), else a
    static ``go.Figure`` re-rendered through a display handle.
    """

    def __init__(self, uuids: Sequence[str], title: str) -> None:
        try:
            import plotly.graph_objects as go
        except ModuleNotFoundError as exc:
            from ..extras import install_extra

            raise ModuleNotFoundError(f"%gpu watch draws with plotly: {install_extra('lab')}",
                                      name=exc.name) from None
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
        """Redraw from ``history[uuid] = [{"t", "utilization_pct", "memory_used_mib", "validity", "display"}, ...]``.

        A sample that is not ``valid`` (blank or suspect, e.g. a latched 100 %) is drawn as a gap,
        with its note (``100 % (suspect: no process, 0 MiB)``) as the point's hover text (case 026)."""
        fig = self.figure
        for i, uuid in enumerate(self.uuids):
            points = history.get(uuid, ())
            xs = [p["t"] for p in points]
            fig.data[2 * i].x, fig.data[2 * i].y = xs, [
                p.get("utilization_pct") if p.get("validity", "valid") == "valid" else None for p in points]
            fig.data[2 * i].connectgaps = False
            fig.data[2 * i].text = [p.get("display", "") if p.get("validity", "valid") != "valid" else ""
                                    for p in points]
            fig.data[2 * i + 1].x, fig.data[2 * i + 1].y = xs, [p.get("memory_used_mib") for p in points]
        if self._handle is not None:
            self._handle.update(fig)
