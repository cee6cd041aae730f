"""What a server running jupyter_sched says about itself at start, and how it refuses to start.

Shared by both modes — embedded (``jupyter lab`` with the extension) and the hub service
(``jupyter-sched serve``, :class:`~jupyter_sched.hub.central.HubSchedApp`, a ``SchedApp``):

- :func:`check_config`: every bad ``c.SchedApp`` value ends the process with one critical line naming each
  field and its fix (Jupyter Server would log a traceback and serve on without the extension);
  :func:`config_exit` the same for one error found later (the store, an inventory file);
- :func:`say_started`: the one INFO line (version, store, inventory source, identity, placement; or the
  hub's scheduler a hub client forwards to) and the start-up WARNINGs about the store — a PostgreSQL
  that any job on this host can log in to as the service does (no password, ``trust``), or a
  superuser role (hubadmin 22, H5: said by the hub service only until session 23; an embedded
  ``jupyter lab`` on ``postgresql+psycopg://postgres@127.0.0.1/…`` runs its jobs on this host too).
"""

from __future__ import annotations

import logging
from typing import Any, NoReturn

from traitlets import TraitError

from ..buildinfo import version_string
from ..store.exposure import db_access, exposure_warning
from ..store.migrations import describe_migration, latest_version
from ..store.reach import reach_warning
from ..wording.config import config_error_text
from .request_log import redacted_url

__all__ = ["check_config", "config_exit", "say_started"]

log = logging.getLogger(__name__)


def config_exit(serverapp: Any, exc: TraitError) -> NoReturn:
    """Log ``exc`` (it names the field and the fix) as the one critical line, then end the process.

    Raises:
        SystemExit: always (exit status 1).
    """
    text = config_error_text(str(exc), config_name=getattr(serverapp, "config_file_name", None))  # its app's (N10)
    (getattr(serverapp, "log", None) or log).critical("jupyter_sched: bad configuration, not starting: %s", text)
    raise SystemExit(1)


def check_config(serverapp: Any, app: Any, exc: TraitError | None = None) -> None:
    """THE configuration check at start (:func:`.config_check.config_problems`) on ``app``'s config and
    ``serverapp``'s: with any bad setting, one critical line naming every one (field and fix; a setting that
    is no setting of the app with them, with its close name), then the process ends; ``exc`` (a setting
    refused while linking) is said alone only when the check finds nothing else. Returns when all is well.

    Raises:
        SystemExit: a bad setting (exit status 1).
    """
    from traitlets.config import Config

    from .config_check import config_problems

    merged = Config()
    merged.merge(app.config)
    merged.merge(serverapp.config)  # as linking loads them: the server's config (and its command line) last
    name = getattr(serverapp, "config_file_name", None)
    found = config_problems(merged, type(app), config_name=name)
    if not found.refused:
        if exc is not None:
            config_exit(serverapp, exc)
        for line in found.ignored:  # an unknown name alone: said once, with the fix, and it starts (newuser38 n27)
            (getattr(serverapp, "log", None) or log).warning("jupyter_sched: %s", line)
        return
    lines = [*found.refused, *found.ignored]
    text = lines[0] if len(lines) == 1 else f"{len(lines)} settings to fix:\n  " + "\n  ".join(lines)
    (getattr(serverapp, "log", None) or log).critical("jupyter_sched: bad configuration, not starting: %s", text)
    raise SystemExit(1)


def say_started(app: Any) -> None:
    """Log what ``app`` (a built ``SchedApp``: its traits and ``services``) runs on: one INFO line, then
    a WARNING when its store's database is open to the jobs on this host (:func:`database_warning`)."""
    if app.hub_service_url:  # new user 9, N8: it named a local store this server never uses
        app.log.info("jupyter_sched %s: forwards api/sched/ to the hub's scheduler at %s (no store here)",
                     version_string(), redacted_url(app.hub_service_url))
        return
    app.log.info("jupyter_sched %s: store %s, inventory source %s, identity %s, placement %s",
                 version_string(), redacted_url(app.store_url), app.inventory_source, app.identity_mode,
                 app.placement_policy)
    store = getattr(app.services, "store", None)
    if store is not None:  # hubadmin23 A7: "did my upgrade take?"
        migrated = list(getattr(store, "migrated", []))
        app.log.info("jupyter_sched: %s", describe_migration(migrated[0] - 1 if migrated else latest_version(), migrated))
    if said := database_warning(getattr(app.services, "store", None), executor=str(app.executor)):
        app.log.warning("jupyter_sched: database: %s", said)
    ctx = getattr(getattr(app.services, "jobs", None), "ctx", None)
    if ctx is not None and ctx.profiles:  # a profile no node can hold: said once here (newuser38 n28)
        from ..model.profiles import profiles_past_the_nodes

        largest = max((len(node.gpus) for node in ctx.inventory().nodes), default=0)
        for line in profiles_past_the_nodes(ctx.profiles, largest):
            app.log.warning("jupyter_sched: %s", line)


def database_warning(store: Any, *, executor: str) -> str | None:
    """:func:`~jupyter_sched.store.exposure.exposure_warning` for ``store`` (a
    :class:`~jupyter_sched.store.Store`, or None: nothing to say): a PostgreSQL login without a password
    to a server on this host while the ``local`` executor runs jobs here, and a superuser role; and
    :func:`~jupyter_sched.store.reach.reach_warning`: a PostgreSQL on this host that other accounts can open
    connections to while jobs run here (red38 R2). None for SQLite, a password login to a server only the
    service reaches, or a server that cannot be asked (best effort: one connection, at start)."""
    if store is None:
        return None
    access, jobs_here = db_access(store.engine), executor == "local"
    said = [w for w in (exposure_warning(access, jobs_here=jobs_here), reach_warning(access, jobs_here=jobs_here)) if w]
    return "; ".join(said) if said else None
