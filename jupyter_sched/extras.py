"""How to install one of jupyter_sched's extras, said the way that works for this install.

Every hint of the form "pip install 'jupyter_sched[hub]'" assumed a package index that has
jupyter_sched; the README installs it from a clone (``pip install '.[all]'``), where that command
fails (new user 5, finding 9). pip records where an install came from (PEP 610
``direct_url.json``): a local folder is named in the hint, anything else keeps the package name.
"""

from __future__ import annotations

import json
from urllib.parse import unquote, urlparse

__all__ = ["install_extra"]


def install_extra(extra: str) -> str:
    """``pip install '/src/jupyter_sched[hub]'`` when this install came from a local folder (a
    clone, editable or not), else ``pip install 'jupyter_sched[hub]'``."""
    return f"pip install '{_source() or 'jupyter_sched'}[{extra}]'"


def _source() -> str | None:
    """The local folder this distribution was installed from, or None (an index, a wheel file,
    no metadata)."""
    from importlib import metadata

    try:
        text = metadata.distribution("jupyter_sched").read_text("direct_url.json")
        info = json.loads(text) if text else {}
    except (metadata.PackageNotFoundError, ValueError, OSError):
        return None
    url = urlparse(str(info.get("url") or ""))
    if url.scheme != "file" or "dir_info" not in info:
        return None
    return unquote(url.path) or None
