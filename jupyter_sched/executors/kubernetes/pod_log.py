"""Following a pod's log from where a reader stopped, at the cost of what is new (session 36 left: every poll of a
followed pod log — ``jupyter-sched logs -f``, the panel's live log — read it from its start up to the reader's offset
plus a slice: a 1 GiB log, polled twice a second, a gigabyte a poll from the API server and the kubelet).

The pod log API has no byte offset. It has ``timestamps=true`` (each line the kubelet sends starts with the time its
container runtime recorded it, RFC 3339 with nine fixed fraction digits, and a space) and ``sinceTime`` (only lines
recorded at or after that second). So the executor keeps, per followed job, a :class:`Mark` at the offset it last
answered: the stamp of the last line read, how many lines with that very stamp were read, and how many bytes of the
next line. The next read from that offset asks for ``sinceTime`` = the mark's second with ``timestamps=true``,
drops the lines the mark says were read (those stamped before it, the first ``same`` stamped with it, ``partial``
bytes of the next), and strips the stamps: the log's own bytes, from the offset on. It costs the new bytes plus the
lines of one second already read. A reader at another offset (a first read, a restart of the server) reads from the
log's start once, as before, and is followed from there on.

Stamps are taken as not going backwards within a container's log (the runtime's clock at each write). A line the
runtime split into partial records (longer than its buffer, 16 KiB for containerd) is several stamped records; the
kubelet sends each with its stamp, so such a line is read as its records' contents joined, as without stamps.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone

__all__ = ["START", "Mark", "parse_records", "since_time", "stamp_key", "take", "utf8_cut"]

Key = tuple[int, int]
"""A line's stamp as ``(seconds since the epoch, nanoseconds)``."""

_STAMP = re.compile(rb"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)")


@dataclass(frozen=True)
class Mark:
    """Where a reader stands in a pod's log: past every line stamped before ``key``, the first ``same`` lines
    stamped ``key``, and ``partial`` bytes of the line after those."""

    key: Key = (-1, 0)
    same: int = 0
    partial: int = 0


START = Mark()
"""Nothing read yet."""


def stamp_key(raw: bytes) -> Key | None:
    """``(seconds, nanoseconds)`` of a kubelet stamp (``2026-12-07T07:55:01.123456789Z``, or an offset for ``Z``);
    None when ``raw`` is not one."""
    found = _STAMP.fullmatch(raw)
    if found is None:
        return None
    base, digits, zone = (part.decode("ascii") if part else "" for part in found.groups())
    try:
        moment = datetime.fromisoformat(base + ("+00:00" if zone == "Z" else zone))
    except ValueError:
        return None
    return int(moment.timestamp()), int(digits.ljust(9, "0")) if digits else 0


def since_time(mark: Mark) -> str:
    """The ``sinceTime`` that answers every line ``mark`` has not passed: its stamp's second, RFC 3339 in UTC."""
    return datetime.fromtimestamp(mark.key[0], timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_records(data: bytes, *, whole: bool) -> list[tuple[Key, bytes]] | None:
    """``(stamp, content with its newline)`` of each line of a ``timestamps=true`` answer. ``whole``: the answer was
    not cut by ``limitBytes``, so a last line without a newline is a whole record (the container's last words, or a
    partial record); otherwise it is left out (read again next time). None when a line has no stamp (not the format
    asked for: the caller reads without stamps)."""
    out: list[tuple[Key, bytes]] = []
    lines = data.split(b"\n")
    last = lines.pop()  # b"" after a final newline
    for n, line in enumerate([*lines, last] if last and whole else lines):
        raw, space, content = line.partition(b" ")
        key = stamp_key(raw)
        if key is None or not space:
            return None
        out.append((key, content + (b"\n" if n < len(lines) else b"")))
    return out


def take(records: Iterable[tuple[Key, bytes]], mark: Mark, *, skip: int, limit: int) -> tuple[bytes, Mark]:
    """The log's bytes after ``mark`` (``records``: every line from ``mark``'s second on, or from the start), past
    ``skip`` more bytes, at most ``limit``; with the mark where they end."""
    key, same, partial = mark.key, mark.same, mark.partial
    out = bytearray()
    for rkey, begin, content in _unread(records, mark):
        rest = len(content) - begin
        passed = min(skip, rest)
        skip -= passed
        begin += passed
        taken = min(limit - len(out), len(content) - begin)
        out += content[begin:begin + taken]
        begin += taken
        if begin < len(content):  # this line not read to its end: the mark stays before it
            partial = begin
            break
        same, key, partial = (same + 1 if rkey == key else 1), rkey, 0
        if len(out) >= limit and not skip:
            break
    return bytes(out), Mark(key, same, partial)


def _unread(records: Iterable[tuple[Key, bytes]], mark: Mark) -> Iterator[tuple[Key, int, bytes]]:
    """``(stamp, where its unread part begins, content)`` of each line ``mark`` has not passed."""
    seen, first = 0, True
    for key, content in records:
        if key < mark.key:
            continue
        if key == mark.key and seen < mark.same:
            seen += 1
            continue
        yield key, (mark.partial if first else 0), content
        first = False


def utf8_cut(data: bytes) -> int:
    """The length of the longest start of ``data`` that does not end inside a UTF-8 character (at most 3 bytes
    less; all of it where no cut helps)."""
    for cut in range(len(data), max(len(data) - 4, -1), -1):
        try:
            data[:cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return cut
    return len(data)
