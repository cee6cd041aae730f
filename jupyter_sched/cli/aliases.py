"""Options with two spellings of one setting, for the CLI's and the magics' parsers (kept out of
:mod:`jupyter_sched.wording`, whose import the CLI's fast path avoids)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

__all__ = ["OneSetting"]


class OneSetting(argparse.Action):
    """An option with two spellings of one setting (``--team``/``--queue``, ``--for``/``--timeout``):
    both spellings given with different values is refused naming both, where argparse kept the last
    one silently (``--team a --queue b`` charged team b without a word). The same spelling given
    twice keeps the last, as every option does (a shell alias that a later option overrides).

    Raises (through ``parser.error``): ``argument --queue: --team and --queue are two names of one
    setting; give it once (got --team 'a', --queue 'b')``.
    """

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        seen = f"_spelled_{self.dest}"
        before: tuple[str, Any] | None = getattr(namespace, seen, None)
        if before is not None and option_string is not None and before[0] != option_string and before[1] != values:
            parser.error(f"argument {option_string}: {' and '.join(self.option_strings)} are two names of one "
                         f"setting; give it once (got {before[0]} {before[1]!r}, {option_string} {values!r})")
        setattr(namespace, seen, (option_string, values))
        setattr(namespace, self.dest, values)
