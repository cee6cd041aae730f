"""Which kernels a hub job's notebook can start, read from folders as the job's account may list them.

A notebook whose kernel is not installed where its job runs is refused at submit (newuser33 N4); on a hub that
needs the kernels the *owner's* runner would find, and running a Python as the owner on each submit costs
0.15 to 0.8 s on the request's thread. jupyter_client's lookup is a plain folder walk instead
(:func:`jupyter_core.paths.jupyter_path` ``("kernels")``, each entry a folder holding ``kernel.json``), so it is read
here without running anything, for a runner started the way hub jobs are (:func:`.runas.clean_environment`: ``HOME``
is the owner's; ``JUPYTER_PATH``, ``JUPYTER_DATA_DIR``, ``XDG_DATA_HOME`` and ``PYTHONUSERBASE`` are unset):

- the owner's data folder, ``~/.local/share/jupyter/kernels`` (also the user site's: ``~/.local`` is its base),
- the job Python's environment, ``{sys.prefix}/share/jupyter/kernels`` — its ``pyvenv.cfg`` folder, or the
  prefix of the interpreter it links to (both are listed: listing one more folder can only find more),
- the system's, ``/usr/local/share/jupyter/kernels`` and ``/usr/share/jupyter/kernels``,

and ``python3``, which jupyter_client adds wherever ipykernel can be imported (never refused here). A name is
refused only when every folder was read: one that exists but the account may not list makes the answer "not
known" (None), and the runner says it at start as before.

Standard library only.
"""

from __future__ import annotations

import os

from .module_names import AccountReader

__all__ = ["account_kernel_names"]

NATIVE_KERNEL = "python3"
SYSTEM_KERNEL_FOLDERS = ("/usr/local/share/jupyter/kernels", "/usr/share/jupyter/kernels")


def account_kernel_names(job_python: str, *, home: str, uid: int | None) -> list[str] | None:
    """The kernel names (lower case, as jupyter_client keys them) a notebook runner of ``job_python`` run as the
    account ``uid`` with ``HOME`` = ``home`` would find, sorted; None when a folder it searches exists but ``uid``
    may not list it, or ``job_python`` is not an absolute path."""
    if not os.path.isabs(job_python) or not os.path.isabs(home):
        return None
    prefixes = dict.fromkeys([os.path.dirname(os.path.dirname(job_python)),  # a venv: /p/.venv/bin/python
                              os.path.dirname(os.path.dirname(os.path.realpath(job_python)))])
    folders = [os.path.join(home, ".local", "share", "jupyter", "kernels"),
               *(os.path.join(prefix, "share", "jupyter", "kernels") for prefix in prefixes),
               *SYSTEM_KERNEL_FOLDERS]
    reader = AccountReader(uid)
    names = {NATIVE_KERNEL}
    for folder in dict.fromkeys(folders):
        listed = reader.listing(folder)
        if listed is None:
            return None
        names.update(entry.lower() for entry in listed)
    return sorted(names)
