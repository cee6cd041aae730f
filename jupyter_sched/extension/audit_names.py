"""One name per request in the audit log, whichever layer refused it (new user 15, N8).

A refusal is audited with ``details.request``: the admission step and the services name the action
(``submit job``, ``request lease``, ``create definition``); the web layer, refusing a body its
request model does not take, named the route (``POST jobs``). An admin filtering "who tried to
submit" by request saw half. :func:`request_name` gives the web layer the services' words for the
routes that have them, and ``METHOD route`` for the rest.
"""

from __future__ import annotations

__all__ = ["ACTION_NAMES", "request_name"]

ACTION_NAMES: dict[tuple[str, str], str] = {
    ("POST", "jobs"): "submit job",
    ("POST", "leases"): "request lease",
    ("POST", "dryrun"): "dry run",
    ("POST", "definitions/preview"): "preview schedule",
    ("DELETE", "jobs/{job_id}"): "cancel job",
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
