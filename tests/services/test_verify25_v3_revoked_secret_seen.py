"""Verify 25, V3: ``doctor rotate-job-secret --revoke-running --yes`` said the running jobs' tokens
"are refused from now on", but a server that had read the revoked secret as its current one kept
taking them until it next started a job (it read the store's secrets only at a mint, for unknown
tokens and for retired secrets' tokens) — on a quiet cluster, the usual moment to revoke a leaked
secret, for ever. Now a token of the secret a server read as current is checked against secrets read
at most ``REVOKED_SEEN_S`` ago. The store's secrets, as another process's rotation leaves them, are
the reader's answers (the store's own reader is tested with SQLite and PostgreSQL in
test_s24_a19_job_secret_in_store.py); the clock is driven (no timing assertion).
"""

from __future__ import annotations

from datetime import datetime, timezone

from jupyter_sched.services.job_tokens import REVOKED_SEEN_S, StoredJobTokens
from jupyter_sched.store.job_secrets import JobSecret

T = datetime(2026, 12, 5, 12, 0, tzinfo=timezone.utc)
LEAKED = JobSecret(1, b"a-leaked-secret-of-at-least-32-characters-0123456789", T, None, "made")
NEW = JobSecret(2, b"the-new-secret-of-at-least-32-characters-9876543210ab", T, None, "rotated by doctor:root")


def test_verify25_v3_a_revoked_current_secret_is_refused_within_the_bound_without_a_job_start() -> None:
    in_store = [LEAKED]
    now = [0.0]
    tokens = StoredJobTokens(lambda: list(in_store), clock=lambda: now[0])
    leaked = tokens.mint("j-1", 1)
    assert tokens.read(leaked) == ("j-1", 1)
    in_store[:] = [NEW]  # another process: rotate-job-secret --revoke-running --yes (generation 1 deleted)
    now[0] += REVOKED_SEEN_S  # no job started on this server meanwhile (no mint)
    # failed before: ("j-1", 1) — the revoked secret stayed this server's current one until its next mint
    assert tokens.read(leaked) is None
    fresh = tokens.mint("j-2", 1)
    assert tokens.read(fresh) == ("j-2", 1)


def test_verify25_v3_tokens_of_the_current_secret_read_the_store_at_most_once_per_bound() -> None:
    reads = [0]
    now = [0.0]

    def load() -> list[JobSecret]:
        reads[0] += 1
        return [LEAKED]

    tokens = StoredJobTokens(load, clock=lambda: now[0])
    token = tokens.mint("j-1", 1)
    before = reads[0]
    for _ in range(100):  # a burst of progress reports: none re-reads within the bound
        assert tokens.read(token) == ("j-1", 1)
    assert reads[0] == before
    now[0] += REVOKED_SEEN_S
    assert tokens.read(token) == ("j-1", 1) and reads[0] == before + 1
