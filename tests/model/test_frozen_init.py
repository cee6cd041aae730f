"""``model.frozen.fast_init``: the faster ``__init__`` keeps every behaviour of a frozen slots dataclass."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from dataclasses import dataclass, field
from datetime import datetime, timezone

import pytest

from jupyter_sched.model import Allocation, PendingReason
from jupyter_sched.model.frozen import fast_init
from jupyter_sched.scheduling.snapshot import Admit, AuditRecord


@fast_init
@dataclass(frozen=True, slots=True)
class _Sample:
    name: str
    count: int = 3
    tags: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Plain:
    name: str
    count: int = 3
    tags: list[str] = field(default_factory=list)


def test_defaults_factories_and_keywords_match_the_generated_init() -> None:
    for args, kwargs in ((("a",), {}), (("a", 5), {}), (("a",), {"tags": ["x"]}), ((), {"name": "b", "count": 0})):
        fast, plain = _Sample(*args, **kwargs), _Plain(*args, **kwargs)
        assert (fast.name, fast.count, fast.tags) == (plain.name, plain.count, plain.tags)
    assert _Sample("a").tags is not _Sample("a").tags  # a fresh list per instance, as default_factory does
    assert str(inspect.signature(_Sample)) == str(inspect.signature(_Plain))
    with pytest.raises(TypeError):
        _Sample()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _Sample("a", 1, [], 4)  # type: ignore[call-arg]


def test_still_frozen_equal_hashable_and_picklable() -> None:
    s = _Sample("a", 1, ["t"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.name = "b"  # type: ignore[misc]
    assert s == _Sample("a", 1, ["t"]) and s != _Sample("a", 2, ["t"])
    assert pickle.loads(pickle.dumps(s)) == s
    assert copy.deepcopy(s) == s and dataclasses.replace(s, count=9).count == 9
    alloc = Allocation("n1", ("GPU-0",))
    assert hash(alloc) == hash(Allocation("n1", ("GPU-0",), 1000, ()))
    assert alloc.gpu_milli == 1000 and alloc.workers == ()


def test_post_init_still_runs() -> None:
    seen: list[str] = []

    @fast_init
    @dataclass(frozen=True, slots=True)
    class Checked:
        name: str

        def __post_init__(self) -> None:
            seen.append(self.name)

    Checked("x")
    assert seen == ["x"]


def test_the_cycle_records_use_it_and_keep_their_fields() -> None:
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    alloc = Allocation("n1", ("GPU-0",))
    admit = Admit("j1", alloc, 0.0, {}, False, now, None, "given", False)
    assert admit == Admit("j1", alloc, predicted_start=now)
    assert admit.scores == {} and admit.scores is not Admit("j1", alloc).scores
    record = AuditRecord("admit", "j1", "ann", "admitted")
    assert record.details == {}
    assert PendingReason("Fragmented", "m").per_flavor == ()
    for cls in (Admit, AuditRecord, Allocation, PendingReason):
        assert cls.__init__.__code__.co_filename == "<string>" and "_set0" in cls.__init__.__code__.co_names


def test_refuses_classes_it_cannot_speed_up() -> None:
    @dataclass(frozen=True)
    class NoSlots:
        name: str

    @dataclass(slots=True)
    class NotFrozen:
        name: str

    @dataclass(frozen=True, slots=True, kw_only=True)
    class KwOnly:
        name: str

    for cls in (NoSlots, NotFrozen, KwOnly):
        with pytest.raises(TypeError):
            fast_init(cls)
