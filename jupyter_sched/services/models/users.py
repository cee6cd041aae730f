"""Request and response models of carrying a renamed user's work over (``POST users/{user}/rename``).

JupyterHub renames a user in place (``PATCH /hub/api/users/OLD {"name": "NEW"}``): the person keeps
their token, groups and servers, but the scheduler keys everything by name, so to it OLD is a removed
user (pending work held, definitions paused) and NEW a stranger with no jobs, budget or history
(hubadmin26 B10). An admin carries OLD's work over to NEW with one audited act, after a preview
(``dry_run``) that lists what moves (:mod:`jupyter_sched.services.user_rename`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import RequestModel, ResponseModel

__all__ = ["RenameUserRequest", "RenameUserResponse", "RenamedItem"]


class RenameUserRequest(RequestModel):
    """``POST users/{user}/rename``: carry ``user``'s jobs, definitions, quota lines, budgets and usage to ``to``."""

    to: str = Field(min_length=1, max_length=200, examples=["ana.lopez"],
                    description="the user's new name (on a hub: a user of the hub, renamed there first)")
    dry_run: bool = Field(default=False, description="answer what would move; change and audit nothing")
    merge: bool = Field(default=False, description=(
        "carry the work into a name that already has records of its own (finished jobs, usage, definitions, "
        "memberships): only when both names are the same person; refused (409) otherwise"))


class RenamedItem(ResponseModel):
    """One live job or definition of the user, and what the rename does to it."""

    id: str
    kind: Literal["job", "lease", "definition"]
    state: str | None = Field(default=None, description="a job's state (null for a definition)")
    why: str = Field(description="what changes for it (a running job's OS account does not)")


class RenameUserResponse(ResponseModel):
    """The rename's plan (``dry_run``), what it did, or (``already``) that it was done before."""

    user: str = Field(description="the old name")
    to: str = Field(description="the new name")
    dry_run: bool
    already: bool = Field(default=False, description="nothing is left under the old name: it was renamed to `to` "
                                                     "before (the answer changes nothing)")
    items: list[RenamedItem] = Field(description="live jobs, leases and definitions (finished jobs are counted)")
    finished_jobs: int = Field(description="finished jobs whose record moves (history: jobs, logs, status)")
    quota_lines: int = Field(description="per-user quota lines moved")
    budgets: int = Field(description="per-user budgets moved")
    memberships: int = Field(description="team memberships moved (user_teams, team policies' members)")
    usage_rows: int = Field(description="usage intervals re-attributed (GPU-hours, fair share and budget standing)")
    resumed: list[str] = Field(default_factory=list, description="definitions paused when the old name left the hub "
                                                                 "and resumed now (dry_run: would be)")
    kept: str = Field(description="what keeps the old name")
    notes: list[str] = Field(default_factory=list, description="settings that still name the old name (the "
                                                               "configuration file: an admin edits it)")
    text: str = Field(description="a summary in words")
