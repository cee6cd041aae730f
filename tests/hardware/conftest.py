"""Shared fixtures for the hardware tests: the real telemetry captures in ../shared/data."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
TELEMETRY = DATA / "telemetry"
PROM_SAMPLES = TELEMETRY / "dcgm-exporter" / "samples"
SMI = TELEMETRY / "nvidia-smi"


def require(path: Path) -> Path:
    """Return ``path`` or skip: the shared data set is not part of the repository."""
    if not path.exists():
        pytest.skip(f"shared telemetry data not found at {path} (checkout without ../shared/data)")
    return path


@pytest.fixture
def telemetry_dir() -> Path:
    return require(TELEMETRY)
