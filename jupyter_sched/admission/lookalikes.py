"""Characters that make a displayed name read as another one (red team 24, R2): pure, standard library only.

:func:`~.rules.visible_text` refuses what is drawn as nothing; these are the characters that are drawn,
but not as what they are:

* :func:`odd_space` — a space other than U+0020 (category Zs: no-break, thin, hair, the mathematical
  spaces, the ideographic space…): ``train run`` with a hair space reads as ``train run`` or as
  ``trainrun``, and sorts and matches as neither;
* :func:`unassigned` — a code point Unicode assigns to nothing (Cn, the noncharacters among them) or
  leaves to private agreement (Co): each font draws its own glyph there, or a box, so two readers
  see two different names (the check follows this Python's Unicode database, ``unicodedata.unidata_version``:
  a letter assigned by a newer Unicode is refused until the server's Python knows it);
* :func:`baseless_mark` — a combining mark (Mn, Mc, Me) with no letter, digit or mark before it: drawn
  over whatever the table shows left of the name, or over a space (``x ́y``);
* :func:`mixed_word` — one word (a run of letters, marks and digits) holding letters of two of the
  alphabets that share look-alike letters (:data:`CONFUSABLE_SCRIPTS`: Latin, Greek, Cyrillic,
  Armenian, Georgian, Cherokee, Coptic): ``train`` with a Cyrillic a (U+0430) in it is another name than
  ``train`` and looks the same. This is the mixed-script test of Unicode TR39 (*Unicode Security
  Mechanisms*, §5.1) restricted to those scripts: a word of one script, any script, passes, and so do
  words mixing scripts outside that set (Japanese Han + kana, Latin + Han). No script property is in
  Python's :mod:`unicodedata` and no library that has one is a dependency, so a letter's script is the
  script its Unicode character name states (``CYRILLIC SMALL LETTER A``, ``FULLWIDTH LATIN CAPITAL
  LETTER A``): every letter of those alphabets is named so, and no letter's name states two of them
  (checked over the whole database by the test of this module).

* :func:`compatibility_letter` — a letter or digit that Unicode's compatibility normalization (NFKC)
  turns into another one: fullwidth a (U+FF41), mathematical bold a (U+1D41A), ligatures (fi, U+FB01),
  the ordinal indicators (U+00AA, U+00BA), fullwidth and mathematical digits — ``train`` written with
  U+1D41A or U+FF41 for its a reads as ``train`` (verify 25, V5) — and every other character whose NFKC
  holds a letter: Roman numerals (``tra\\u2170n``: U+2170, category Nl), circled and parenthesized letters
  (U+24D0, U+249C), squared units (U+338F) — verify 26, V1. The micro sign U+00B5 (NFKC: Greek
  mu) is kept: it is how units are written; so are superscript digits and fractions (``x²``, ``½``). Whole-script look-alikes (a word all in Cyrillic letters
  that read as Latin ones) and small capitals (U+1D00…, NFKC-stable) are not caught: TR39's
  whole-script data is not in Python's database.

* :func:`odd_dash` — a dash drawn as the ASCII hyphen-minus (U+2010 hyphen, U+2011 non-breaking hyphen, U+2012
  figure dash, U+2013 en dash, U+2212 minus sign, U+FE63 small and U+FF0D fullwidth hyphen-minus, …:
  :data:`HYPHEN_LOOKALIKES`) touching a letter or digit of the look-alike alphabets or an ASCII one —
  the mixed-script rule for punctuation: ``a\u2010train`` reads as ``a-train`` and is another name (red41 R2).
  A Japanese word's dashes, and a dash between spaces (``train \u2013 v2``), are kept.

Each returns what a refusal names (the character, its place) or None; :func:`~.rules.visible_text`
words the refusal. Names stored before these checks are read as they are: only new input is checked.
"""

from __future__ import annotations

import unicodedata

__all__ = ["CONFUSABLE_SCRIPTS", "HYPHEN_LOOKALIKES", "baseless_mark", "compatibility_letter", "mixed_word",
           "odd_dash", "odd_space", "script_of", "unassigned"]

CONFUSABLE_SCRIPTS = ("LATIN", "GREEK", "CYRILLIC", "ARMENIAN", "GEORGIAN", "CHEROKEE", "COPTIC")
"""The alphabets whose letters stand in for each other (a Cyrillic a U+0430 or a Greek omicron U+03BF for a
Latin a or o, an Armenian oh U+0585, a Cherokee go U+13AA for A, a Georgian qar U+10E7 for y…): two of them
in one word are refused (module docstring)."""

_MARKS = ("Mn", "Mc", "Me")


def odd_space(value: str) -> int | None:
    """Index of the first space character other than U+0020 (category Zs) in ``value``, or None."""
    return next((i for i, char in enumerate(value) if char != " " and unicodedata.category(char) == "Zs"), None)


def unassigned(value: str) -> int | None:
    """Index of the first unassigned (Cn) or private-use (Co) code point in ``value``, or None."""
    return next((i for i, char in enumerate(value) if unicodedata.category(char) in ("Cn", "Co")), None)


_MICRO_SIGN = "\u00b5"


def compatibility_letter(value: str) -> int | None:
    """Index of the first character in ``value`` that NFKC turns into other characters among which is a
    letter — or, for a decimal digit, into another digit — (module docstring), or None. Superscript and
    subscript digits and vulgar fractions (``x²``, ``½``: category No, NFKC digits only) are kept: they
    read as what they are."""
    for i, char in enumerate(value):
        if char == _MICRO_SIGN or ord(char) < 0x80:
            continue
        plain = unicodedata.normalize("NFKC", char)
        if plain != char and (any(c.isalpha() for c in plain) or unicodedata.category(char) == "Nd"):
            return i
    return None


def baseless_mark(value: str) -> int | None:
    """Index of the first combining mark with no letter, digit or mark before it in ``value``, or None."""
    before = ""
    for i, char in enumerate(value):
        if unicodedata.category(char) in _MARKS and (not before or unicodedata.category(before)[0] not in "LNM"):
            return i
        before = char
    return None


def script_of(char: str) -> str | None:
    """The one of :data:`CONFUSABLE_SCRIPTS` whose letter ``char`` is (as its Unicode name states), else None."""
    if not unicodedata.category(char).startswith("L"):
        return None
    return next((word for word in unicodedata.name(char, "").split() if word in CONFUSABLE_SCRIPTS), None)


def mixed_word(value: str) -> tuple[str, dict[str, list[str]]] | None:
    """The first word of ``value`` (a run of letters, marks and digits) whose letters belong to two or more of
    :data:`CONFUSABLE_SCRIPTS`, with ``{script: its letters there}``, the script with the most letters first;
    None when there is none."""
    word: list[str] = []
    scripts: dict[str, list[str]] = {}
    for char in (*value, " "):
        if unicodedata.category(char)[0] in "LMN":
            word.append(char)
            script = script_of(char)
            if script is not None:
                scripts.setdefault(script, []).append(char)
            continue
        if len(scripts) > 1:
            return "".join(word), dict(sorted(scripts.items(), key=lambda item: -len(item[1])))
        word, scripts = [], {}
    return None


HYPHEN_LOOKALIKES = frozenset("\u02d7\u058a\u05be\u1400\u1806\u2010\u2011\u2012\u2013\u2043\u207b\u208b\u2212"
                              "\u2796\ufe58\ufe63\uff0d")
"""Characters drawn as (or nearly as) the ASCII hyphen-minus U+002D: modifier minus, Armenian hyphen, Hebrew maqaf,
Canadian syllabics hyphen, Mongolian todo soft hyphen, hyphen, non-breaking hyphen, figure dash, en dash,
hyphen bullet, superscript and subscript minus, minus sign, heavy minus, small em dash, small and fullwidth
hyphen-minus. The em dash and longer ones (U+2014, U+2015) are drawn visibly longer and are kept."""


def _latin_like(char: str) -> bool:
    """An ASCII letter or digit, or a letter of :data:`CONFUSABLE_SCRIPTS`."""
    return (char.isascii() and char.isalnum()) or script_of(char) is not None


def odd_dash(value: str) -> int | None:
    """Index of the first :data:`HYPHEN_LOOKALIKES` character with an ASCII letter or digit, or a letter of
    :data:`CONFUSABLE_SCRIPTS`, right before or after it, or None."""
    for i, char in enumerate(value):
        if char in HYPHEN_LOOKALIKES and ((i > 0 and _latin_like(value[i - 1]))
                                          or (i + 1 < len(value) and _latin_like(value[i + 1]))):
            return i
    return None
