"""The command line of ``jupyter-sched serve`` (:mod:`.serve`): its options and help, with the standard library
and :mod:`jupyter_sched.wording` alone — ``jupyter-sched serve --help`` loads no jupyter_server, traitlets or
SQLAlchemy (newuser29 n13: 2-3 s of wall time before the help, as ``status --help`` takes 0.2 s)."""

from __future__ import annotations

import argparse

from ..wording.config import CONFIG_FILE

__all__ = ["ENV_DB_URL", "ENV_DB_URL_FILE", "parser"]

ENV_DB_URL = "JUPYTER_SCHED_DB_URL"
"""Environment variable giving the store URL."""
ENV_DB_URL_FILE = "JUPYTER_SCHED_DB_URL_FILE"
"""Environment variable naming a file that holds the store URL (e.g. a mounted secret)."""


SERVE_EXIT_STATUS = ("Exit status: 0 stopped cleanly (SIGINT or SIGTERM, as the hub stops a managed service); 2 bad input or\n"
                     "configuration, said before anything starts (no or a bad store URL, JUPYTERHUB_API_URL/_TOKEN unset, a\n"
                     "setting it cannot read, root without --allow-root); 1 could not start (the [hub] extra missing, the\n"
                     "port taken).")
"""``serve``'s exit statuses, in its --help as every subcommand's (newuser40 n1: serve, simulate and fetch-traces
were the three --help pages that said none)."""


def parser() -> argparse.ArgumentParser:
    """The parser of ``jupyter-sched serve``'s own options (the ServerApp's ``--Class.trait=value`` pass through)."""
    found = argparse.ArgumentParser(
        prog="jupyter-sched serve", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run the central jupyter_sched service for a JupyterHub (see jupyter_sched.hub.serve).",
        epilog=f"""settings:
  Any setting of the service is --SchedApp.NAME=VALUE or --HubSchedApp.NAME=VALUE on the command
  line (e.g. --SchedApp.log_dir=/var/lib/jupyter_sched/jobs --HubSchedApp.hub_poll_interval_s=30).
  List and dict settings (quotas, admin_users, gpu_prices, run_as_accounts, ...) go in a config
  file instead: {CONFIG_FILE} in a Jupyter config folder ($JUPYTER_CONFIG_DIR, default
  ~/.jupyter; `jupyter --paths` lists them all), or any file given with --config=FILE:

    c.SchedApp.quotas = [{{"team": "vision", "guaranteed": 2, "borrowing_limit": 1}}]
    c.SchedApp.admin_users = ["bob"]
    c.HubSchedApp.gpu_prices = {{"*": 2.5}}

  Quotas can also be changed while it runs: PUT api/sched/quotas as a hub admin.

{SERVE_EXIT_STATUS}""")
    found.add_argument("--db-url", default=None,
                        help=f"store URL without a password, e.g. postgresql+psycopg://sched@db/sched (one with a "
                             f"password goes in ${ENV_DB_URL} or --db-url-file)")
    found.add_argument("--db-url-file", default=None,
                        help=f"file holding the store URL (default: ${ENV_DB_URL_FILE})")
    found.add_argument("--ip", default=None, help="listen address (default: from JUPYTERHUB_SERVICE_URL)")
    found.add_argument("--port", type=int, default=None, help="listen port (default: from JUPYTERHUB_SERVICE_URL)")
    found.add_argument("--base-url", default=None, help="URL prefix (default: $JUPYTERHUB_SERVICE_PREFIX)")
    found.add_argument("--allow-root", action="store_true",
                        help="allow running as root (needed by the local executor in hub mode, which then runs "
                             "each job as its owner's OS account)")
    found.add_argument("--allow-unprivileged-port", action="store_true",
                        help="listen on a port any local account may bind (1024 and up) — refused otherwise with "
                             "the local executor: while the service is down another account could take the port "
                             "and receive users' calls with their tokens (c.HubSchedApp.allow_unprivileged_port)")
    return found
