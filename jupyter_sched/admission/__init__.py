"""Admission: who is asking, and may they ask this? One step, before any service stores anything.

- :mod:`.caller` — :class:`Caller` (user, teams, granted classes per team, admin), the value every
  service receives; :func:`system_caller` for the service's own work.
- :mod:`.policy` — :class:`AdmissionPolicy` (``default_team``, ``user_teams``,
  ``priority_grants``) and :func:`resolve_caller` (pure): teams from hub groups or config.
- :mod:`.rules` — the pure checks of a job or lease request: bounded strings, team membership,
  granted priority classes, hard quota ceilings (case 030).
- :mod:`.fit` — :class:`FitCheck`: can the request ever run on this inventory (the core's answer).
- :mod:`.gate` — :class:`Admission` (edge): resolves callers, runs the rules, audits each refusal.
"""

from .caller import DEFAULT_CLASSES, PRIORITY_CLASSES, Caller, PriorityGrants, system_caller
from .fit import FitCheck
from .gate import REFUSED, Admission
from .policy import AdmissionPolicy, known_teams, resolve_caller
from .rules import check_ceiling, check_job, check_priority, check_team, check_text

# loaded at start: every submit reads its name through TR39's skeleton (rules.read_as_id, red42 R1), and a server
# whose jupyter_sched was reinstalled under it must not meet a module it never loaded (newuser31 N10: a 500)
from . import user_names  # noqa: F401  isort: skip

__all__ = [
    "DEFAULT_CLASSES",
    "PRIORITY_CLASSES",
    "REFUSED",
    "Admission",
    "AdmissionPolicy",
    "Caller",
    "FitCheck",
    "PriorityGrants",
    "check_ceiling",
    "check_job",
    "check_priority",
    "check_team",
    "check_text",
    "known_teams",
    "resolve_caller",
    "system_caller",
]
