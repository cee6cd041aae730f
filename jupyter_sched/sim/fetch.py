"""Download the public traces the simulator replays, from their sources, pinned to commits (edge).

Layout written under ``dest`` (the same as ``../shared/data/traces``, so ``JUPYTER_SCHED_DATA=dest``
works): ``openb/``, ``fgd_expected_results/``, ``tiresias/``, ``acme/``, ``alibaba_spot_gpu_v2026/``.

Sources (licences in the traces README):

* openb — ``alibaba/clusterdata`` ``cluster-trace-gpu-v2023/csv/`` (research/study use; cite FGD,
  Weng et al., ATC'23);
* FGD published results — ``hkust-adsl/kubernetes-scheduler-simulator``
  ``experiments/analysis/expected_results/`` (Apache-2.0);
* Tiresias — ``SymbioticLab/Tiresias`` ``simulator/`` (Apache-2.0);
* Acme summary — ``InternLM/AcmeTrace`` ``data/cluster_summary.csv`` (CC BY 4.0);
* spot-GPU node list — ``alibaba/clusterdata`` ``cluster-trace-v2026-spot-gpu/``.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import SchedError, ValidationError

__all__ = ["GROUPS", "Download", "DownloadError", "fetch", "plan_downloads"]


class DownloadError(SchedError):
    """A trace file could not be downloaded: the host, why, and what to do (newuser38 n31: Python's
    ``<urlopen error [errno -2] name or service not known>`` was all it said — no URL, no host, no way round)."""

    code = "download_failed"

_RAW = "https://raw.githubusercontent.com"
_ALIBABA = f"{_RAW}/alibaba/clusterdata/7a6c496e4f4b6ce6150be8f881cb051bf2abff42"
_FGD = f"{_RAW}/hkust-adsl/kubernetes-scheduler-simulator/8f3d6417353c5083c6d56617f255fadd8dc306bc"
_TIRESIAS = f"{_RAW}/SymbioticLab/Tiresias/959f9b08f44fa1b4f2b3aed79b01e4d439264a94"
_ACME = f"{_RAW}/InternLM/AcmeTrace/6d6ac9cd15f3b01151ac6ba00ecddd9156f0dc73"

_OPENB_PODS = (
    "default", "cpu0", "cpu037", "cpu050", "cpu072", "cpu100", "cpu200", "cpu235", "cpu250", "cpu300",
    "gpushare20", "gpushare40", "gpushare60", "gpushare80", "gpushare100",
    "gpuspec05", "gpuspec10", "gpuspec20", "gpuspec25", "gpuspec33",
    "multigpu20", "multigpu30", "multigpu40", "multigpu50",
)


@dataclass(frozen=True, slots=True)
class Download:
    """One file to fetch: its source URL and where it goes."""

    url: str
    path: Path


def _group_files() -> dict[str, list[tuple[str, str]]]:
    """group -> [(url, path relative to dest)]."""
    openb = [(f"{_ALIBABA}/cluster-trace-gpu-v2023/csv/{name}", f"openb/{name}")
             for name in ("openb_node_list_all_node.csv", "openb_node_list_gpu_node.csv",
                          *(f"openb_pod_list_{w}.csv" for w in _OPENB_PODS))]
    fgd = [(f"{_FGD}/experiments/analysis/expected_results/analysis_{k}_discrete.csv",
            f"fgd_expected_results/analysis_{k}_discrete.csv") for k in ("allo", "frag", "frag_ratio")]
    tiresias = [(f"{_TIRESIAS}/simulator/{name}", f"tiresias/{name}")
                for name in ("60_job.csv", "cluster_spec.csv", "n1g4.csv", "n32g4.csv", "n160g8.csv", "n256g8.csv")]
    acme = [(f"{_ACME}/data/cluster_summary.csv", "acme/cluster_summary.csv")]
    spot = [(f"{_ALIBABA}/cluster-trace-v2026-spot-gpu/node_info_df.csv", "alibaba_spot_gpu_v2026/node_info_df.csv")]
    return {"openb": openb, "fgd": fgd, "tiresias": tiresias, "acme": acme, "spot": spot}


GROUPS = tuple(_group_files())
"""Names of the file groups :func:`plan_downloads` knows."""


def plan_downloads(dest: str | Path, only: Iterable[str] | None = None) -> list[Download]:
    """The files to download into ``dest`` (nothing is fetched).

    Args:
        dest: target folder.
        only: groups to include (default: all of :data:`GROUPS`).

    Raises:
        ValidationError: an unknown group name.
    """
    groups = _group_files()
    wanted = list(only) if only is not None else list(groups)
    unknown = [g for g in wanted if g not in groups]
    if unknown:
        raise ValidationError(f"unknown trace groups {unknown}", field="only", hint=f"choose from {list(groups)}")
    root = Path(dest)
    return [Download(url=url, path=root / rel) for g in wanted for url, rel in groups[g]]


def fetch(plan: Iterable[Download], *, overwrite: bool = False,
          opener: Callable[[str], bytes] | None = None, progress: Callable[[str], None] | None = None) -> int:
    """Download every file of ``plan`` (skipping existing ones unless ``overwrite``); return files written.

    Args:
        plan: from :func:`plan_downloads`.
        overwrite: fetch files that already exist.
        opener: ``url -> bytes`` (default: ``urllib.request`` with a 60 s timeout).
        progress: called with one line per file.
    """
    def _open(url: str) -> bytes:
        with urllib.request.urlopen(url, timeout=60) as response:
            data: bytes = response.read()
            return data

    get = opener or _open
    written = 0
    for item in plan:
        if item.path.exists() and not overwrite:
            if progress:
                progress(f"exists  {item.path}")
            continue
        item.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            data = get(item.url)
        except (urllib.error.URLError, OSError) as exc:  # HTTPError is a URLError; a timeout an OSError
            raise _download_error(item, exc, written) from exc
        tmp = item.path.with_suffix(item.path.suffix + ".part")
        tmp.write_bytes(data)
        os.replace(tmp, item.path)
        written += 1
        if progress:
            progress(f"fetched {item.path} ({len(data)} bytes)")
    return written


def _download_error(item: Download, exc: Exception, written: int) -> DownloadError:
    """What :func:`fetch` says when ``item`` could not be downloaded (``written`` files were before it)."""
    host = urllib.parse.urlsplit(item.url).hostname or item.url
    if isinstance(exc, urllib.error.HTTPError):
        why = f"{host} answered {exc.code} {exc.reason} for {item.url}"
        hint = "the source may have moved: check the URL in a browser; the files already written stay"
    else:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        text = str(getattr(reason, "strerror", None) or reason).strip() or type(reason).__name__
        why = f"cannot reach {host} ({text}) to download {item.url}"
        hint = ("this machine has no route to it: set HTTPS_PROXY if it needs a proxy, or download the files "
                "`--dry-run` lists on another machine and copy them to the paths it shows")
    done = f"; {written} file(s) written before it" if written else ""
    return DownloadError(why + done, hint=hint)
