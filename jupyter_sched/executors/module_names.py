"""Which top-level modules a job's Python can import, read from its folders without running it (newuser33 N1).

A job that failed on ``import nump`` was told to ``pip install nump`` — a name one typo from a popular package is
how typo-squatted packages on PyPI get installed — while numpy sat in that very Python. :func:`near_module` finds
the name the user likely meant among the modules that Python has, so the failure's hint
(:func:`.outcome.missing_module_hint`) says "did you mean numpy?" and offers no install line.

The job's Python is the user's: it is never run here (a slow or hostile interpreter would hold whoever builds the
reason — the executor's poll, on the engine's cycle). Its names are read from its folders instead: the
``site-packages`` (``dist-packages``) folders of its prefix and, for a virtual environment (``pyvenv.cfg``), of its
base Python when the venv includes them; the standard library's names are this process's
(:data:`sys.stdlib_module_names`: a near Python's are the same). The reading is bounded (:data:`MAX_FOLDERS`
folders, :data:`MAX_ENTRIES` entries each; files opened by :func:`~jupyter_sched.safefd.open_fd`) and, for a job run as another account, limited to folders that account
may list itself — a name in a folder it cannot read is never said to it.

Standard library only: :mod:`.outcome` imports it.
"""

from __future__ import annotations

import difflib
import heapq
import os
import pwd
import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable

from ..safefd import open_fd

__all__ = ["MAX_ENTRIES", "MAX_FOLDERS", "AccountReader", "importable_names", "near_module"]

MAX_FOLDERS = 6
"""Most folders listed for one Python (its site folders, its base Python's, those its ``.pth`` files name)."""
MAX_ENTRIES = 10_000
"""Most entries read of one folder (a site-packages of a large environment holds ~1,000)."""
_CFG_BYTES = 4096
_PTH_BYTES = 4096
MAX_NAME = 40
"""Longest module name compared (:func:`near_module`): PyPI's import names people type are far shorter."""
MAX_COMPARED = 300
"""Most names one :func:`near_module` compares (each :class:`difflib.SequenceMatcher` ratio is pure Python)."""
COMPARE_BUDGET_S = 0.02
"""Most seconds one :func:`near_module` spends comparing (on the engine's thread; a real site folder's ~1,000 names
take ~2 ms)."""
_CUTOFF = 0.8
"""How alike a name must be (:func:`difflib.get_close_matches`' ratio): ``nump``/``numpy`` 0.89, ``torchh``/``torch``
0.91, ``jsn``/``json`` 0.86; ``scipy``/``scapy`` 0.8; ``torchvision``/``torchaudio`` 0.67 is not near."""
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_VERSION = re.compile(r"python(\d+\.\d+)")


class AccountReader:
    """Lists folders and reads small files as ``uid`` may (None: as this process may)."""

    def __init__(self, uid: int | None) -> None:
        self.uid = None if uid is None or uid in (0, os.geteuid()) else uid
        self.groups: frozenset[int] = frozenset()
        if self.uid is not None:
            try:
                entry = pwd.getpwuid(self.uid)
                self.groups = frozenset(os.getgrouplist(entry.pw_name, entry.pw_gid))
            except (KeyError, OSError):
                pass  # no groups known: only what its own or everyone's bits allow

    def _allows(self, info: os.stat_result, want: int) -> bool:
        """Whether the mode bits of ``info`` give ``self.uid`` all of ``want`` (4 read, 1 search), as the kernel decides."""
        if self.uid is None:
            return True
        shift = 6 if info.st_uid == self.uid else 3 if info.st_gid in self.groups else 0
        return (info.st_mode >> shift) & want == want

    def _may(self, fd: int, want: int) -> bool:
        """Whether ``uid`` has ``want`` on the file open as ``fd`` and could reach it: every folder above the place the
        kernel opened it at (``/proc/self/fd``: no link left in it) searchable by ``uid``, and that place still it.
        Decided on what was opened, never on a path opened again after (red33 R5: a link the job's owner swapped
        between a check by path and a listing by path showed root's listing of another account's private folder)."""
        if self.uid is None:
            return True
        try:
            if not self._allows(os.fstat(fd), want):
                return False
            real = os.readlink(f"/proc/self/fd/{fd}")
            if not real.startswith("/") or real.endswith(" (deleted)"):
                return False
            here, opened = os.stat(real), os.fstat(fd)
            if (here.st_dev, here.st_ino) != (opened.st_dev, opened.st_ino):
                return False  # moved since: its way is not known
            parent = os.path.dirname(real)
            while True:
                if not self._allows(os.stat(parent), 1):
                    return False
                if parent == os.path.dirname(parent):
                    return True
                parent = os.path.dirname(parent)
        except OSError:
            return False

    def names(self, folder: str) -> list[str]:
        """At most :data:`MAX_ENTRIES` entry names of ``folder``; [] when it is none or ``uid`` may not list it."""
        return self.listing(folder) or []

    def listing(self, folder: str) -> list[str] | None:
        """At most :data:`MAX_ENTRIES` entry names of ``folder``; [] when there is no such folder, None when there is
        one ``uid`` may not list (what it holds is then not known, not "nothing")."""
        try:
            fd = open_fd(folder, os.O_RDONLY | os.O_DIRECTORY, kind="dir")
        except FileNotFoundError:
            return []
        except OSError:
            return None
        found: list[str] = []
        try:
            if not self._may(fd, 4 | 1):
                return None
            with os.scandir(fd) as entries:  # the folder checked, not its path again
                for entry in entries:
                    found.append(entry.name)
                    if len(found) >= MAX_ENTRIES:
                        break
        except OSError:
            return None
        finally:
            os.close(fd)
        return found

    def text(self, path: str, limit: int) -> str:
        """The first ``limit`` bytes of the regular file ``path`` ("" when none, or ``uid`` may not read it)."""
        try:
            fd = open_fd(path, os.O_RDONLY)  # a regular file only, never waiting on a FIFO put in its place
        except OSError:
            return ""
        try:
            return os.read(fd, limit).decode("utf-8", errors="replace") if self._may(fd, 4) else ""
        except OSError:
            return ""
        finally:
            os.close(fd)


def _site_folders(prefix: str, version: str | None, reader: AccountReader) -> list[str]:
    """The ``site-packages`` / ``dist-packages`` folders under ``prefix`` (of ``python3.X`` = ``version`` when
    known, else of each ``lib/python3.X``)."""
    folders: list[str] = []
    for lib in ("lib", "lib64", os.path.join("local", "lib")):
        base = os.path.join(prefix, lib)
        kept = sorted(name for name in reader.names(base)
                      if (name in (f"python{version}", "python3") if version else re.fullmatch(r"python3(\.\d+)?", name)))
        for name in kept:
            for leaf in ("site-packages", "dist-packages"):
                folder = os.path.join(base, name, leaf)
                if os.path.isdir(folder) and folder not in folders:
                    folders.append(folder)
    return folders


def _venv(prefix: str, reader: AccountReader) -> dict[str, str] | None:
    """``pyvenv.cfg``'s settings of a virtual environment at ``prefix`` (lower-case keys); None: not one."""
    text = reader.text(os.path.join(prefix, "pyvenv.cfg"), _CFG_BYTES)
    if not text:
        return None
    settings: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            settings[key.strip().lower()] = value.strip()
    return settings


def _folders(python: str, reader: AccountReader) -> list[str]:
    """The folders whose entries ``python`` (an absolute path) imports from, besides its standard library."""
    prefix = os.path.dirname(os.path.dirname(python))  # /p/.venv/bin/python → /p/.venv (a venv's python is a link)
    real = os.path.realpath(python)
    found = _VERSION.search(os.path.basename(real))
    version = found.group(1) if found else None
    folders: list[str] = []
    venv = _venv(prefix, reader)
    if venv is not None:
        found = re.match(r"(\d+\.\d+)", venv.get("version", "") or venv.get("version_info", ""))
        version = found.group(1) if found else version
        folders += _site_folders(prefix, version, reader)
        if venv.get("include-system-site-packages", "").lower() != "true":
            return folders
        home = venv.get("home", "")
        base = os.path.dirname(home) if os.path.isabs(home) else ""
    else:
        base = os.path.dirname(os.path.dirname(real))
        folders += _site_folders(prefix, version, reader) if prefix != base else []
    if base:
        folders += [folder for folder in _site_folders(base, version, reader) if folder not in folders]
    return folders


def _top_names(entries: Iterable[str]) -> set[str]:
    """The importable top-level names among a folder's entries: packages, ``.py`` files, extension modules."""
    names: set[str] = set()
    for entry in entries:
        stem, dot, suffix = entry.partition(".")
        if not _IDENTIFIER.fullmatch(stem) or stem == "__pycache__":
            continue
        if not dot or suffix == "py" or suffix.endswith(("so", "pyd")):
            names.add(stem)
    return names


def importable_names(python: str | None, *, owner_uid: int | None = None) -> frozenset[str] | None:
    """The top-level module names ``python`` can import: its site folders' (and the folders their ``.pth`` files
    add) and the standard library's; None when ``python`` is not an absolute path or none of its site folders
    could be listed (then nothing is known of what it has). Listed as ``owner_uid`` may list them."""
    if not python or not os.path.isabs(python):
        return None
    reader = AccountReader(owner_uid)
    folders = _folders(python, reader)[:MAX_FOLDERS]
    # the same Python's names again while its site folders are as they were (each job's end asks: red34 R1's
    # residual, 60,000 planted names listed again at every failed job of the same venv)
    key = (python, owner_uid)
    signature = tuple(_signature(folder) for folder in folders)
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
        if cached is not None and cached[0] == signature:
            _CACHE.move_to_end(key)
            return cached[1]
    found = _listed_names(folders, reader)
    with _CACHE_LOCK:
        _CACHE[key] = (signature, found)
        while len(_CACHE) > _CACHE_MOST:
            _CACHE.popitem(last=False)
    return found


_CACHE: OrderedDict[tuple[str, int | None], tuple[tuple[tuple[int, int] | None, ...], frozenset[str] | None]] = \
    OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_MOST = 64
"""Most Pythons whose names :func:`importable_names` keeps (per account), the least recently asked dropped."""


def _signature(folder: str) -> tuple[int, int] | None:
    """``(inode, mtime in ns)`` of ``folder`` — an entry added or removed changes it — or None when it is none."""
    try:
        info = os.stat(folder)
    except OSError:
        return None
    return info.st_ino, info.st_mtime_ns


def _listed_names(folders: list[str], reader: AccountReader) -> frozenset[str] | None:
    """:func:`importable_names` of the site ``folders``, read as ``reader`` may."""
    names: set[str] = set()
    listed = 0
    for folder in list(folders):
        if listed >= MAX_FOLDERS:
            break
        entries = reader.names(folder)
        listed += 1
        names |= _top_names(entries)
        for pth in sorted(entry for entry in entries if entry.endswith(".pth"))[:MAX_FOLDERS]:
            for line in reader.text(os.path.join(folder, pth), _PTH_BYTES).splitlines():
                extra = line.strip()
                if extra and not extra.startswith(("#", "import")) and listed < MAX_FOLDERS:
                    extra = extra if os.path.isabs(extra) else os.path.join(folder, extra)
                    if os.path.isdir(extra) and extra not in folders:  # an editable install's source folder
                        folders.append(extra)
                        names |= _top_names(reader.names(extra))
                        listed += 1
    if not names:
        return None
    return frozenset(names | set(getattr(sys, "stdlib_module_names", ())) | set(sys.builtin_module_names))


def near_module(module: str, names: Iterable[str], *, budget_s: float = COMPARE_BUDGET_S) -> str | None:
    """The one of ``names`` that ``module`` (a top-level name that failed to import) is likely a misspelling of:
    the same name in other case (``Numpy``), else the closest one alike enough (:data:`_CUTOFF`, as
    :func:`difflib.get_close_matches` judges it); None.

    Bounded work, whatever the names (red34 R1: both ``module`` and ``names`` are the job owner's to choose, and
    this runs on the engine's thread at the job's end; 60,000 planted names of ~120 alike characters held every
    start and end for four minutes): a name past :data:`MAX_NAME` characters is never compared (no module a
    person types is that long); only names whose length could reach the cut-off are (``ratio = 2·M/(a+b) ≥ 0.8``
    needs the longer at most 1.5 times the shorter), the nearest in length first, at most :data:`MAX_COMPARED`
    of them and for at most ``budget_s`` seconds (a hint is a nicety: past it, the best found so far or none)."""
    size = len(module)
    if size > MAX_NAME:
        return None
    by_length: dict[int, list[str]] = {}
    for name in names:
        if len(name) <= MAX_NAME and name != module:
            by_length.setdefault(len(name), []).append(name)
    same = [name for name in by_length.get(size, ()) if name.lower() == module.lower()]
    if same:
        return min(same)
    lengths = sorted((length for length in by_length
                      if (2 - _CUTOFF) * min(size, length) >= _CUTOFF * max(size, length)),
                     key=lambda length: (abs(length - size), length))
    reachable = [name for length in lengths for name in heapq.nsmallest(MAX_COMPARED, by_length[length])][:MAX_COMPARED]
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(module)
    best: tuple[float, str] | None = None
    deadline = time.monotonic() + budget_s
    for name in reachable:
        matcher.set_seq1(name)
        if matcher.real_quick_ratio() >= _CUTOFF and matcher.quick_ratio() >= _CUTOFF:
            score = matcher.ratio()
            if score >= _CUTOFF and (best is None or score > best[0]):
                best = (score, name)
        if time.monotonic() > deadline:
            break
    return best[1] if best else None
