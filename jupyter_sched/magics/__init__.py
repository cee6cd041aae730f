"""IPython magics: ``%gpu`` (interactive GPU leases for the kernel) and ``%schedule`` / ``%%schedule`` (jobs).

Load in a notebook with ``%load_ext jupyter_sched``. To load it in every kernel, an admin adds
to an IPython profile's ``ipython_config.py`` (e.g. ``/etc/ipython/ipython_config.py`` or
``~/.ipython/profile_default/ipython_config.py``)::

    c.InteractiveShellApp.extensions = ["jupyter_sched"]

Every magic has help with examples (``%gpu?``, ``%schedule?``). The magics find the server as
documented in :mod:`jupyter_sched.client.discovery`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%gpu``, ``%schedule`` and ``%%schedule`` on ``ipython``."""
    from .completion import register
    from .core import SchedMagics
    from .cuda import announce_gpu_notice

    ipython.register_magics(SchedMagics)
    register(ipython)  # Tab after %gpu / %schedule (newuser41 n1): sends nothing until a completion needs it
    announce_gpu_notice(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """Nothing to undo: the magics stay registered until the kernel ends (IPython has no unregister)."""
