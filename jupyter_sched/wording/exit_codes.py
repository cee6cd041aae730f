"""An exit code in words: ``exit code 137 (128+9: a process it started was killed by SIGKILL — out of memory (the
OOM killer) or kill -9)``.

A shell (and ``bash -c``, ``make``, a launcher script) that runs a program which a signal kills exits with 128 + the
signal's number, so the job's own exit code is 129-159 while no signal ended the job itself (a job a signal ended
has a negative code, Python's returncode, said as ``killed by SIGKILL``). newuser42 n1: ``exit code 137`` said
nothing of SIGKILL, though 137 is most often the kernel's OOM killer. Kubernetes' and Slurm's docs read the same
codes the same way. One function, read by the CLI's and the magics' lines (:func:`.jobs.job_line`, the magics'
tables); the panel's ``exitCodeWords`` (labextension/src/format.ts) says the same words.
"""

from __future__ import annotations

import signal

__all__ = ["SIGNAL_CAUSES", "exit_code_words", "signal_in_exit_code"]

SIGNAL_CAUSES: dict[int, str] = {
    signal.SIGKILL: "out of memory (the OOM killer) or kill -9",
    signal.SIGTERM: "asked to stop (kill, a time limit, a cancel)",
    signal.SIGSEGV: "a crash: it read or wrote memory it does not own",
    signal.SIGABRT: "it aborted (a failed assertion or a library's abort())",
    signal.SIGBUS: "a bad memory access (often a truncated memory-mapped file)",
    signal.SIGFPE: "an arithmetic error (an integer divided by zero)",
    signal.SIGINT: "interrupted (Ctrl-C)",
    signal.SIGHUP: "its terminal or session went away",
    signal.SIGPIPE: "it wrote to a pipe nobody read any more",
    signal.SIGILL: "an illegal instruction (a binary built for another CPU)",
}
"""What most often sends each signal, said after its name; a signal not here is named alone."""


def signal_in_exit_code(code: object) -> int | None:
    """The signal a shell's exit code 129-159 (128 + n) stands for, else None (a bool is no code)."""
    if isinstance(code, int) and not isinstance(code, bool) and 129 <= code <= 159:
        return code - 128
    return None


def exit_code_words(code: int) -> str:
    """``exit code 137 (128+9: a process it started was killed by SIGKILL — out of memory (the OOM killer) or kill
    -9)``; ``exit code 1`` for a code that is no signal's."""
    number = signal_in_exit_code(code)
    if number is None:
        return f"exit code {code}"
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    cause = SIGNAL_CAUSES.get(number)
    return f"exit code {code} (128+{number}: a process it started was killed by {name}{f' — {cause}' if cause else ''})"
