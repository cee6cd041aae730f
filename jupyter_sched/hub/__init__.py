"""Hub mode: one scheduler for every user of a JupyterHub.

- :mod:`.serve` — ``jupyter-sched serve``: the central service (the same engine and REST API as
  the embedded extension) run as a JupyterHub service, on PostgreSQL.
- :mod:`.central` — ``HubSchedApp``: the extension as the central service loads it (hub identity,
  hub admins, hub groups as teams, releasing leases of servers the hub reports stopped).
- :mod:`.identity` — authentication with JupyterHub (``HubOAuth``: token header or OAuth cookie).
- :mod:`.forward` — per-user servers as clients: forward ``api/sched/*`` to the central service
  with the server's hub token (``c.SchedApp.hub_service_url``).
- :mod:`.budgets` — 80 % / 100 % GPU-hour budget warnings (audited once per period, pushed as events).
- :mod:`.activity` — running jobs and live leases reported to the hub as user activity (idle culling).
- :mod:`.usage` — ``GET usage/report``: allocated/utilized GPU-hours, cost, efficiency, CSV.
- :mod:`.spawn_form` — a JupyterHub spawn form whose GPU profiles follow the service's inventory
  (disabled, with the reason, on a cluster without GPU nodes; case 027).
- :mod:`.fence` — ``FencedLocalProcessSpawner``: users' servers and kernels on the GPU host open no
  GPU but those of their granted kernel leases (red team 16, R1).

Only :mod:`.identity`, :mod:`.central`, :mod:`.serve` and :mod:`.fence` need ``jupyterhub`` installed (the
central service); a user server that forwards needs only ``httpx``.

Importing this package imports nothing from JupyterHub; the modules that need it import it.
"""

from __future__ import annotations

__all__: list[str] = []
