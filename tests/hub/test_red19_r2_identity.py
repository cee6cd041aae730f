"""Red team 19, R2: which groups :class:`~jupyter_sched.hub.identity.HubIdentityProvider` decides a
request on. A read may use the token's cached hub model; a request that changes something reads the
hub's user record at most ``membership_fresh_s`` old; a change the hub poll saw (``seen_models``)
makes every request of that user read the hub until the tokens' cached models are newer.

The hub's answers come from a recording stand-in for :meth:`HubIdentityProvider.hub_api` (the real
hub is in tests/hub/test_red19_r2_hub.py); the provider itself is the production class.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tornado import web

from jupyter_sched.hub.identity import HubIdentityProvider


class _Hub:
    """The hub's user records, and the lookups made."""

    def __init__(self) -> None:
        self.groups = {"eve": ["nlp"]}
        self.asked: list[str] = []
        self.down = False
        self.says_groups = True

    async def __call__(self, method: str, path: str, body: Any = None) -> Any:
        self.asked.append(path)
        if self.down:
            raise ConnectionRefusedError("hub down")
        name = path.rsplit("/", 1)[-1]
        return {"name": name, "admin": False, **({"groups": self.groups[name]} if self.says_groups else {})}


def _provider(**config: Any) -> tuple[HubIdentityProvider, _Hub]:
    provider = HubIdentityProvider(**config)
    hub = _Hub()
    provider.hub_api = hub  # type: ignore[method-assign]
    return provider, hub


STALE_TOKEN_MODEL = {"name": "eve", "kind": "user", "admin": False, "groups": ["nlp", "vision"]}
"""What HubAuth's token cache still says for token_cache_s after eve left vision."""


def test_red19_r2_a_mutation_reads_the_hub_record_not_the_tokens_cached_model() -> None:
    provider, hub = _provider(membership_fresh_s=0.0)
    # a read keeps the token's model (no hub call per read)
    assert asyncio.run(provider._roles("eve", STALE_TOKEN_MODEL)) == (False, ("nlp", "vision"))
    assert hub.asked == []
    # a submit decides on the hub's record: vision is gone
    assert asyncio.run(provider._roles("eve", STALE_TOKEN_MODEL, fresh=True)) == (False, ("nlp",))
    assert hub.asked == ["users/eve"]


def test_red19_r2_mutations_within_membership_fresh_s_share_one_lookup() -> None:
    provider, hub = _provider(membership_fresh_s=60.0)
    for _ in range(5):
        asyncio.run(provider._roles("eve", STALE_TOKEN_MODEL, fresh=True))
    assert hub.asked == ["users/eve"]


def test_red19_r2_a_change_the_poll_saw_drops_the_cached_groups_for_reads_too() -> None:
    provider, hub = _provider(membership_fresh_s=60.0)
    asyncio.run(provider._roles("eve", STALE_TOKEN_MODEL))  # known: nlp, vision
    assert provider.seen_models({"eve": {"name": "eve", "groups": ["vision", "nlp"]}}) == []  # same groups
    assert provider.seen_models({"eve": {"name": "eve"}}) == []  # groups not said: says nothing
    assert provider.seen_models({"eve": {"name": "eve", "groups": ["nlp"]}, "amy": {"groups": []}}) == ["eve"]
    # the token's model still lists vision: not trusted now, the hub's record is read
    assert asyncio.run(provider._roles("eve", STALE_TOKEN_MODEL)) == (False, ("nlp",))
    assert hub.asked == ["users/eve"]


def test_red19_r2_a_hub_that_does_not_answer_is_a_503_not_a_traceback() -> None:
    provider, hub = _provider(membership_fresh_s=0.0)
    hub.down = True
    with pytest.raises(web.HTTPError) as refused:
        asyncio.run(provider._roles("eve", STALE_TOKEN_MODEL, fresh=True))
    assert refused.value.status_code == 503
    assert "retry in a moment" in str(refused.value.log_message)


def test_red19_r2_a_service_token_that_cannot_read_groups_keeps_the_tokens_model() -> None:
    provider, hub = _provider(membership_fresh_s=0.0)
    hub.says_groups = False  # no read:users:groups: the record is silent, never "in no group"
    assert asyncio.run(provider._roles("eve", STALE_TOKEN_MODEL, fresh=True)) == (False, ("nlp", "vision"))
