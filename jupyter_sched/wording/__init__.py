"""How jupyter_sched says things: pending reasons, job lines, waits and CLI/magic flags, in one place.

The scheduling core returns reasons as data (a code, the numbers, an ETA or why it is unknown);
this package writes them for people. The server sends the rendered sentences with each reason
(``reason.text``, see :func:`render_reason`), the panel shows them, and the magics and the CLI call
the same functions — adding "in 5m" against their own clock — so a reason, a cancel or a wait
reads the same in a notebook, a terminal and the sidebar. Pure: no I/O, no clock (``now`` is
passed in), no heavy imports (the CLI imports it on every call).
"""

from __future__ import annotations

from .flags import flag_for
from .jobs import cancel_outcome, definition_deleted, gpus_text, job_detail, job_line, lease_end_message, state_word
from .progress import WaitProgress, wait_progress
from .reasons import (
    ReasonText,
    eta_sentence,
    reason_in_words,
    refusal_line,
    refusal_text,
    render_reason,
    unblock_sentence,
)
from .reported import progress_text

__all__ = [
    "ReasonText", "WaitProgress", "cancel_outcome", "definition_deleted", "eta_sentence", "flag_for", "gpus_text", "job_detail", "job_line",
    "lease_end_message", "progress_text", "reason_in_words", "refusal_line", "refusal_text", "render_reason", "state_word", "unblock_sentence", "wait_progress",
]
