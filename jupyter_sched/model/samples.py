"""One GPU telemetry sample: the shape every collector produces and idle detection reads (pure).

Collectors (``jupyter_sched.telemetry``, edge) build :class:`GpuSample`; the idle detector
(``jupyter_sched.reclaim``, pure) consumes them. The type lives in ``model`` so that both sides
share it without the pure core importing the edge.

**Validity** (DESIGN.md, *Telemetry validity*). Every sample's utilization reading is

- ``valid``: a number in 0..100 % that counts as activity (or its absence);
- ``blank``: unknown — a DCGM blank sentinel, NaN, no signal at all (MIG without profiling
  metrics), or a latch-shaped reading not yet confirmed. Blank neither advances nor resets the
  idle clock;
- ``suspect``: a number that is there but not believable — outside 0..100 % (case 009), or a
  *latch*: >= 95 % with 0 MiB and no process for >= 3 samples in a row (case 026). Suspect
  samples are shown with a note and left out of totals, efficiency and accounting.

:data:`VALIDITY_RULES` lists the rule behind each non-valid sample (``GpuSample.validity_rule``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from enum import Enum

__all__ = [
    "CLOCK_SKEW_LIMIT_S", "LATCH_MIN_SAMPLES", "LATCH_UTIL_PCT", "UNKNOWN_MIG_UTILIZATION", "VALIDITY_RULES",
    "GpuSample", "ProcessUsage", "Validity", "classify_utilization", "latch_shaped", "rule_code", "rule_of_code",
]

CLOCK_SKEW_LIMIT_S = 60.0
"""Seconds of difference between a sample's own timestamp and its arrival above which the
sample is flagged as skewed (case 010, telemetry line)."""

UNKNOWN_MIG_UTILIZATION = "no utilization signal for MIG device (profiling metrics unavailable)"
"""What the UI shows instead of 0 % for a MIG device without DCGM profiling metrics (case 008)."""

LATCH_UTIL_PCT = 95.0
"""Utilization at or above which a reading with 0 MiB and no process is latch-shaped, % (case 026)."""
LATCH_MIN_SAMPLES = 3
"""Consecutive latch-shaped samples after which the reading is ``suspect`` (case 026)."""


class Validity(str, Enum):
    """How far a sample's utilization reading may be believed (module docstring)."""

    VALID = "valid"
    BLANK = "blank"
    SUSPECT = "suspect"


VALIDITY_RULES: dict[str, tuple[Validity, str]] = {
    "": (Validity.VALID, ""),
    "no_signal": (Validity.BLANK, "no utilization reported"),
    "nan": (Validity.BLANK, "NaN reported"),
    "dcgm_blank": (Validity.BLANK, "DCGM blank value (no data)"),
    "latch_unconfirmed": (Validity.BLANK, "no process, 0 MiB; latch not yet confirmed"),
    "out_of_range": (Validity.SUSPECT, "outside 0-100 %"),
    "util_latch": (Validity.SUSPECT, "no process, 0 MiB"),
}
"""``rule -> (validity, note)``: every rule that can mark a sample, with the words the UI shows
(``100 % (suspect: no process, 0 MiB)``). The order is the wire/storage code of each rule."""

_RULE_CODES = {rule: code for code, rule in enumerate(VALIDITY_RULES)}
_RULES = tuple(VALIDITY_RULES)
_DCGM_INT32_BLANK = 0x7FFFFFF0  # DCGM's smallest blank sentinel (dcgm_structs.h); int64 and fp64 ones are larger


def rule_code(rule: str) -> int:
    """Small integer code of a validity rule (how the ring buffer stores it).

    Raises:
        KeyError: an unknown rule.
    """
    return _RULE_CODES[rule]


def rule_of_code(code: int) -> str:
    """Inverse of :func:`rule_code` (unknown codes read as ``no_signal``: never as valid)."""
    return _RULES[code] if 0 <= code < len(_RULES) else "no_signal"


def classify_utilization(value: float | None) -> tuple[float | None, Validity, str]:
    """One utilization reading, % → ``(value to use, validity, rule)``; the single-sample rules.

    ``None`` → blank ``no_signal``; NaN/±Inf → blank ``nan``; a DCGM blank sentinel (int32,
    int64 or fp64 form, >= 2^31 - 16) → blank ``dcgm_blank``; < 0 or > 100 → suspect
    ``out_of_range`` with value None (never shown or summed: case 009); else valid. The latch
    rule needs history and is applied by the telemetry validator (``jupyter_sched.telemetry.validity``).
    """
    if value is None:
        return None, Validity.BLANK, "no_signal"
    if math.isnan(value) or math.isinf(value):
        return None, Validity.BLANK, "nan"
    if value >= _DCGM_INT32_BLANK:
        return None, Validity.BLANK, "dcgm_blank"
    if not 0.0 <= value <= 100.0:
        return None, Validity.SUSPECT, "out_of_range"
    return value, Validity.VALID, ""


@dataclass(frozen=True, slots=True)
class ProcessUsage:
    """A process holding GPU memory.

    Attributes:
        pid: host process id.
        used_memory_mib: GPU memory it holds, MiB (None when the driver does not say, e.g. in
            some containers or on MIG without permissions).
        sm_util_pct: its share of SM time in %, where NVML reports per-process utilization.
        name: process name when known.
    """

    pid: int
    used_memory_mib: int | None = None
    sm_util_pct: float | None = None
    name: str = ""


@dataclass(frozen=True, slots=True)
class GpuSample:
    """One observation of one GPU or one MIG instance.

    Attributes:
        gpu_uuid: the *physical* GPU's ``GPU-...`` UUID (for a MIG instance, its parent's).
        mig_instance: MIG GPU instance id (dcgm-exporter ``GPU_I_ID``), None for a whole GPU.
        timestamp: when it was measured (aware UTC; clamped to arrival time when in the future).
        utilization_pct: GPU utilization 0..100 %, None when unknown (e.g. MIG without
            profiling metrics — never reported as 0, case 008).
        gr_engine_active: graphics-engine activity fraction 0..1 (``DCGM_FI_PROF_GR_ENGINE_ACTIVE``)
            when known.
        memory_used_mib: memory in use, MiB (None when unknown).
        memory_total_mib: total memory, MiB (None when unknown).
        power_w: power draw in W (device-level; repeated on MIG instances).
        temperature_c: GPU temperature in °C.
        processes: processes holding memory on it.
        mig_uuid: ``MIG-...`` UUID when known.
        mig_profile: MIG profile, e.g. ``"3g.40gb"``.
        node: host name the sample came from.
        pod / namespace / container: Kubernetes owner labels (empty when none).
        note: one sentence explaining a missing value (e.g. :data:`UNKNOWN_MIG_UTILIZATION`).
        skew_s: sample timestamp minus arrival time in seconds before clamping (positive =
            from the future).
        simulated: the GPU is simulated; the numbers come from CPU activity of its processes.
        validity: valid, blank or suspect (module docstring); only valid samples count as activity.
        validity_rule: the rule that made it blank or suspect (a key of :data:`VALIDITY_RULES`).
        raw_utilization_pct: the reading as received when a rule rejected it (e.g. 101), for the
            note; never shown as a utilization.
        process_count: processes on the device when the source says (NVML, simulated); None when
            it cannot know (dcgm-exporter without per-process data).
        xid: the last Xid error the device reported (DCGM ``DCGM_FI_DEV_XID_ERRORS``; 0 or None = none).
        health_flags: other DCGM health evidence, one short phrase each (e.g. ``"row remap failure"``).
    """

    gpu_uuid: str
    mig_instance: int | None
    timestamp: datetime
    utilization_pct: float | None
    gr_engine_active: float | None = None
    memory_used_mib: float | None = None
    memory_total_mib: float | None = None
    power_w: float | None = None
    temperature_c: float | None = None
    processes: tuple[ProcessUsage, ...] = ()
    mig_uuid: str | None = None
    mig_profile: str | None = None
    node: str = ""
    pod: str = ""
    namespace: str = ""
    container: str = ""
    note: str = ""
    skew_s: float = 0.0
    simulated: bool = False
    validity: Validity = Validity.VALID
    validity_rule: str = ""
    raw_utilization_pct: float | None = None
    process_count: int | None = None
    xid: int | None = None
    health_flags: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, int | None]:
        """Device key ``(gpu_uuid, mig_instance)``: MIG instances of one GPU stay apart (case 008)."""
        return (self.gpu_uuid, self.mig_instance)

    @property
    def activity_pct(self) -> float | None:
        """The activity signal idle detection uses, in %: ``GR_ENGINE_ACTIVE x 100`` when known,
        else ``utilization_pct``; None when neither is known (DESIGN.md, idle reclamation)."""
        if self.gr_engine_active is not None:
            return self.gr_engine_active * 100.0
        return self.utilization_pct

    @property
    def label(self) -> str:
        """``valid``, or validity and rule joined: ``blank_dcgm_blank``, ``suspect_util_latch``."""
        return self.validity.value if self.validity is Validity.VALID else f"{self.validity.value}_{self.validity_rule}"

    @property
    def counts_as_activity(self) -> bool:
        """True when this sample's activity may be summed, averaged or read as busy/idle."""
        return self.validity is Validity.VALID and self.activity_pct is not None

    @property
    def known_process_count(self) -> int | None:
        """Processes on the device: ``process_count``, else the listed processes when any, else None."""
        if self.process_count is not None:
            return self.process_count
        return len(self.processes) if self.processes else None

    def idle_state(self, threshold_pct: float) -> str:
        """What this sample says for idle detection: ``"active"``, ``"idle"`` or ``"unknown"``.

        Valid: active at or above ``threshold_pct``, else idle (held memory alone is not activity).
        A confirmed latch (suspect ``util_latch``) is idle: its utilization is ignored and it has
        no process and 0 MiB (case 026). Everything else (blank, out of range) is unknown.
        """
        if self.validity is Validity.VALID:
            activity = self.activity_pct
            if activity is None:
                return "unknown"
            return "active" if activity >= threshold_pct else "idle"
        if self.validity_rule == "util_latch":
            return "idle"
        return "unknown"

    def display_utilization(self) -> str:
        """Utilization as the UI shows it, note included: ``42 %``, ``100 % (suspect: no process,
        0 MiB)``, ``unknown (blank: DCGM blank value (no data))``, ``unknown (suspect: 101 % is outside
        0-100 %)``. Never a number above 100 (case 009)."""
        if self.validity is Validity.VALID:
            value = self.activity_pct if self.utilization_pct is None else self.utilization_pct
            return f"{value:.0f} %" if value is not None else f"unknown ({self.note or 'no utilization reported'})"
        _, note = VALIDITY_RULES.get(self.validity_rule, (self.validity, self.validity_rule))
        if self.validity_rule == "out_of_range" and self.raw_utilization_pct is not None:
            return f"unknown (suspect: {self.raw_utilization_pct:g} % is {note})"
        if self.utilization_pct is not None:
            return f"{self.utilization_pct:.0f} % ({self.validity.value}: {note})"
        return f"unknown ({self.validity.value}: {self.note or note})"

    @property
    def skewed(self) -> bool:
        """True when the sample's clock differs from arrival by more than :data:`CLOCK_SKEW_LIMIT_S`."""
        return abs(self.skew_s) > CLOCK_SKEW_LIMIT_S


def latch_shaped(sample: GpuSample) -> bool:
    """True when ``sample`` looks like the utilization latch of case 026: utilization >=
    :data:`LATCH_UTIL_PCT` with 0 MiB of memory in use and no process (a count of 0, or none
    listed when the source cannot list processes). Memory must be *known* to be 0."""
    util = sample.utilization_pct if sample.utilization_pct is not None else sample.raw_utilization_pct
    if util is None or not LATCH_UTIL_PCT <= util <= 100.0:
        return False
    if sample.memory_used_mib is None or sample.memory_used_mib > 0:
        return False
    return not sample.processes and (sample.process_count or 0) == 0
