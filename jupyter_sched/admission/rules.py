"""The admission rules every job and lease request passes before anything is stored (pure).

:func:`check_job` runs, in order, and raises at the first refusal:

1. :func:`check_text` — bounded strings: the team, the name, environment keys and values, paths,
   image and kernel id have a length cap; names and teams — and every other word a reason, the
   audit or the service log repeats (node_selector, tolerations, model, group names, MIG profile,
   image) — carry no control or bidirectional override characters (they are printed in every
   reason and table, where U+202E would reorder what a reader sees, and an ESC would command an
   admin's terminal); environment keys are variable names (no ``=``, not empty). 400.
2. :func:`check_team` — the team charged must be one of the caller's teams (an admin may also
   charge any team an admin named; an unknown team is nobody's, so it is refused too: no
   implicit unlimited borrowing line for made-up teams). 403.
3. :func:`check_priority` — the class must be granted to the caller in that team (``high`` is
   granted to nobody unless an admin grants it). 403.
4. :func:`check_ceiling` — the request must fit, on an empty cluster, every quota line that
   applies (team guarantee + borrowing limit, the user's own line): a request above its hard
   ceiling would pend forever (case 030). 422 naming ``gpus`` and the numbers.
5. :func:`check_time_limit` — a time limit given above its queue's maximum (``c.SchedApp.time_limits``
   ``max_s``) is refused (admins may; as Slurm refuses a job over its partition's ``MaxTime``). 403
   naming ``time_limit`` and the maximum. ``time_limit: 0`` (unlimited) is not refused (case 033).

No I/O, no clock: the edge (:class:`~.gate.Admission`) audits each refusal.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence

from ..errors import AuthorizationError, QuotaError, ValidationError
from ..model import JobSpec, QuotaSet
from ..model.units import format_duration
from ..model.validation import ENV_KEY, MAX_ENV_KEY_CHARS, MAX_ENV_VALUE_CHARS, check_env
from ..placement.filters import model_matches
from ..queues.limits import TimeLimitRule, over_max
from ..quota import QuotaLedger
from ..quota.ceiling import binding_ceiling, ceiling_exceeded, no_gpus_fix, unlisted_fix
from .caller import Caller
from .lookalikes import baseless_mark, compatibility_letter, mixed_word, odd_dash, odd_space, unassigned
from .policy import team_allows

__all__ = [
    "BIDI_CONTROLS",
    "ENV_KEY",
    "INVISIBLE_CATEGORIES",
    "MAX_ENV_KEY_CHARS",
    "MAX_ENV_VALUE_CHARS",
    "MAX_ID_CHARS",
    "MAX_PATH_CHARS",
    "MAX_TEAM_CHARS",
    "check_team_name",
    "check_ceiling",
    "check_job",
    "check_priority",
    "check_team",
    "check_text",
    "check_time_limit",
    "time_limit_refusal",
    "edge_spaces",
    "id_name",
    "visible_text",
]

MAX_TEAM_CHARS = 64
"""Most characters of a team name (hub group names are short; reasons print the team)."""
MAX_PATH_CHARS = 4096
"""Most characters of ``script``, ``notebook``, ``working_dir`` and ``image`` (PATH_MAX)."""
MAX_ID_CHARS = 256
"""Most characters of a ``kernel_id``."""

BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Unicode bidirectional formatting characters (UAX #9): they reorder how text is displayed
(CVE-2021-42574, "Trojan Source"); a name must read as it is stored."""



INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode categories a displayed name may not hold: controls (Cc: ESC, NUL…), format characters
(Cf: zero-width space/joiners U+200B to U+200F, U+2060, U+FEFF, the bidi controls), lone surrogates
(Cs) and line/paragraph separators (Zl U+2028, Zp U+2029). Each is invisible or breaks the line it
is printed in, so a name holding one reads as another user's (``nu13a\u200b-train`` beside
``nu13a-train`` in everyone's queue; new user 13, N16)."""


DEFAULT_IGNORABLE_RANGES: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))
"""Unicode's ``Default_Ignorable_Code_Point`` (DerivedCoreProperties.txt, Unicode 15.1): characters a
renderer shows as nothing when it cannot show them otherwise. Most are format characters (Cf), but not
all — the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0: Lo), the combining grapheme joiner (U+034F)
and the variation selectors (U+FE00..FE0F, U+E0100..E01EF: Mn) are not, and let ``nu13a\u034f-train``
stand beside ``nu13a-train`` in everyone's queue, or a name of two fillers read as blank (red team 23, R3)."""
BLANK_LOOKING = frozenset("\u2800")
"""Printable characters that show as an empty cell (U+2800 BRAILLE PATTERN BLANK)."""
MAX_COMBINING_MARKS = 4
"""Most combining marks (Mn, Me) on one base character: real scripts stack two or three (Vietnamese,
Devanagari); 150 on one letter drew a smear over the neighbouring rows of everyone's queue (red team 23, R3)."""


def _default_ignorable(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in DEFAULT_IGNORABLE_RANGES)


def _kind(char: str) -> str:
    """What a refused invisible character is, where its code alone would puzzle (" (…)" or "")."""
    code = ord(char)
    if 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:
        return " (a variation selector, e.g. the one after an emoji: write the emoji without it)"
    if code in (0x115F, 0x1160, 0x3164, 0xFFA0):
        return " (a Hangul filler, drawn as blank)"
    return ""


_ZERO_WIDTH_JOINER = "\u200d"
"""Invisible alone, but part of the emoji a person sees (woman + U+200D + microscope): said as such."""


def visible_text(value: str, field: str, *, limit: int, name: bool = False) -> None:
    """THE check of a user's text that other readers see (a job's name and team, a lease's
    notebook, team names in quotas and the config): at most ``limit`` characters, none of them
    invisible (:data:`INVISIBLE_CATEGORIES`, :data:`BIDI_CONTROLS`, :data:`DEFAULT_IGNORABLE_RANGES`,
    :data:`BLANK_LOOKING`), at most :data:`MAX_COMBINING_MARKS` combining marks on one character, and
    none drawn as what it is not (:func:`_lookalikes`: odd spaces, unassigned or private-use code
    points, marks with no letter under them, look-alike alphabets mixed in one word; red team 24, R2).
    Only input is checked: names stored before a rule was added are read and shown as they are. ``name``: the
    text is a name (of a job, lease, definition or team), where a hyphen's look-alike is refused too
    (:func:`~.lookalikes.odd_dash`, red41 R2; prose — a drain reason, an environment value — keeps its dashes).

    Raises:
        ValidationError: naming ``field`` and the first such character.
    """
    if len(value) > limit:
        raise ValidationError(f"{field} is too long ({len(value)} characters, at most {limit})", field=field,
                              hint=f"use at most {limit} characters")
    for char in value:
        if char == _ZERO_WIDTH_JOINER:  # seen inside an emoji (new user 21, N9: "invisible" read wrong)
            raise ValidationError(f"{field} contains U+200D (a zero-width joiner, e.g. inside an emoji sequence)",
                                  field=field, hint="use letters, digits, - and _ (a joined emoji reads differently "
                                                    "on each screen)")
        if (char in BIDI_CONTROLS or char in BLANK_LOOKING or unicodedata.category(char) in INVISIBLE_CATEGORIES
                or _default_ignorable(char)):
            raise ValidationError(f"{field} contains the invisible character U+{ord(char):04X}{_kind(char)}", field=field,
                                  hint="use printable characters only (no control, zero-width, filler, variation "
                                       "selector, line-separator or bidirectional override characters)")
    marks = 0
    for index, char in enumerate(value):
        marks = marks + 1 if unicodedata.category(char) in ("Mn", "Me") else 0
        if marks > MAX_COMBINING_MARKS:
            raise ValidationError(f"{field} stacks more than {MAX_COMBINING_MARKS} combining marks on one character "
                                  f"(at character {index + 1 - marks})", field=field,
                                  hint=f"use at most {MAX_COMBINING_MARKS} accents on a letter (they are drawn over "
                                       "the lines around it)")
    _lookalikes(value, field, name=name)


def _named(char: str) -> str:
    """``U+200A (hair space)``: a refused character's code and Unicode name (its code alone where it has none)."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" ({name.lower()})" if name else "")


def _lookalikes(value: str, field: str, *, name: bool = False) -> None:
    """Refuse characters drawn as something they are not (red team 24, R2; :mod:`.lookalikes`): a space
    other than U+0020, an unassigned or private-use code point, a combining mark with no letter under
    it, a fullwidth/mathematical/ligature letter or digit (NFKC: verify 25, V5), letters of two look-alike
    alphabets in one word (Unicode TR39's mixed-script test, restricted
    to those alphabets).

    Raises:
        ValidationError: naming ``field``, the character or word, and the fix.
    """
    if (at := odd_space(value)) is not None:
        raise ValidationError(f"{field} contains {_named(value[at])} at character {at + 1}, a space other than the "
                              "plain space", field=field,
                              hint="use the plain space (U+0020): other spaces read as one, or as none, and match "
                                   "as neither")
    if (at := unassigned(value)) is not None:
        what = "a private-use code point" if unicodedata.category(value[at]) == "Co" else \
            "a code point Unicode assigns to no character"
        raise ValidationError(f"{field} contains U+{ord(value[at]):04X} at character {at + 1}, {what}", field=field,
                              hint="use characters Unicode assigns (letters, digits, punctuation, emoji): each "
                                   "screen draws this one its own way, or as a box")
    if (at := baseless_mark(value)) is not None:
        raise ValidationError(f"{field} has the combining mark {_named(value[at])} at character {at + 1} with no "
                              "letter under it", field=field,
                              hint="put an accent right after its letter, or write the accented letter itself (é)")
    if (at := compatibility_letter(value)) is not None:
        plain = unicodedata.normalize("NFKC", value[at])
        raise ValidationError(f"{field} contains {_named(value[at])} at character {at + 1}, a styled form of "
                              f"{plain!r}", field=field,
                              hint=f"write {plain!r} itself: a fullwidth, mathematical, ligature, circled or "
                                   "Roman-numeral letter reads as the plain one, and the name then reads as "
                                   "another one")
    if name and (at := odd_dash(value)) is not None:  # the mixed-script rule for a hyphen's look-alikes (red41 R2)
        raise ValidationError(f"{field} contains {_named(value[at])} at character {at + 1}, drawn as the hyphen "
                              f"'-'", field=field,
                              hint=f"write the plain hyphen-minus '-' (U+002D), as in "
                                   f"{value[:at][-20:] + '-' + value[at + 1:][:20]!r}: with this one the name reads "
                                   "as that name and is another")
    if (mixed := mixed_word(value)) is not None:
        word, scripts = mixed  # the word's main alphabet first; the first letter of each other one named
        names = [s.title() for s in scripts]
        alphabets = f"{', '.join(names[:-1])} and {names[-1]}"
        letters = ", ".join(f"{found[0]} is {unicodedata.name(found[0], '').lower()}" for found in
                            list(scripts.values())[1:])
        raise ValidationError(f"{field} mixes {alphabets} letters in the word {word!r} ({letters})", field=field,
                              hint="write each word in one alphabet: a Cyrillic \u0430, Greek \u03bf or Armenian \u0585 looks like "
                                   "a Latin letter, and the name then reads as another one")


def check_team_name(team: str, field: str) -> None:
    """A team name as every surface takes it — a job's ``team``, ``PUT quotas`` and the config
    (``c.SchedApp.quotas``, ``user_teams``, ``default_team``): not blank, at most
    :data:`MAX_TEAM_CHARS` printable characters (every user reads team names in the queue).

    Raises:
        ValidationError: naming ``field``.
    """
    if not team.strip():
        raise ValidationError(f"{field} is empty", field=field, hint="name the team, e.g. ml")
    visible_text(team, field, limit=MAX_TEAM_CHARS, name=True)
    edge_spaces(team, field)


def edge_spaces(value: str, field: str) -> None:
    """Refuse a name that starts or ends with a space: ``train `` and `` train`` read as ``train`` in every
    table, and match it nowhere (verify 26, V1).

    Raises:
        ValidationError: naming ``field`` and where the space is.
    """
    if value and (value[0] == " " or value[-1] == " "):
        where = "starts" if value[0] == " " else "ends"
        raise ValidationError(f"{field} {where} with a space: it reads as {value.strip()!r} in every list and is "
                              "another name", field=field,
                              hint=f"write it without the space: {value.strip()!r}")


def id_name(name: str, field: str = "name") -> None:
    """Refuse a name every client would read as an id (:func:`read_as_id`, red41 R2, red42 R1) or every command line
    as an option (``--all --yes``, ``-a``: red42 R3): a job named ``j-…`` stood in the queue as another user's job
    id, and ``cancel`` by that name cancelled the other job; ``cancel --all --yes`` pasted from the NAME column
    cancels every job the admin may cancel. Jobs, leases and definitions (their runs' names are theirs); names
    stored before are shown as they are. ``details.reads_as`` says which id (or ``option``).

    Raises:
        ValidationError: naming ``field``, why and the fix.
    """
    from ..model.names import ID_PREFIXES

    # red42 R3: `cancel --all --yes` pasted from the NAME column cancels everyone's work; quoted ('--all') a shell
    # hands it over unquoted all the same
    if (bare := name.strip(_ID_EDGE)).startswith("-"):
        raise ValidationError(f"{field} {name[:60]!r} starts with '-': every jupyter-sched command reads it as one of "
                              "its options (a name '--all --yes' after `cancel` cancels all the work you may cancel)",
                              field=field, hint=f"give a name that starts with a letter or digit, e.g. "
                                                f"run{bare[:20].rstrip()}", details={"reads_as": "option"})
    read = read_as_id(name)
    if read is not None:
        prefix, kind, seen = read
        starts = ", ".join(ID_PREFIXES)
        rest = "".join(c for c in seen.split(prefix, 1)[-1] if c.isalnum() or c in "-_")[:20] or "1"
        drawn = "" if seen.startswith(name.strip(_ID_EDGE).lower()[:2]) else \
            f" (its first letter is drawn as {prefix[0]}: it reads as {seen[:40]!r})"
        raise ValidationError(f"{field} {name[:60]!r} reads as a {kind} id{drawn}: every client takes a name starting "
                              f"{prefix} as one", field=field,
                              hint=f"give a name that does not start with {starts[:-4]} or {starts[-2:]} or a letter "
                                   f"drawn as one, e.g. run-{rest}",
                              details={"reads_as": f"{kind} id", "prefix": prefix, "read": seen[:64]})


_ID_EDGE = ":,;.'\"()[]<>` \t"
"""What every client strips from a reference's ends (:data:`jupyter_sched.model.names._EDGE`)."""

_DRAWN_AS_L = {"I": "l", "\u0406": "l", "\u04c0": "l", "\u0399": "l"}
"""Capitals drawn as a lower-case l in the sans fonts of JupyterLab and terminals (Latin I, Cyrillic I and palochka,
Greek iota): TR39 gives them prototype l, which case folding (the skeleton's first step) would turn into i."""

_ID_TAIL = re.compile(r"[0-9a-z]{6,12}-[0-9a-z]{4,8}")
"""What follows an id's prefix (``1m99d8dx6-mkdv46``): an ASCII capital I before it reads as a lease id; before
anything else it is a name (``I-JEPA``, ``I-BERT``: model names — verify42 V1)."""


def read_as_id(name: str) -> tuple[str, str, str] | None:
    """``(prefix, kind, the name as read)`` when ``name`` reads as a job, lease or definition id: as typed
    (:func:`~jupyter_sched.model.names.id_shaped`), or once its letters are read as the Latin letters they are drawn
    as (TR39's skeleton, :func:`~.user_names.skeleton`; red42 R1: a j- written with a Cyrillic je U+0458 or a Greek
    yot U+03F3, an l- with a palochka U+04CF, a d- with a komi de U+0501 stood in the queue as another user's id),
    else None."""
    from ..model.names import id_shaped
    from .user_names import skeleton

    word = name.strip(_ID_EDGE)
    shaped = id_shaped(word)
    if shaped is not None:
        return shaped[0], shaped[1], word.lower()
    if not word:
        return None
    seen = skeleton(_DRAWN_AS_L.get(word[0], word[0]) + word[1:])
    shaped = id_shaped(seen)
    if shaped is not None and word[0] == "I" and not _ID_TAIL.fullmatch(seen[len(shaped[0]):]):
        return None  # an ASCII capital I reads as l only beside an id's tail
    return None if shaped is None else (shaped[0], shaped[1], seen)


def check_text(spec: JobSpec) -> None:
    """Bounded strings of a request (rule 1 of the module docstring).

    Raises:
        ValidationError: naming the field (``team``, ``name``, ``env``, ``script``, ...).
    """
    visible_text(spec.team, "team", limit=MAX_TEAM_CHARS, name=True)
    visible_text(spec.name, "name", limit=200, name=True)
    edge_spaces(spec.name, "name")
    id_name(spec.name)
    if spec.kernel_notebook is not None:  # shown in its owner's listings and reasons (new user 13, N16)
        visible_text(spec.kernel_notebook, "kernel_notebook", limit=MAX_PATH_CHARS)
    check_env(dict(spec.env), strict=True)  # every problem at once (new user 12, N2), as the request check
    for where, word in _echoed(spec):  # red team 15, R3: echoed in refusals, the audit and the service log
        visible_text(word, where, limit=MAX_PATH_CHARS)
    optional: tuple[tuple[str, str | None, int], ...] = (
        ("script", spec.script, MAX_PATH_CHARS), ("notebook", spec.notebook, MAX_PATH_CHARS),
        ("working_dir", spec.working_dir, MAX_PATH_CHARS), ("image", spec.image, MAX_PATH_CHARS),
        ("kernel_id", spec.kernel_id, MAX_ID_CHARS))
    for field, text, limit in optional:
        if text is not None and len(text) > limit:
            raise ValidationError(f"{field} is too long ({len(text)} characters, at most {limit})", field=field,
                                  hint=f"use at most {limit} characters")


def _echoed(spec: JobSpec) -> Iterator[tuple[str, str]]:
    """The request's other words that reasons, the audit and the service log repeat (red team 15,
    R3: an ESC in a ``node_selector`` value reached an admin's ``tail -f`` raw): each node_selector
    key and value, toleration, GPU model, worker group name, the MIG profile and the image, with the
    field a refusal names. Paths are not among them: a file name is the file's, and every message
    that quotes one escapes it (``repr``)."""
    resources = spec.resources
    for key, value in resources.node_selector.items():
        yield "node_selector", key
        yield "node_selector", value
    for i, toleration in enumerate(resources.tolerations):
        yield f"tolerations[{i}]", toleration
    for model in resources.gpu_models:
        yield "model", model
    for i, group in enumerate(resources.groups):
        yield f"groups[{i}].name", group.name
    if resources.mig_profile is not None:
        yield "mig_profile", resources.mig_profile
    if spec.image is not None:
        yield "image", spec.image


def check_team(caller: Caller, spec: JobSpec) -> None:
    """The team charged is one of the caller's (rule 2).

    Raises:
        AuthorizationError: field ``team``, listing the caller's teams.
    """
    if not caller.may_charge(spec.team):
        from ..model.case_names import did_you_mean

        meant = did_you_mean(spec.team, caller.teams)  # verify21 V10: `Vision` for `vision`
        raise AuthorizationError(f"{caller.user} may not charge team {spec.team!r}", field="team",
                                 hint=(meant + "; " if meant else "") + "leave team out to use "
                                      + repr(caller.default_team) + "; your teams: " + ", ".join(caller.teams or ("none",)),
                                 details={"team": spec.team, "teams": list(caller.teams)})


def check_priority(caller: Caller, spec: JobSpec, quotas: QuotaSet | None = None) -> None:
    """The priority class is granted to the caller in the team charged (rule 3).

    ``quotas``: the quota set in force; a class the team's stored policy does not allow is then
    refused in the team's words, naming its allowed list (verify 21, V8: it was accepted and waited
    for ever behind the core's gate).

    Raises:
        AuthorizationError: field ``priority``, listing the granted classes (details ``granted``,
            and ``allowed``, the team policy's list, when the team does not allow the class).
    """
    granted = caller.classes_for(spec.team)
    if spec.priority.value not in granted:
        order = [c for c in ("high", "normal", "low") if c in granted]
        wanted, team = spec.priority.value, spec.team
        use = "use " + (" or ".join(order) or "no class")
        elsewhere = _teams_allowing(caller, wanted, team, quotas)
        # a user in several teams is told the one that takes it (newuser22 N12: only the default team's
        # fix was said, though GET me lists cv: [high, normal]); "team (--team cv)" reads as --team cv in the
        # CLI and the magics (wording.flags)
        named = " or ".join(f"team (--team {t})" for t in elsewhere[:3])
        other = f", or submit with {named}, which allow{'s' if len(elsewhere) == 1 else ''} {wanted!r}" if named else ""
        stated = team_allows(quotas, team) if quotas is not None else None
        if stated is not None and wanted not in stated:
            allowed = [c for c in ("high", "normal", "low") if c in stated]
            fix = (f"add {wanted!r} to team {team}'s allowed_priorities (PUT quotas)" if caller.admin
                   else f"ask an admin to allow {wanted!r} for team {team!r}")
            raise AuthorizationError(
                f"team {team!r} may not use priority {wanted!r} (allowed: {', '.join(allowed)})",
                field="priority", hint=f"{use}{other}, or {fix}",
                details={"priority": wanted, "granted": order, "allowed": allowed, "team": team,
                         "teams_allowing": elsewhere})
        if caller.admin:  # "ask an admin" would point at themselves: say where a grant is made — one safe
            # remedy (a raw PUT quotas body replaced every team policy, new user 4)
            how = (f"{use}{other}; to allow it, set c.SchedApp.priority_grants = "
                   f'{{"users": {{"{caller.user}": ["{wanted}"]}}}} in the server\'s config and restart')
        else:
            how = f"{use}{other}, or ask an admin to allow {wanted!r} for you or team {team!r}"
        raise AuthorizationError(
            f"priority {wanted!r} is not granted to {caller.user} in team {team!r}",
            field="priority", hint=how, details={"priority": wanted, "granted": order, "teams_allowing": elsewhere})


def _teams_allowing(caller: Caller, wanted: str, team: str, quotas: QuotaSet | None) -> list[str]:
    """The caller's other teams (in their order, the default first) where ``wanted`` is granted and the
    team's stored policy, if any, allows it: where the same submit would be taken."""
    return [other for other in caller.teams if other != team and wanted in caller.classes_for(other)
            and (quotas is None or (stated := team_allows(quotas, other)) is None or wanted in stated)]


def check_ceiling(spec: JobSpec, quotas: QuotaSet, gpus_by_model: Mapping[str, int],
                  teams: Iterable[str] = (), *, admin: bool = False) -> None:
    """The request fits its quota ceilings when nothing else runs (rule 4).

    Every GPU model the request could use is tried (its ``model`` list, loosely matched as
    placement does, else every model present); it passes if it stays within every line that
    applies on one of them. A refusal names the tightest line it exceeds on the model that comes
    closest (so "ask for at most N" is a request that can fit).
    With no quota lines, or no GPUs at all (the inventory check answers that), it passes. A scope
    without a line — a team without a team line for the model, a user without a line of their own
    there — is bounded by its team's unlisted line (:class:`~jupyter_sched.model.QuotaSet`
    ``unlisted_borrowing_limit``; :meth:`~jupyter_sched.quota.ledger.QuotaLedger.applicable`): its
    refusal names field ``team`` and the caller's ``teams`` that have a team line (red team 19, R3),
    or field ``model`` and the models the team's lines name when it has some (red team 20, R2).
    ``admin``: the caller is an admin, whose fix is theirs to make (PUT quotas), never "ask an
    admin" (new user 20, N3).

    Raises:
        QuotaError: field ``team`` / ``model`` for a scope without a line (``details.unlisted``,
            ``covered``, ``uncovered``, ``members``); else ``gpus`` (``workers`` for a gang whose
            workers fit one by one); ``details`` carry ``requested``, ``ceiling``, ``guaranteed``,
            ``borrowing_limit`` (GPUs), ``team``, ``user`` (None for the team line) and ``model``.
    """
    milli = spec.resources.total_milli
    if milli <= 0 or not quotas.quotas:
        return
    wanted = spec.resources.gpu_models
    models = [m for m in gpus_by_model if not wanted or any(model_matches(w, m) for w in wanted)]
    ledger = QuotaLedger(quotas, gpus_by_model)
    line = binding_ceiling(ledger, spec.team, spec.user, milli, models)
    if line is None:
        return
    # one sentence with the scheduling cycle's for a job pending when the quota was lowered (new user 18, N12)
    over = ceiling_exceeded(line, spec.resources, models, user=spec.user, ledger=ledger)
    mine = tuple(teams)
    if over.unlisted:  # the teams to suggest: those with a team line (not one named only by user lines)
        listed = (t for t in mine if t != spec.team and quotas.for_team(t))
        raise QuotaError(over.message, field=over.field, details=over.details,
                         hint=unlisted_fix(spec.team, listed, admin=admin, mine=mine, models=over.details["uncovered"],
                                           covered=line.covered, user=spec.user,
                                           own=over.details.get("own_models", ())))
    if not over.details.get("ceiling"):  # a line of 0: what runs there, not "ask for at most 0 GPUs" (newuser34 n2)
        raise QuotaError(over.message, field=over.field, details=over.details,
                         hint=no_gpus_fix(line.team, line.user, admin=admin))
    raise_it = "raise the quota (PUT quotas)" if admin else "ask an admin to raise the quota"
    raise QuotaError(over.message, field=over.field, hint=f"ask for {over.most}, or {raise_it}", details=over.details)


def check_time_limit(caller: Caller, spec: JobSpec, rules: Sequence[TimeLimitRule]) -> None:
    """Rule 5: ``spec``'s time limit is within its queue's maximum (:func:`~..queues.limits.over_max`).

    Raises:
        AuthorizationError: 403 naming ``time_limit``, the maximum, and the fix (admins are not refused).
    """
    over = over_max(spec, rules) if not caller.admin else None
    if over is not None:
        raise time_limit_refusal(spec, over)


def time_limit_refusal(spec: JobSpec, over: tuple[str, float, str], *, field: str = "time_limit",
                       because: str = "", hint: str = "") -> AuthorizationError:
    """The one refusal of a time limit above its queue's maximum (submit and ``PATCH jobs``, verify28 V2):
    ``over`` is :func:`~..queues.limits.over_max`'s answer; ``because`` leads the message (``class normal: ``),
    ``hint`` replaces the default fix."""
    asked, most, whose = over
    return AuthorizationError(
        f"{because}{asked} is above the maximum of {whose} ({format_duration(most)})", field=field,
        hint=hint or (f"give a time limit of at most {format_duration(most)} (e.g. --time-limit "
                      f"{format_duration(most)}), and checkpoint to go on in a next job; or ask an admin"),
        details={"time_limit_s": spec.time_limit_s, "max_s": most, "team": spec.team,
                 "priority": spec.priority.value})


def check_job(caller: Caller, spec: JobSpec, *, quotas: QuotaSet, gpus_by_model: Mapping[str, int],
              time_limits: Sequence[TimeLimitRule] = ()) -> None:
    """Run every rule of the module docstring on one request, in order.

    Raises:
        ValidationError / AuthorizationError / QuotaError: the first refusal.
    """
    check_text(spec)
    check_team(caller, spec)
    check_priority(caller, spec, quotas)
    check_ceiling(spec, quotas, gpus_by_model, caller.teams, admin=caller.admin)
    check_time_limit(caller, spec, time_limits)
