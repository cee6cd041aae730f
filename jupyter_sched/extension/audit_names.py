"""One name per request in the audit log, whichever layer refused it (new user 15, N8).

A refusal is audited with ``details.request``: the admission step and the services name the action
(``submit job``, ``request lease``, ``create definition``); the web layer, refusing a body its
request model does not take, named the route (``POST jobs``). An admin filtering "who tried to
submit" by request saw half. :func:`request_name` gives the web layer the services' words for the
routes that have them, and ``METHOD route`` for the rest.
"""

from __future__ import annotations

from ..errors import AuthorizationError, QuotaError, SchedError, UnschedulableError, ValidationError

__all__ = ["ACTION_NAMES", "is_audited_refusal", "request_name"]

_REFUSALS = (ValidationError, AuthorizationError, QuotaError, UnschedulableError)
"""Errors that refuse what the caller asked; not-found, conflict and busy answers describe state."""

_READS = frozenset({"GET", "HEAD"})

ACTION_NAMES: dict[tuple[str, str], str] = {
    ("POST", "jobs"): "submit job",
    ("POST", "leases"): "request lease",
    ("POST", "dryrun"): "dry run",
    ("POST", "definitions/preview"): "preview schedule",
    ("DELETE", "jobs/{job_id}"): "cancel job",
    ("PATCH", "jobs/{job_id}"): "update job",
    ("DELETE", "leases/{lease_id}"): "cancel lease",
    ("POST", "leases/{lease_id}/keepalive"): "keep a lease alive",
    ("POST", "definitions"): "create definition",
    ("PATCH", "definitions/{definition_id}"): "edit definition",
    ("DELETE", "definitions/{definition_id}"): "delete definition",
    ("POST", "definitions/{definition_id}/runs"): "run definition",
}
"""``(method, route template)`` → the action the services audit that request as."""


def request_name(method: str, template: str, *, lease: bool = False) -> str:
    """The audit's name of a ``method`` request to ``template`` (``jobs/{job_id}``): the action
    (``submit job``; ``request lease`` for ``POST jobs`` of kind lease), else ``METHOD route``."""
    if lease and (method, template) == ("POST", "jobs"):
        return "request lease"
    return ACTION_NAMES.get((method, template), f"{method} {template}"[:80])


def is_audited_refusal(method: str, err: SchedError) -> bool:
    """Does answering ``method`` with ``err`` go on the audit log? A refusal of what the caller asked
    does; a read's malformed query (``jobs?limit=abc``, ``usage?by=planet``) is an answer, not a refusal
    of a rule, unless it asked beyond the caller's rights (``?user=`` of another user, ``?all=`` for a
    non-admin): a panel or script polling with a wrong argument filled the audit log with rows no admin
    needs (new user 19, N11; the same principle as a dry run's "no", new user 18, N11)."""
    if not isinstance(err, _REFUSALS):
        return False
    return method.upper() not in _READS or isinstance(err, AuthorizationError)
