"""A Python environment other OS accounts can run, with this checkout's jupyter_sched in it.

The multi-user tests run user servers, kernels and jobs as real accounts (tests/accounts.py). Those
accounts cannot use the test run's own interpreter when it lives under /root (mode 0700; the
default python3 here is pyenv's there) or a venv inside a clone under /root. This module builds,
once, a venv from Debian's ``/usr/bin/python3`` in a 0755 folder::

    /var/tmp/jupyter_sched-runas/<key>/venv

* **packages**: when the running environment has the same Python minor version, its
  site-packages are hard-linked (copied where links fail) into the new venv — seconds, no network;
  otherwise ``pip install`` of the project's runtime, ``hub`` and ``postgres`` dependencies. The
  key hashes this checkout's path, the interpreter version and the list of installed
  distributions, so the venv is reused until either changes, and two checkouts on one machine
  never share (nor replace under each other's running servers) one venv.
* **jupyter_sched**: this checkout's package is copied into the venv when its content changed
  (a digest of its files is kept beside the copy), replacing the editable install's path hook, so
  the accounts run the code under test; an unchanged checkout is never rewritten under servers
  that are running it. A ``jupyter-sched`` script is written next to the interpreter. The copy has no
  ``.git``, so it says its version from ``_build_commit.py``: the checkout's own (git-ignored, written by
  the last panel build, maybe many commits ago) is left out and one naming the checkout's commit now is
  written (hubadmin26 B20: every hub test's service said a stale commit).

``scripts/runas-venv`` runs :func:`build` and prints the venv path (a CI stage; its output is
passed to pytest as ``JUPYTER_SCHED_RUNAS_VENV``); the tests call :func:`runas_venv`, which uses
that variable when set and builds otherwise.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from jupyter_sched.buildinfo import checkout_commit
from jupyter_sched.executors.safeopen import unsafe_folder
from tests.locks import file_lock

__all__ = ["ENV_VAR", "build", "runas_venv"]

ENV_VAR = "JUPYTER_SCHED_RUNAS_VENV"
BASE = Path("/var/tmp/jupyter_sched-runas")
SYSTEM_PYTHON = "/usr/bin/python3"
REPO = Path(__file__).resolve().parents[1]
_EDITABLE_MARKERS = ("__editable__", "_editable_impl_jupyter_sched")


def _python_version(python: str) -> str:
    return subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                          capture_output=True, text=True, check=True).stdout.strip()


def _site_packages(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python3.*/site-packages"))
    if not found:
        raise RuntimeError(f"{venv} has no site-packages")
    return found[0]


def _key(same_minor: bool) -> str:
    digest = hashlib.sha256()
    digest.update(str(REPO).encode())
    digest.update(_python_version(SYSTEM_PYTHON).encode())
    if same_minor:
        source = Path(sysconfig.get_paths()["purelib"])
        for entry in sorted(p.name for p in source.iterdir() if p.name.endswith(".dist-info")):
            digest.update(entry.encode())
    else:
        digest.update((REPO / "pyproject.toml").read_bytes())
    return digest.hexdigest()[:16]


def _link_tree(source: Path, target: Path) -> None:
    """Hard-link every file of ``source`` under ``target`` (copy across file systems), its bytecode too: the sources
    are the same files (a copy keeps their times), so ``source``'s ``.pyc`` are valid for them under the same minor
    version, and the accounts cannot write any there — without them each kernel an account started compiled the
    ~100 modules of IPython and ipykernel anew (~0.6 s CPU, session 41); the ones root's service imports it wrote
    itself. A file already there is kept (run again over a venv, it adds what is missing)."""
    for folder, dirs, files in os.walk(source):
        dirs[:] = [d for d in dirs if not d.startswith(_EDITABLE_MARKERS)]
        relative = Path(folder).relative_to(source)
        if relative.parts and relative.parts[0] == "jupyter_sched":
            continue
        (target / relative).mkdir(parents=True, exist_ok=True)
        for name in files:
            if name.startswith(_EDITABLE_MARKERS):
                continue
            src, dst = Path(folder) / name, target / relative / name
            if dst.exists() or dst.is_symlink():
                continue
            try:
                os.link(src, dst, follow_symlinks=False)
            except OSError:
                shutil.copy2(src, dst, follow_symlinks=False)


def _pip_install(venv: Path) -> None:
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"].get("hub", []),
              *project["optional-dependencies"].get("postgres", [])]
    subprocess.run([str(venv / "bin" / "python"), "-m", "ensurepip", "--upgrade"], check=True, capture_output=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *wanted], check=True)


_BYTECODE = "bytecode"
"""The marker (beside ``ready``) of a venv whose site-packages have their bytecode linked (:func:`_link_tree`)."""
_IGNORED = ("__pycache__", "*.pyc", "labextension", "node_modules", "_build_commit.py")
_DIGEST_FILE = ".checkout-digest"


def _checkout_digest(repo: Path, commit: str | None) -> str:
    """sha256 over the checkout's package files (relative names and bytes), as copied, and its commit."""
    digest = hashlib.sha256((commit or "").encode() + b"\0")
    source = repo / "jupyter_sched"
    for folder, dirs, files in sorted(os.walk(source)):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "labextension", "node_modules"))
        for name in sorted(files):
            if name.endswith(".pyc") or name == "_build_commit.py":
                continue
            path = Path(folder) / name
            digest.update(str(path.relative_to(source)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _copy_checkout(site: Path, repo: Path = REPO, python: str = sys.executable) -> None:
    """The checkout ``repo``'s jupyter_sched (not its bytecode, no built panel) into ``site``, replacing an older
    copy, with a ``_build_commit.py`` naming ``repo``'s commit now (none outside git), then compiled there by
    ``python`` (the interpreter the accounts run): the other accounts cannot write bytecode into this
    root-owned copy, so without it every process of theirs compiled the ~450 modules it imports anew (a
    server's import of the extension: ~0.5 s CPU more, session 29). Nothing is written when the copy there
    is already this content at this commit."""
    target = site / "jupyter_sched"
    commit = checkout_commit(repo)
    digest = _checkout_digest(repo, commit)
    marker = target / _DIGEST_FILE
    if marker.exists() and marker.read_text() == digest:
        return
    staging = site / f".jupyter_sched.new.{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(repo / "jupyter_sched", staging, ignore=shutil.ignore_patterns(*_IGNORED))
    if commit is not None:
        (staging / "_build_commit.py").write_text(f'"""The commit of the checkout this copy was made from."""\n\n'
                                                  f'COMMIT = {commit!r}\n')
    (staging / _DIGEST_FILE).write_text(digest)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    # after the rename: the bytecode names the files where they are run from (tracebacks)
    subprocess.run([python, "-m", "compileall", "-q", str(target)], check=True, capture_output=True)
    for stale in site.glob("*.pth"):
        if stale.name.startswith(_EDITABLE_MARKERS):
            stale.unlink()


def build(base: Path = BASE) -> Path:
    """Build (or reuse) the venv of the module docstring; return its folder.

    Raises:
        RuntimeError: ``/usr/bin/python3`` is missing, or ``base`` (or the venv's folder in it) is
            not a folder only this account controls (another account made it first under the
            world-writable /var/tmp: it could hold a planted interpreter that the hub tests run as root).
        subprocess.CalledProcessError: venv creation or pip failed.
    """
    if not Path(SYSTEM_PYTHON).exists():
        raise RuntimeError(f"{SYSTEM_PYTHON} is missing (apt-get install -y python3 python3-venv)")
    same_minor = _python_version(SYSTEM_PYTHON) == f"{sys.version_info[0]}.{sys.version_info[1]}"
    folder = base / _key(same_minor)
    venv = folder / "venv"
    ready = folder / "ready"
    base.mkdir(mode=0o755, parents=True, exist_ok=True)
    for path in (base, folder):
        unsafe = unsafe_folder(path) if path.exists() or path.is_symlink() else None
        if unsafe is not None:
            raise RuntimeError(f"refusing to use {path} for the venv other accounts run: {unsafe}; another "
                               f"account could have planted a venv there that runs as root: remove {base} "
                               "(as root) and run again")
    for path in (base.parent, base, folder):
        if path.exists():
            path.chmod(path.stat().st_mode | 0o755)
    # one builder at a time: the test processes of a parallel run (pytest-xdist) call this at once, and a second
    # builder's rmtree of a half-built folder, or its rewrite of the copy, pulled files from under the first
    with file_lock(base / f".{folder.name}.lock"):
        return _build_locked(folder, venv, ready, same_minor)


def _build_locked(folder: Path, venv: Path, ready: Path, same_minor: bool) -> Path:
    """:func:`build`'s work, under its lock: make the venv when ``ready`` is missing, refresh the checkout's copy,
    (re)write the ``jupyter-sched`` script only when its text changed (a running test may be starting it)."""
    if not ready.exists():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(mode=0o755, parents=True)
        subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
        if same_minor:
            _link_tree(Path(sysconfig.get_paths()["purelib"]), _site_packages(venv))
        else:
            _pip_install(venv)
        ready.write_text("ok\n")
        (folder / _BYTECODE).write_text("ok\n")
    if same_minor and not (folder / _BYTECODE).exists():  # a venv linked before its bytecode was
        _link_tree(Path(sysconfig.get_paths()["purelib"]), _site_packages(venv))
        (folder / _BYTECODE).write_text("ok\n")
    _copy_checkout(_site_packages(venv), python=str(venv / "bin" / "python"))
    script = venv / "bin" / "jupyter-sched"
    text = f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom jupyter_sched.cli.main import main\nsys.exit(main())\n"
    if not script.exists() or script.read_text() != text:
        staged = script.with_name(f".jupyter-sched.{os.getpid()}")
        staged.write_text(text)
        staged.chmod(0o755)
        staged.rename(script)
    subprocess.run(["chmod", "-R", "o+rX", str(folder)], check=True)
    return venv


def runas_venv() -> Path:
    """The venv for other accounts: ``$JUPYTER_SCHED_RUNAS_VENV`` when set, else :func:`build`."""
    given = os.environ.get(ENV_VAR)
    if given:
        return Path(given)
    return build()


if __name__ == "__main__":
    print(build())
