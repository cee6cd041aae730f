"""dcgm-exporter ``/metrics`` text → :class:`GpuSample` per GPU and per MIG instance.

The exposition text is parsed with ``prometheus_client.parser``. Rules (from the real captures in
``shared/data/telemetry/dcgm-exporter/samples`` and case 008):

1. A device is keyed by ``(UUID, GPU_I_ID)``: MIG instances share their parent's ``UUID``, so
   keying by UUID alone would merge two tenants (case 008; NVIDIA/dcgm-exporter#216).
2. For a MIG device (``GPU_I_PROFILE`` label set) utilization = ``DCGM_FI_PROF_GR_ENGINE_ACTIVE x
   100`` and ``DCGM_FI_DEV_GPU_UTIL`` is ignored (it is 0 or absent on MIG). Without a profiling
   metric the utilization is *unknown* (None) with the note
   :data:`~jupyter_sched.model.samples.UNKNOWN_MIG_UTILIZATION` — never 0 %.
3. For a whole GPU, utilization = ``DCGM_FI_DEV_GPU_UTIL``; ``GR_ENGINE_ACTIVE`` is kept as the
   activity fraction (the T4 capture shows 91 % util vs 0.156 engine activity).
4. Blank values are missing, not numbers: NaN/Inf, DCGM's int32/int64/fp64 blank sentinels
   (e.g. ``9223372036854775794``) and unparseable values (the A800 capture's
   ``ERROR - FAILED TO CONVERT TO STRING``). Unparseable value lines are reported in
   :attr:`DcgmScrape.bad_lines`; the rest of the scrape is used. The sample says which rule made
   its utilization blank (``validity_rule``: ``dcgm_blank``, ``nan``, ``no_signal``); a
   utilization outside 0..100 % (or an engine activity outside 0..1) is ``suspect`` /
   ``out_of_range`` and never used as a number (case 009).
7. Health evidence: ``DCGM_FI_DEV_XID_ERRORS`` (the last Xid, 0 = none) becomes ``GpuSample.xid``;
   ``DCGM_FI_DEV_ROW_REMAP_FAILURE`` = 1 and a non-zero ``DCGM_FI_DEV_ECC_DBE_VOL_TOTAL`` become
   ``health_flags`` (see :mod:`jupyter_sched.telemetry.health`).
5. Structurally broken text (garbage, a cut-off line, no final line feed, or no DCGM samples at all)
   raises :class:`~jupyter_sched.errors.TelemetryError`.
6. Empty ``pod``/``namespace``/``container`` labels mean "no pod"; ``Hostname`` tells hosts apart.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from ..errors import TelemetryError
from ..model.samples import UNKNOWN_MIG_UTILIZATION, GpuSample, Validity, classify_utilization
from .base import normalize_timestamp

__all__ = [
    "BadLine", "CounterField", "DcgmCollector", "DcgmScrape", "http_text_fetcher", "is_blank", "parse_counters_csv",
    "parse_dcgm_text", "samples_from_series",
]

# DCGM blank sentinels (dcgm_structs.h): DCGM_INT32_BLANK 0x7ffffff0, DCGM_INT64_BLANK
# 0x7ffffffffffffff0 and DCGM_FP64_BLANK 140737488355328.0 all lie at or above the int32 one.
_INT32_BLANK = 0x7FFFFFF0

_FIELDS = {
    "DCGM_FI_DEV_GPU_UTIL": "util",
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE": "gr",
    "DCGM_FI_DEV_FB_USED": "fb_used",
    "DCGM_FI_DEV_FB_FREE": "fb_free",
    "DCGM_FI_DEV_FB_RESERVED": "fb_reserved",
    "DCGM_FI_DEV_POWER_USAGE": "power",
    "DCGM_FI_DEV_GPU_TEMP": "temp",
    "DCGM_FI_DEV_XID_ERRORS": "xid",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": "row_remap_failure",
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": "ecc_dbe",
}
_HEALTH_FLAGS = {"row_remap_failure": "row remap failure", "ecc_dbe": "uncorrectable (double-bit) ECC errors"}


def is_blank(value: float) -> bool:
    """True when ``value`` is DCGM's "no data": NaN, ±Inf or a blank sentinel.

    Only applied to the gauges this parser reads (utilization %, MiB, W, °C, ratio), none of
    which can legitimately reach 2^31 - 16.
    """
    return math.isnan(value) or math.isinf(value) or value >= _INT32_BLANK


@dataclass(frozen=True, slots=True)
class BadLine:
    """A sample line whose value is not a number (kept out of the samples).

    Attributes:
        lineno: 1-based line number in the scrape.
        text: the line (truncated to 300 characters).
        error: the parser's complaint.
    """

    lineno: int
    text: str
    error: str


@dataclass(frozen=True, slots=True)
class DcgmScrape:
    """The result of parsing one scrape.

    Attributes:
        samples: one per device ``(UUID, GPU_I_ID)`` in order of first appearance.
        bad_lines: sample lines with unparseable values (reported, skipped).
        hosts: distinct ``Hostname`` label values.
    """

    samples: tuple[GpuSample, ...]
    bad_lines: tuple[BadLine, ...] = ()
    hosts: tuple[str, ...] = ()


@dataclass
class _Device:
    labels: dict[str, str]
    values: dict[str, float] = field(default_factory=dict)
    blank: dict[str, str] = field(default_factory=dict)  # field kind -> validity rule of its blank value
    timestamp: float | None = None


def _parse_line(line: str) -> tuple[str, dict[str, str], float, float | None]:
    """Parse one sample line with prometheus_client; raises ValueError."""
    for family in text_string_to_metric_families(line + "\n"):
        for sample in family.samples:
            ts = None if sample.timestamp is None else float(sample.timestamp)
            return sample.name, dict(sample.labels), float(sample.value), ts
    raise ValueError("no sample on line")


_FAST_LINE = re.compile(r"^(?P<name>DCGM_FI_[A-Za-z0-9_]+)\{(?P<labels>[^{}]*)\}\s+(?P<value>\S+)(?:\s+(?P<ts>-?\d+))?$")
_UUID_LABEL = re.compile(r'(?:^|,)\s*UUID="([^"\\]*)"')
_GI_LABEL = re.compile(r'(?:^|,)\s*GPU_I_ID="([^"\\]*)"')


def _fast_accumulate(devices: dict[tuple[str, int | None], _Device], line: str) -> bool:
    """Take a plain ``DCGM_FI_x{...} number [ms]`` line of a device already seen without the full
    Prometheus parser (its label parsing is most of a scrape's cost; the first line of each device,
    and any line that is not plain, still goes through it). Returns False when it did not."""
    match = _FAST_LINE.match(line)
    if match is None:
        return False
    uuid = _UUID_LABEL.search(match["labels"])
    if uuid is None:
        return False
    gi = _GI_LABEL.search(match["labels"])
    gi_text = gi.group(1) if gi else ""
    key = (uuid.group(1), int(gi_text) if gi_text.strip().isdigit() else None)
    if key not in devices:
        return False
    try:
        value = float(match["value"])
    except ValueError:
        return False  # the slow path reports the bad value with its line
    ts = None if match["ts"] is None else int(match["ts"]) / 1000.0
    _accumulate(devices, match["name"], devices[key].labels, value, ts)
    return True


def _split_value(line: str) -> tuple[str, str]:
    """Split ``name{labels} value [ts]`` into head and value text (value may be anything)."""
    brace = line.rfind("}")
    if brace >= 0:
        return line[: brace + 1], line[brace + 1:].strip()
    head, _, rest = line.partition(" ")
    return head, rest.strip()


def parse_dcgm_text(text: str, *, received_at: datetime) -> DcgmScrape:
    """Parse dcgm-exporter exposition text into one sample per device.

    Args:
        text: the ``/metrics`` body (Prometheus text format 0.0.4).
        received_at: when it was received (aware UTC); the samples' timestamp unless a line
            carries its own (clamped if in the future).

    Returns:
        :class:`DcgmScrape` with samples keyed by ``(UUID, GPU_I_ID)`` and the bad value lines.

    Raises:
        TelemetryError: text without a final line feed (truncated), a line that is not a
            Prometheus sample (garbage), or no ``DCGM_FI_*`` sample at all.
    """
    if not text.strip():
        raise TelemetryError("dcgm-exporter scrape is empty", hint="check the exporter URL and that it is running")
    if not text.endswith("\n"):
        tail = text.rsplit("\n", 1)[-1][:120]
        raise TelemetryError(f"dcgm-exporter scrape is truncated: last line {tail!r} has no line feed",
                             hint="the connection was probably cut; the previous samples are kept")
    devices: dict[tuple[str, int | None], _Device] = {}
    bad: list[BadLine] = []
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if _fast_accumulate(devices, line):
            continue
        try:
            name, labels, value, ts = _parse_line(line)
        except ValueError as exc:
            head, value_text = _split_value(line)
            try:
                _parse_line(f"{head} NaN")
            except ValueError:
                raise TelemetryError(
                    f"dcgm-exporter scrape line {lineno} is not a Prometheus sample: {line[:120]!r}",
                    hint="the body is not dcgm-exporter text (wrong URL?) or was cut off",
                    details={"line": lineno}) from None
            bad.append(BadLine(lineno, line[:300], f"value {value_text[:60]!r} is not a number ({exc})"))
            continue
        _accumulate(devices, name, labels, value, ts)
    if not devices:
        raise TelemetryError("dcgm-exporter scrape has no DCGM_FI_* sample with a UUID label",
                             hint="point the collector at dcgm-exporter's /metrics (port 9400 by default)")
    samples = tuple(_sample(key, dev, received_at) for key, dev in devices.items())
    hosts = tuple(dict.fromkeys(dev.labels.get("Hostname", "") for dev in devices.values() if dev.labels.get("Hostname")))
    return DcgmScrape(samples=samples, bad_lines=tuple(bad), hosts=hosts)


def samples_from_series(series: Iterable[tuple[str, Mapping[str, str], float, float | None]], *,
                        received_at: datetime) -> list[GpuSample]:
    """Build samples from already-parsed DCGM series ``(metric name, labels, value, timestamp s)``
    with the same rules as :func:`parse_dcgm_text` (used by the Prometheus API collector)."""
    devices: dict[tuple[str, int | None], _Device] = {}
    for name, labels, value, ts in series:
        _accumulate(devices, name, dict(labels), value, ts)
    return [_sample(key, dev, received_at) for key, dev in devices.items()]


def _accumulate(devices: dict[tuple[str, int | None], _Device], name: str, labels: dict[str, str], value: float,
                ts: float | None) -> None:
    uuid = labels.get("UUID", "")
    if not name.startswith("DCGM_FI_") or not uuid:
        return
    gi = labels.get("GPU_I_ID", "")
    key = (uuid, int(gi) if gi.strip().isdigit() else None)
    device = devices.setdefault(key, _Device(labels=labels))
    if ts is not None:
        device.timestamp = ts if device.timestamp is None else max(device.timestamp, ts)
    kind = _FIELDS.get(name)
    if kind is None:
        return
    if is_blank(value):
        device.blank[kind] = "nan" if math.isnan(value) or math.isinf(value) else "dcgm_blank"
    else:
        device.values[kind] = value


def _utilization(dev: _Device, mig: bool) -> tuple[float | None, float | None, Validity, str, float | None, str]:
    """``(utilization %, engine activity 0..1, validity, rule, raw rejected reading, note)`` of one device.

    MIG: engine activity x 100 is the utilization; whole GPU: ``GPU_UTIL``, engine activity kept
    beside it. A reading outside its range is suspect and dropped (both numbers None)."""
    v = dev.values
    gr = v.get("gr")
    if gr is not None and not 0.0 <= gr <= 1.0:
        return None, None, Validity.SUSPECT, "out_of_range", gr * 100.0, ""
    if mig:
        if gr is None:
            return None, None, Validity.BLANK, dev.blank.get("gr", "no_signal"), None, UNKNOWN_MIG_UTILIZATION
        return gr * 100.0, gr, Validity.VALID, "", None, ""
    raw = v.get("util")
    util, validity, rule = classify_utilization(raw)
    if raw is None and "util" in dev.blank:
        rule = dev.blank["util"]
    if validity is Validity.SUSPECT:
        return None, None, validity, rule, raw, ""
    if validity is Validity.BLANK and gr is not None:
        return None, gr, Validity.VALID, "", None, ""  # engine activity alone is a valid signal
    return util, gr, validity, rule, None, ""


def _sample(key: tuple[str, int | None], dev: _Device, received_at: datetime) -> GpuSample:
    v = dev.values
    mig_profile = dev.labels.get("GPU_I_PROFILE") or None
    util, gr, validity, rule, raw, note = _utilization(dev, mig_profile is not None)
    used = v.get("fb_used")
    total = None
    if used is not None and "fb_free" in v:
        total = used + v["fb_free"] + v.get("fb_reserved", 0.0)
    measured = None if dev.timestamp is None else datetime.fromtimestamp(dev.timestamp, tz=timezone.utc)
    when, skew = normalize_timestamp(measured, received_at)
    xid = v.get("xid")
    flags = tuple(words for kind, words in _HEALTH_FLAGS.items() if v.get(kind, 0.0) > 0)
    return GpuSample(
        gpu_uuid=key[0], mig_instance=key[1], timestamp=when, utilization_pct=util, gr_engine_active=gr,
        memory_used_mib=used, memory_total_mib=total, power_w=v.get("power"), temperature_c=v.get("temp"),
        mig_profile=mig_profile, node=dev.labels.get("Hostname", ""), pod=dev.labels.get("pod", ""),
        namespace=dev.labels.get("namespace", ""), container=dev.labels.get("container", ""),
        note=note, skew_s=skew, validity=validity, validity_rule=rule, raw_utilization_pct=raw,
        xid=None if xid is None else int(xid), health_flags=flags)


class DcgmCollector:
    """Collector over a dcgm-exporter endpoint (or any callable returning its text).

    Args:
        fetch: returns the current ``/metrics`` text; e.g. :func:`http_text_fetcher` or a
            function reading a file. May raise :class:`TelemetryError`.

    Attributes:
        last_good: the samples of the last usable scrape (kept when a scrape fails).
        last_bad_lines: bad value lines of the last usable scrape.
        last_error: the last failure's message ("" after a success).
    """

    def __init__(self, fetch: Callable[[], str]) -> None:
        self._fetch = fetch
        self.last_good: list[GpuSample] = []
        self.last_bad_lines: tuple[BadLine, ...] = ()
        self.last_error = ""

    def collect(self, now: datetime) -> list[GpuSample]:
        """Scrape and parse once.

        Raises:
            TelemetryError: the scrape is unusable; :attr:`last_good` still holds the previous samples.
        """
        try:
            scrape = parse_dcgm_text(self._fetch(), received_at=now)
        except TelemetryError as exc:
            self.last_error = exc.message
            raise
        self.last_good = list(scrape.samples)
        self.last_bad_lines = scrape.bad_lines
        self.last_error = ""
        return list(scrape.samples)


def http_text_fetcher(url: str, *, client: httpx.Client | None = None, timeout_s: float = 5.0) -> Callable[[], str]:
    """Return a ``fetch`` for :class:`DcgmCollector` that GETs ``url`` (e.g. ``http://node:9400/metrics``).

    A ``file://`` URL reads that file at each collection instead (a node-exporter textfile
    collector's output, a capture to replay, a test fixture).

    The function raises :class:`TelemetryError` on connection errors, timeouts (``timeout_s``
    seconds), non-200 answers and unreadable files, so a dead exporter never blocks or crashes the engine.
    """
    if url.startswith("file://"):
        path = Path(url.removeprefix("file://"))

        def read() -> str:
            try:
                return path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise TelemetryError(f"cannot read telemetry file {path}: {exc}",
                                     hint="check telemetry_url (file:///path/to/metrics.prom)") from None

        return read
    from .exporter_peer import MAX_SCRAPE_BYTES, exporter_client

    http = client or exporter_client(timeout_s=timeout_s)

    def fetch() -> str:
        try:
            with http.stream("GET", url) as response:
                if response.status_code != 200:
                    raise TelemetryError(f"scrape of {url} answered HTTP {response.status_code}",
                                         hint="check the exporter URL and path (/metrics)")
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > MAX_SCRAPE_BYTES:  # an endless answer (red31 R2): the last good samples stay
                        raise TelemetryError(f"scrape of {url} answered over {MAX_SCRAPE_BYTES // 2**20} MiB",
                                             hint="is it the exporter's /metrics page?")
                return body.decode(response.encoding or "utf-8", errors="replace")
        except httpx.HTTPError as exc:
            raise TelemetryError(f"cannot scrape {url}: {exc}", hint="is dcgm-exporter running and reachable?") from None

    return fetch


@dataclass(frozen=True, slots=True)
class CounterField:
    """One enabled line of a dcgm-exporter collectors CSV (``DCGM field, Prometheus type, help``)."""

    name: str
    type: str
    help: str


def parse_counters_csv(text: str) -> list[CounterField]:
    """Parse a dcgm-exporter collectors file (e.g. ``/etc/dcgm-exporter/default-counters.csv``);
    ``#`` lines are comments (disabled fields).

    Use it to tell admins up front whether MIG utilization will be known: without
    ``DCGM_FI_PROF_GR_ENGINE_ACTIVE`` it is not (case 008).

    Raises:
        TelemetryError: a line without the three comma-separated parts, or an unknown type.
    """
    out = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split(",", 2)]
        if len(parts) != 3 or parts[1] not in ("gauge", "counter", "label"):
            raise TelemetryError(f"dcgm-exporter counters line {lineno} is not 'FIELD, gauge|counter|label, help': "
                                 f"{line[:120]!r}", hint="fix the collectors CSV")
        out.append(CounterField(*parts))
    return out
