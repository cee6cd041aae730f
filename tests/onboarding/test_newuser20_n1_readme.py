"""New user 20, N1: the README's quota example, pasted into a personal server's config, locked its
owner (team ``default``) out of every GPU — once any quota line exists a team without one gets
``c.SchedApp.unlisted_team_borrowing_limit`` GPUs (0 by default), which the README never named."""

from __future__ import annotations

import re

from traitlets.config import Config

from jupyter_sched.model import Quota, QuotaSet

from .test_readme import ADMIN, section

README_TEXT = section("Configuring it", ADMIN)  # moved to docs/admin.md (newuser31 n17)


def test_newuser20_n1_the_readme_quota_example_leaves_no_team_of_its_users_without_a_line() -> None:
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", README_TEXT, flags=re.S) if "quotas" in b]
    c = Config()
    exec(compile(block, "docs/admin.md", "exec"), {"c": c})  # the block is a jupyter_server_config.py
    lines = tuple(Quota(**q) for q in c.SchedApp.quotas)
    user_teams = dict(c.SchedApp.user_teams) if "user_teams" in c.SchedApp else {}
    teams = {"default", *(t for v in user_teams.values() for t in ([v] if isinstance(v, str) else v))}
    assert QuotaSet(quotas=lines, unlisted_borrowing_limit=0).unlisted(teams) == [], (teams, lines)
    # and it says the rule in words, naming the setting and its default
    said = " ".join(README_TEXT.split())
    assert "c.SchedApp.unlisted_team_borrowing_limit" in said and "0 by default" in said, said
    assert "your own included" in said and "team `default`" in said, said

