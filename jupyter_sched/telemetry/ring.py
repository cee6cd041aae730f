"""In-memory sample store: a fixed-size ring buffer per device at full resolution, plus 1-minute rollups.

Memory bound: per device (GPU or MIG instance) the ring holds ``capacity = ceil(retention_s x
rate_hz)`` samples in preallocated numpy arrays of **40 bytes per sample** (timestamp float64 +
eight float32 columns: utilization % (the raw reading when a rule rejected it), engine activity,
memory used MiB, memory total MiB, power W, temperature °C, validity rule code, process count;
NaN = unknown), plus the latest full :class:`GpuSample` (with its processes). At 1 Hz that is
3600 x 40 B = 140.6 KiB ≈ 0.14 MiB per GPU-hour of retention (target ≤ 1 MiB), fixed at creation —
the store never grows with time, only with the number of devices.

Validity (``jupyter_sched.model.samples``) is kept per sample: rollups average only *valid*
samples, count blank and suspect ones, and name the rules seen, so history shows a gap with a
note where telemetry was blank or suspect instead of a made-up number (cases 009, 026).

Rollups (:meth:`SampleStore.drain_rollups`) turn every *completed* minute into one
:class:`RollupRow` per device; the runtime persists them for history (the store is the runtime's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from ..model.samples import VALIDITY_RULES, GpuSample, Validity, rule_code, rule_of_code

__all__ = ["BYTES_PER_SAMPLE", "RingBuffer", "RollupRow", "SampleStore", "rollup_minutes"]

DeviceKey = tuple[str, int | None]
BYTES_PER_SAMPLE = 8 + 8 * 4
_COLUMNS = ("utilization_pct", "gr_engine_active", "memory_used_mib", "memory_total_mib", "power_w", "temperature_c",
            "validity_rule", "process_count")
_RULE, _PROCS = 6, 7
_VALID_CODE = rule_code("")


def _f(value: float | None) -> float:
    """A reading as stored in the ring: NaN for unknown — an infinity too (no measurement, and not JSON: s29)."""
    return math.nan if value is None or not math.isfinite(value) else float(value)


def _opt(value: float) -> float | None:
    return None if not math.isfinite(value) else float(value)


class RingBuffer:
    """Fixed-capacity ring of samples for one device (oldest overwritten first).

    Args:
        key: ``(gpu_uuid, mig_instance)``.
        capacity: samples kept (≥ 1).
    """

    def __init__(self, key: DeviceKey, capacity: int) -> None:
        self.key = key
        self.capacity = max(1, capacity)
        self._ts = np.full(self.capacity, np.nan, dtype=np.float64)
        self._values = np.full((self.capacity, len(_COLUMNS)), np.nan, dtype=np.float32)
        self._next = 0
        self._count = 0
        self.latest: GpuSample | None = None

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays (the bound in the module docstring)."""
        return int(self._ts.nbytes + self._values.nbytes)

    def __len__(self) -> int:
        return self._count

    def append(self, sample: GpuSample) -> None:
        """Store ``sample`` (overwrites the oldest when full)."""
        i = self._next
        self._ts[i] = sample.timestamp.timestamp()
        util = sample.utilization_pct if sample.utilization_pct is not None else sample.raw_utilization_pct
        self._values[i] = (_f(util), _f(sample.gr_engine_active), _f(sample.memory_used_mib),
                           _f(sample.memory_total_mib), _f(sample.power_w), _f(sample.temperature_c),
                           float(rule_code(sample.validity_rule)), _f(sample.known_process_count))
        self._next = (i + 1) % self.capacity
        self._count = min(self._count + 1, self.capacity)
        self.latest = sample

    def relabel(self, count: int, rule: str, *, skip_newest: int = 1) -> None:
        """Mark the ``count`` samples before the ``skip_newest`` newest ones with ``rule`` (a latch
        confirmed by a later sample, :class:`~jupyter_sched.telemetry.validity.Relabel`)."""
        code = float(rule_code(rule))
        for back in range(skip_newest + 1, skip_newest + 1 + min(count, self._count - skip_newest)):
            self._values[(self._next - back) % self.capacity, _RULE] = code

    def arrays(self, since: datetime | None = None, until: datetime | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(timestamps [s since epoch], values [n, 6])`` in time order, optionally within [since, until]."""
        if self._count < self.capacity:
            ts, values = self._ts[: self._count], self._values[: self._count]
        else:
            ts = np.concatenate((self._ts[self._next:], self._ts[: self._next]))
            values = np.concatenate((self._values[self._next:], self._values[: self._next]))
        mask = np.ones(len(ts), dtype=bool)
        if since is not None:
            mask &= ts >= since.timestamp()
        if until is not None:
            mask &= ts <= until.timestamp()
        order = np.argsort(ts[mask], kind="stable")
        return ts[mask][order], values[mask][order]

    def samples(self, since: datetime | None = None, until: datetime | None = None) -> list[GpuSample]:
        """The stored samples as :class:`GpuSample` (without process lists, which only ``latest`` keeps;
        ``process_count`` is kept)."""
        ts, values = self.arrays(since, until)
        return [self._sample(float(t), v) for t, v in zip(ts, values, strict=True)]

    def _sample(self, t: float, v: np.ndarray) -> GpuSample:
        gpu, mig = self.key
        latest = self.latest
        rule = rule_of_code(int(v[_RULE]) if not math.isnan(v[_RULE]) else 0)
        validity = VALIDITY_RULES[rule][0]
        util = _opt(v[0])
        rejected = rule == "out_of_range"
        procs = _opt(v[_PROCS])
        return GpuSample(gpu_uuid=gpu, mig_instance=mig, timestamp=datetime.fromtimestamp(t, tz=timezone.utc),
                         utilization_pct=None if rejected else util, gr_engine_active=None if rejected else _opt(v[1]),
                         memory_used_mib=_opt(v[2]), memory_total_mib=_opt(v[3]), power_w=_opt(v[4]),
                         temperature_c=_opt(v[5]), mig_uuid=latest.mig_uuid if latest else None,
                         mig_profile=latest.mig_profile if latest else None, node=latest.node if latest else "",
                         note=(latest.note if latest and validity is Validity.BLANK else ""),
                         simulated=latest.simulated if latest else False, validity=validity, validity_rule=rule,
                         raw_utilization_pct=util if rejected else None,
                         process_count=None if procs is None else int(procs))


@dataclass(frozen=True, slots=True)
class RollupRow:
    """One device's minute (what the runtime persists for history).

    Attributes:
        gpu_uuid / mig_instance: the device. minute: start of the minute (aware UTC).
        samples: samples in the minute. utilization_avg / utilization_max: % (None = unknown all minute).
        activity_avg / activity_max: idle-detection activity % (engine activity x 100, else utilization).
        memory_used_max_mib: MiB. memory_total_mib: MiB. power_avg_w: W. temperature_max_c: °C.
        utilization and activity are over the minute's *valid* samples only (None when it had none).
        valid_samples / blank_samples / suspect_samples: how the minute's samples were judged.
        rules: the validity rules seen in the minute, sorted, comma-separated (``""`` when all valid).
        processes_max: most processes seen on the device in the minute (None = unknown).
    """

    gpu_uuid: str
    mig_instance: int | None
    minute: datetime
    samples: int
    utilization_avg: float | None
    utilization_max: float | None
    activity_avg: float | None
    activity_max: float | None
    memory_used_max_mib: float | None
    memory_total_mib: float | None
    power_avg_w: float | None
    temperature_max_c: float | None
    valid_samples: int = 0
    blank_samples: int = 0
    suspect_samples: int = 0
    rules: str = ""
    processes_max: int | None = None

    @property
    def latched(self) -> bool:
        """True when the minute had no valid sample and a confirmed utilization latch (idle evidence)."""
        return self.valid_samples == 0 and "util_latch" in self.rules.split(",")


_SUSPECT_CODES = np.array([rule_code(r) for r, (v, _) in VALIDITY_RULES.items() if v is Validity.SUSPECT])


def _avg(column: np.ndarray, starts: np.ndarray) -> list[float | None]:
    """Per-slice mean ignoring NaN (None where a slice has no number)."""
    present = ~np.isnan(column)
    counts = np.add.reduceat(present.astype(np.int64), starts)
    sums = np.add.reduceat(np.where(present, column, 0.0).astype(np.float64), starts)
    return [float(t / c) if c else None for t, c in zip(sums.tolist(), counts.tolist(), strict=True)]


def _max(column: np.ndarray, starts: np.ndarray) -> list[float | None]:
    """Per-slice maximum ignoring NaN (None where a slice has no number)."""
    return [None if math.isnan(x) else float(x) for x in np.fmax.reduceat(column, starts).tolist()]


def _rows(key: DeviceKey, ts: np.ndarray, values: np.ndarray, bucket_s: int = 60) -> list[RollupRow]:
    """One row per minute (or ``bucket_s`` seconds) of time-ordered samples (each bucket a contiguous
    slice; vectorised per column, since the idle detector asks for hours of minutes every cycle)."""
    if ts.size == 0:
        return []
    minutes = np.floor(ts / float(bucket_s)).astype(np.int64)
    codes = np.nan_to_num(values[:, _RULE], nan=float(_VALID_CODE)).astype(np.int64)
    valid = codes == _VALID_CODE
    activity = np.where(np.isnan(values[:, 1]), values[:, 0], values[:, 1] * 100.0)
    activity = np.where(valid, activity, np.nan)
    util = np.where(valid, values[:, 0], np.nan)
    starts = np.flatnonzero(np.r_[True, minutes[1:] != minutes[:-1]])
    sizes = np.diff(np.r_[starts, minutes.size]).tolist()
    n_valid = np.add.reduceat(valid.astype(np.int64), starts).tolist()
    n_suspect = np.add.reduceat(np.isin(codes, _SUSPECT_CODES).astype(np.int64), starts).tolist()
    util_avg, util_max = _avg(util, starts), _max(util, starts)
    act_avg, act_max = _avg(activity, starts), _max(activity, starts)
    mem_max, mem_total = _max(values[:, 2], starts), _max(values[:, 3], starts)
    power, temp, procs = _avg(values[:, 4], starts), _max(values[:, 5], starts), _max(values[:, _PROCS], starts)
    out = []
    for i, a in enumerate(starts.tolist()):
        size = sizes[i]
        rules = "" if n_valid[i] == size else ",".join(
            sorted({rule_of_code(int(c)) for c in np.unique(codes[a:a + size])} - {""}))
        p = procs[i]
        out.append(RollupRow(
            gpu_uuid=key[0], mig_instance=key[1],
            minute=datetime.fromtimestamp(int(minutes[a]) * bucket_s, tz=timezone.utc),
            samples=size, utilization_avg=util_avg[i], utilization_max=util_max[i], activity_avg=act_avg[i],
            activity_max=act_max[i], memory_used_max_mib=mem_max[i], memory_total_mib=mem_total[i],
            power_avg_w=power[i], temperature_max_c=temp[i], valid_samples=n_valid[i],
            blank_samples=size - n_valid[i] - n_suspect[i], suspect_samples=n_suspect[i], rules=rules,
            processes_max=None if p is None else int(p)))
    return out


def _within(ts: np.ndarray, spans: Sequence[tuple[float, float]]) -> np.ndarray:
    """Mask of the timestamps inside any of the inclusive ``(first, last)`` spans."""
    mask = np.zeros(ts.size, dtype=bool)
    for first, last in spans:
        mask |= (ts >= first) & (ts <= last)
    return mask


def rollup_minutes(samples: list[GpuSample], *, bucket_s: int = 60) -> list[RollupRow]:
    """1-minute rollup rows of arbitrary samples (grouped by device and minute; ``bucket_s`` other
    than 60 gives finer or coarser buckets, e.g. 5 s for a live chart — ``minute`` is then the
    bucket's start)."""
    if bucket_s < 1:
        raise ValueError(f"bucket_s must be >= 1 (got {bucket_s})")
    by_key: dict[DeviceKey, list[GpuSample]] = {}
    for s in samples:
        by_key.setdefault(s.key, []).append(s)
    out: list[RollupRow] = []
    for key, group in by_key.items():
        ring = RingBuffer(key, len(group))
        for s in sorted(group, key=lambda s: s.timestamp):
            ring.append(s)
        out.extend(_rows(key, *ring.arrays(), bucket_s=bucket_s))
    return out


class SampleStore:
    """Ring buffers for every device seen, at full resolution, with rollups.

    Args:
        retention_s: seconds of full-resolution history per device (default 3600).
        rate_hz: expected sampling rate (default 1 Hz); capacity = ceil(retention_s x rate_hz).

    Memory: ``devices x capacity x 32`` bytes plus one latest sample per device (module docstring).
    Not thread-safe: feed and read it from the engine's event loop.
    """

    def __init__(self, retention_s: float = 3600.0, rate_hz: float = 1.0) -> None:
        self.capacity = max(1, math.ceil(retention_s * rate_hz))
        self._rings: dict[DeviceKey, RingBuffer] = {}
        self._rolled_until: dict[DeviceKey, float] = {}
        self._preloaded: dict[DeviceKey, list[GpuSample]] = {}
        self._seeded_until: dict[DeviceKey, float] = {}

    def preload(self, minutes: dict[DeviceKey, list[GpuSample]]) -> None:
        """Keep already-persisted minutes (:func:`~.seed.samples_from_rollups`, oldest first) to put in
        each device's ring when that device is first added; they are never drained again (hubadmin22
        H11: a restart does not start an idle period again). A device already sampled is left as it is."""
        self._preloaded = {k: v for k, v in minutes.items() if k not in self._rings and v}

    def add(self, samples: list[GpuSample]) -> None:
        """Append samples (each to its device's ring)."""
        for s in samples:
            ring = self._rings.get(s.key)
            if ring is None:
                ring = self._rings[s.key] = RingBuffer(s.key, self.capacity)
                stored = [p for p in self._preloaded.pop(s.key, []) if p.timestamp < s.timestamp]
                for old in stored[-self.capacity + 1:] if self.capacity > 1 else []:
                    ring.append(old)
                if stored:  # the stored minutes are history already: drain from the next minute on
                    self._rolled_until[s.key] = self._seeded_until[s.key] = stored[-1].timestamp.timestamp() + 60.0
            ring.append(s)

    def devices(self) -> list[DeviceKey]:
        """Device keys seen so far."""
        return list(self._rings)

    def latest(self) -> dict[DeviceKey, GpuSample]:
        """The newest full sample of every device (with processes) — the live view."""
        return {k: r.latest for k, r in self._rings.items() if r.latest is not None}

    def window(self, key: DeviceKey, since: datetime, until: datetime | None = None) -> list[GpuSample]:
        """Samples of one device within [since, until] (empty for an unknown device)."""
        ring = self._rings.get(key)
        return ring.samples(since, until) if ring else []

    def minute_maxima(self, key: DeviceKey, since: datetime, until: datetime | None = None) -> list[GpuSample]:
        """One sample per minute of one device, carrying the minute's *maximum* valid activity (as
        ``utilization_pct``) and maximum memory — a compact, conservative input for idle
        detection over hours (a minute with any activity counts as active). The current,
        incomplete minute is included. Timestamps are minute starts.

        A minute with no valid sample is ``suspect`` / ``util_latch`` when a confirmed latch was
        seen in it (idle evidence, case 026), else ``blank`` (unknown: it pauses the idle clock).
        A minute preloaded from history (:meth:`preload`) is taken whole when ``since`` falls in it."""
        ring = self._rings.get(key)
        if ring is None:
            return []
        seeded = self._seeded_until.get(key)
        if seeded is not None and since.timestamp() < seeded:  # a preloaded minute stands for all of its minute
            since = datetime.fromtimestamp(math.floor(since.timestamp() / 60.0) * 60.0, tz=timezone.utc)
        ts, values = ring.arrays(since, until)
        latest = ring.latest
        out = []
        for row in _rows(key, ts, values):
            if row.valid_samples:
                validity, rule, util = Validity.VALID, "", row.activity_max
            elif row.latched:
                validity, rule, util = Validity.SUSPECT, "util_latch", 100.0
            else:
                rules = row.rules.split(",") if row.rules else ["no_signal"]
                validity, rule, util = VALIDITY_RULES[rules[0]][0], rules[0], None
                if validity is Validity.SUSPECT:  # out of range: unknown for idle detection, shown as suspect
                    util = None
            out.append(GpuSample(
                gpu_uuid=key[0], mig_instance=key[1], timestamp=row.minute, utilization_pct=util,
                memory_used_mib=row.memory_used_max_mib, memory_total_mib=row.memory_total_mib,
                power_w=row.power_avg_w, temperature_c=row.temperature_max_c,
                mig_uuid=latest.mig_uuid if latest else None, mig_profile=latest.mig_profile if latest else None,
                node=latest.node if latest else "", note=latest.note if latest and not row.valid_samples else "",
                simulated=latest.simulated if latest else False, validity=validity, validity_rule=rule,
                process_count=row.processes_max))
        return out

    def held_rollups(self, key: DeviceKey, spans: Sequence[tuple[float, float]], since: datetime,
                     until: datetime, *, bucket_s: int = 60) -> list[RollupRow]:
        """Rollup rows of ``key``'s samples within ``[since, until]`` that fall in ``spans``
        (``(first, last)`` timestamps, inclusive: the samples a job held the device for;
        :meth:`~jupyter_sched.telemetry.minutes.MinuteAttribution.held_spans`) — a job's own
        minutes, computed exactly as a device's (the same validity rules and means)."""
        ring = self._rings.get(key)
        if ring is None or not spans:
            return []
        ts, values = ring.arrays(since, until)
        mask = _within(ts, spans)
        return _rows(key, ts[mask], values[mask], bucket_s)

    def held_samples(self, key: DeviceKey, spans: Sequence[tuple[float, float]], since: datetime,
                     until: datetime | None = None) -> list[GpuSample]:
        """``key``'s samples within ``[since, until]`` that fall in ``spans`` (see :meth:`held_rollups`)."""
        ring = self._rings.get(key)
        if ring is None or not spans:
            return []
        ts, values = ring.arrays(since, until)
        mask = _within(ts, spans)
        return [ring._sample(float(t), v) for t, v in zip(ts[mask], values[mask], strict=True)]

    def relabel(self, key: DeviceKey, count: int, rule: str) -> None:
        """Mark the ``count`` samples of ``key`` stored before its newest one with ``rule`` (see
        :class:`~jupyter_sched.telemetry.validity.Relabel`; unknown devices are ignored)."""
        ring = self._rings.get(key)
        if ring is not None:
            ring.relabel(count, rule)

    def grow(self, retention_s: float, rate_hz: float = 1.0) -> None:
        """Keep at least ``retention_s`` seconds from now on (an admin lengthened the idle window):
        every ring is copied into a larger one, samples kept in order. Never shrinks."""
        capacity = max(1, math.ceil(retention_s * rate_hz))
        if capacity <= self.capacity:
            return
        self.capacity = capacity
        for key, ring in list(self._rings.items()):
            bigger = RingBuffer(key, capacity)
            ts, values = ring.arrays()
            n = len(ts)
            bigger._ts[:n] = ts
            bigger._values[:n] = values
            bigger._next = n % capacity
            bigger._count = n
            bigger.latest = ring.latest
            self._rings[key] = bigger

    def forget(self, key: DeviceKey) -> None:
        """Drop a device (e.g. removed from the inventory)."""
        self._rings.pop(key, None)
        self._rolled_until.pop(key, None)
        self._seeded_until.pop(key, None)

    def nbytes(self) -> int:
        """Bytes held by all rings' arrays."""
        return sum(r.nbytes for r in self._rings.values())

    def drain_rollups(self, now: datetime, *, open_minute: bool = False) -> list[RollupRow]:
        """Rollup rows of every minute completed before ``now`` that was not drained yet.

        Call it about once a minute and persist the rows; minutes older than the retention are lost
        if never drained. ``open_minute`` (the service stops: :meth:`TelemetryMonitor.flush
        <jupyter_sched.engine.telemetry.TelemetryMonitor.flush>`): the minute under way too, over its
        samples up to ``now`` — the next start seeds it as that minute (hubadmin22 H11: an idle period
        that began in it was lost with it) and it is never drained again.
        """
        end = math.floor(now.timestamp() / 60.0) * 60.0
        out: list[RollupRow] = []
        for key, ring in self._rings.items():
            start = self._rolled_until.get(key)
            if start is not None and start > end:  # the open minute was drained already (flushed)
                continue
            ts, values = ring.arrays(None if start is None else datetime.fromtimestamp(start, tz=timezone.utc))
            sel = ts <= now.timestamp() if open_minute else ts < end
            out.extend(_rows(key, ts[sel], values[sel]))
            self._rolled_until[key] = end + 60.0 if open_minute and bool(sel.any()) and ts[sel][-1] >= end else end
        return out

    def history_bound_bytes(self, devices: int) -> int:
        """Upper bound of ring memory for ``devices`` devices, bytes."""
        return devices * self.capacity * BYTES_PER_SAMPLE

