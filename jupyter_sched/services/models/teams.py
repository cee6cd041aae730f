"""Request and response models of moving a team's work to another team (``POST teams/{team}/move``).

JupyterHub renames a group by creating the new one and deleting the old (hubadmin23 A9): the
renamed team's pending and running jobs and its definitions stay charged to the old name. An admin
moves them with one audited act, after a preview (``dry_run``) that says, per job, what changes and
what the new team would hold against its guarantee and limit (:mod:`jupyter_sched.services.team_move`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import RequestModel, ResponseModel

__all__ = ["MoveTeamRequest", "MoveTeamResponse", "MovedItem", "TeamHolding"]


class MoveTeamRequest(RequestModel):
    """``POST teams/{team}/move``: re-charge ``team``'s live work and definitions to ``to``."""

    to: str = Field(min_length=1, max_length=200, examples=["cv"],
                    description="the team the work is charged to from now on (its owners must be members of it)")
    dry_run: bool = Field(default=False, description="answer what would change; change and audit nothing")
    with_quota: bool = Field(default=False, description=(
        "also move the team's quota lines to `to` (refused when `to` has a line already)"))


class MovedItem(ResponseModel):
    """One job or definition charged to the team, and what the move does to it."""

    id: str
    kind: Literal["job", "lease", "definition"]
    user: str
    state: str | None = Field(default=None, description="a job's state (null for a definition)")
    gpus: float = Field(default=0, description="GPUs it holds now (running work) or asks for (waiting work)")
    outcome: Literal["moved", "left"] = Field(description="moved: charged to `to` (dry_run: would be); left: "
                                                          "stays charged to the team, see why")
    why: str = Field(description="what changes, or why it is left (e.g. its owner is no member of `to`)")


class TeamHolding(ResponseModel):
    """What ``to`` holds now and after the move, against its quota line."""

    team: str
    in_use: float = Field(description="GPUs held now by work charged to it")
    in_use_after: float = Field(description="GPUs held by its work once the moved running work is charged to it")
    guaranteed: float | None = Field(description="its guarantee (null: no team line)")
    ceiling: float | None = Field(description="guarantee + borrowing limit (null: no limit)")
    borrowed_after: float = Field(description="GPUs above its guarantee after the move: borrowed work, which "
                                              "another team's reclaim of its guaranteed GPUs can take")
    text: str = Field(description="the same in one sentence")


class MoveTeamResponse(ResponseModel):
    """The move's plan (``dry_run``) or what it did."""

    team: str
    to: str
    dry_run: bool
    moved: int = Field(description="jobs and definitions charged to `to` (dry_run: would be)")
    left: int = Field(description="jobs and definitions that stay charged to the team")
    items: list[MovedItem]
    holding: TeamHolding
    quota: str | None = Field(default=None, description="with_quota: the lines moved (null otherwise)")
    usage: str = Field(description="what happens to the GPU-hours already used (usage history keeps its team)")
    text: str = Field(description="a summary in words")
