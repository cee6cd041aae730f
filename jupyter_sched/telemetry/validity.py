"""Sample validity over time: the latch rule, and out-of-range readings logged once.

Collectors mark each sample on its own (:func:`~jupyter_sched.model.samples.classify_utilization`:
blank sentinels, NaN, no signal, outside 0..100 %). What one sample cannot show is a *latch*
(case 026): a GPU reading >= 95 % with 0 MiB and no process, sample after sample, after a process
died mid-kernel. :class:`SampleValidator` follows each device over time:

1. a latch-shaped sample (:func:`~jupyter_sched.model.samples.latch_shaped`) is ``blank`` /
   ``latch_unconfirmed`` while its run is shorter than ``min_samples`` (3): unknown, neither busy
   nor idle (case 026, GPU-d);
2. the sample that makes the run ``min_samples`` long is ``suspect`` / ``util_latch``, and so are
   the earlier samples of the run: :meth:`SampleValidator.check` returns them as a
   :class:`Relabel` so the sample store can mark them too (the idle clock then starts at the
   first latched sample, case 026 GPU-b);
3. later samples of the run are ``suspect`` / ``util_latch`` straight away; any other sample ends it.

It also logs each device's first out-of-range reading and first latch once (case 009: "logged
once"), so a broken GPU does not flood the log at 1 Hz.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ..model.samples import LATCH_MIN_SAMPLES, GpuSample, Validity, latch_shaped

__all__ = ["Relabel", "SampleValidator", "validate_series"]

log = logging.getLogger(__name__)

DeviceKey = tuple[str, int | None]


@dataclass(frozen=True, slots=True)
class Relabel:
    """The ``count`` samples of device ``key`` stored just before this check turn ``suspect`` /
    ``util_latch`` (a latch was confirmed by the sample that completed the run)."""

    key: DeviceKey
    count: int


class SampleValidator:
    """Applies the latch rule per device and logs rejected readings once (module docstring).

    Args:
        min_samples: latch-shaped samples in a row after which they are suspect (default 3).
        logger: where the once-per-device messages go.

    Not thread-safe: call :meth:`check` from one thread (the telemetry monitor's).
    """

    def __init__(self, *, min_samples: int = LATCH_MIN_SAMPLES, logger: logging.Logger | None = None) -> None:
        if min_samples < 1:
            raise ValueError(f"min_samples must be >= 1 (got {min_samples})")
        self.min_samples = min_samples
        self._log = logger or log
        self._run: dict[DeviceKey, int] = {}
        self._logged: set[tuple[DeviceKey, str]] = set()

    def check(self, samples: Iterable[GpuSample]) -> tuple[list[GpuSample], list[Relabel]]:
        """Mark one collection's samples (one per device, as collectors return them).

        Returns:
            ``(samples with the latch rule applied, relabels of earlier stored samples)``.
        """
        out: list[GpuSample] = []
        relabels: list[Relabel] = []
        for s in samples:
            marked, relabel = self._one(s)
            out.append(marked)
            if relabel is not None:
                relabels.append(relabel)
        return out, relabels

    def _one(self, s: GpuSample) -> tuple[GpuSample, Relabel | None]:
        key = s.key
        if s.validity_rule == "out_of_range":
            self._once(key, "out_of_range", "telemetry: %s reported utilization %s %%, outside 0-100 %%; the "
                       "reading is rejected (shown as suspect, left out of totals)", _device(key), s.raw_utilization_pct)
        if not latch_shaped(s) or s.validity is Validity.BLANK:
            self._run.pop(key, None)
            return s, None
        run = self._run.get(key, 0) + 1
        self._run[key] = run
        if run < self.min_samples:
            return replace(s, validity=Validity.BLANK, validity_rule="latch_unconfirmed"), None
        self._once(key, "util_latch", "telemetry: %s reads %s %% with 0 MiB and no process for %d samples: "
                   "utilization latch suspected (ignored for idle detection and totals)", _device(key),
                   s.utilization_pct, run)
        marked = replace(s, validity=Validity.SUSPECT, validity_rule="util_latch")
        return marked, (Relabel(key, run - 1) if run == self.min_samples and run > 1 else None)

    def _once(self, key: DeviceKey, rule: str, message: str, *args: object) -> None:
        if (key, rule) in self._logged:
            return
        self._logged.add((key, rule))
        self._log.warning(message, *args)

    def forget(self, key: DeviceKey) -> None:
        """Drop a device's run (it left the inventory)."""
        self._run.pop(key, None)


def _device(key: DeviceKey) -> str:
    return key[0] if key[1] is None else f"{key[0]} MIG instance {key[1]}"


def validate_series(samples: Sequence[GpuSample], *, min_samples: int = LATCH_MIN_SAMPLES) -> list[GpuSample]:
    """Apply :class:`SampleValidator` to a whole history at once (any devices, any order), relabels
    included: what the sample store would hold after sampling them one by one. Returns them in
    time order (per device order kept for equal timestamps)."""
    validator = SampleValidator(min_samples=min_samples, logger=logging.getLogger(__name__ + ".series"))
    ordered = sorted(samples, key=lambda s: s.timestamp)
    out: list[GpuSample] = []
    positions: dict[DeviceKey, list[int]] = {}
    for s in ordered:
        (marked,), relabels = validator.check([s])
        for relabel in relabels:
            for index in positions[relabel.key][-relabel.count:]:
                out[index] = replace(out[index], validity=Validity.SUSPECT, validity_rule="util_latch")
        positions.setdefault(s.key, []).append(len(out))
        out.append(marked)
    return out
