"""THE check of a store URL, before anything connects — for the embedded server (``c.SchedApp.db_url``),
``jupyter-sched serve`` (which sets that trait), ``jupyter-sched doctor --db`` and :class:`~.store.Store`.

New user 14, N22: ``doctor --db notaurl`` ended in a 19-line traceback (``sqlalchemy.exc.ArgumentError``),
``doctor --db mysql://…`` in ``ModuleNotFoundError: No module named 'MySQLdb'``, and an embedded server
given ``db_url=mysql://…`` logged the traceback and served on without its scheduler. Each now says one
line: what is wrong with the URL and how to write one the store takes. The store runs on SQLite and
PostgreSQL only (its SQL has both dialects' branches, nothing else).

Also the one rule for a password on the command line (:func:`password_on_command_line`): ``serve
--db-url`` refused it, ``doctor --db`` took it — the same secret, readable by every local user with
``ps``, under two rules.
"""

from __future__ import annotations

from urllib.parse import urlparse

import sqlalchemy as sa

__all__ = ["EXAMPLES", "SUPPORTED", "has_password", "password_on_command_line", "safe_url", "store_url_problem"]

SUPPORTED = ("sqlite", "postgresql")
"""The databases the store's SQL is written for."""
EXAMPLES = "use e.g. sqlite:////path/sched.sqlite or postgresql+psycopg://user@host/db"
"""How to write a store URL, said with every refusal of one."""


def store_url_problem(url: str) -> tuple[str, str] | None:
    """``(problem, fix)`` when ``url`` cannot name a store here, else None. Nothing connects: the URL
    is parsed, its database checked against :data:`SUPPORTED` and its driver module imported (as
    the engine would), so a typo or a driver that is not installed is said before any server starts.

    ``problem`` is a clause without the URL (the caller names the setting and the value, password
    hidden: :func:`safe_url`); ``fix`` says how to write one that works.
    """
    if "://" not in url:
        return "is not an SQLAlchemy URL", EXAMPLES
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError:
        return "is not an SQLAlchemy URL", EXAMPLES
    backend, driver = parsed.get_backend_name(), parsed.drivername
    if backend not in SUPPORTED:
        return (f"the store runs on SQLite or PostgreSQL, not {backend!r}", EXAMPLES)
    try:
        dialect = parsed.get_dialect()
    except sa.exc.NoSuchModuleError:
        return (f"{driver!r} is not a database driver SQLAlchemy knows",
                "use postgresql+psycopg://user@host/db (psycopg comes with jupyter_sched) or sqlite:////path/sched.sqlite")
    try:
        dialect.import_dbapi()
    except ImportError as exc:
        return (f"the driver of {driver!r} is not installed (no Python module {exc.name or 'for it'})",
                "use postgresql+psycopg://user@host/db (psycopg comes with jupyter_sched), or install that driver")
    return None


def safe_url(url: str) -> str:
    """``url`` with a password hidden (``***``), as far as it parses; a string that is no URL as it is."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return url


def has_password(url: str) -> bool:
    """True when a URL carries a password (``scheme://user:password@host``)."""
    try:
        return bool(urlparse(url).password) if "://" in url else False
    except ValueError:  # a port that is not a number: no password to find
        return False


def password_on_command_line(option: str, *, file_option: str = "") -> str:
    """THE refusal of a store URL with a password given as ``option`` on a command line, for ``serve``
    and ``doctor`` alike: where to put it instead (``file_option``: the command's own option naming a
    file that holds the URL, if it has one)."""
    file = f"a file named by {file_option} / $JUPYTER_SCHED_DB_URL_FILE" if file_option else \
        "a file named by $JUPYTER_SCHED_DB_URL_FILE"
    return (f"{option} carries a password, which every local user can read with ps; put the URL in "
            f"$JUPYTER_SCHED_DB_URL or {file}")
