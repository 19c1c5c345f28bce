"""Names that look alike (Unicode Technical Standard #39, security
mechanisms): "Ada" whose A is Cyrillic (U+0410) beside "Ada".

- **Mixed-script confusables** (:func:`mixed_script_confusable`): a name
  whose letters come from several scripts, one of them standing in for a
  letter of another (a Cyrillic A, U+0410, for the Latin A), is refused
  wherever a name is given. Scripts that are written together (TR39's
  Highly Restrictive level: Latin with Han and Japanese kana, with Han and
  Bopomofo, with Han and Hangul) may mix; others only when no character
  outside the name's main script looks like one of it (Unicode lists a
  Latin look-alike for nearly every Greek and Cyrillic letter).
- **Skeletons** (:func:`skeleton`): TR39's skeleton of a name (decomposed,
  each character mapped to the prototype it is confusable with, decomposed
  again), without regard to case, as people read names. Two names with one
  skeleton look alike; one game does not seat both (:func:`look_alike`).

The data is Unicode's confusables and scripts, as the
``confusable_homoglyphs`` package ships them.
"""

from __future__ import annotations

import functools
import unicodedata
from collections import Counter
from collections.abc import Iterable

from confusable_homoglyphs import categories, confusables

#: Scripts that are written together (TR39 5.2, Highly Restrictive).
_WRITTEN_TOGETHER = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
#: Characters of every script (digits, punctuation, combining marks).
_ANY_SCRIPT = frozenset({"COMMON", "INHERITED"})
#: Marks the package's data wraps right-to-left characters in.
_DIRECTION_MARKS = str.maketrans("", "", "\u200e\u200f")


def scripts(name: str) -> Counter[str]:
    """How many characters of ``name`` each script has (digits,
    punctuation and combining marks belong to none)."""
    return Counter(
        s for s in (categories.alias(c) for c in name) if s not in _ANY_SCRIPT
    )


def mixed_script_confusable(name: str) -> str:
    """The character of ``name`` that stands in for a letter of another of
    its scripts (empty: none): the name mixes scripts not written together,
    and a character outside its main script looks like one of it."""
    counted = scripts(name)
    if len(counted) < 2 or any(set(counted) <= t for t in _WRITTEN_TOGETHER):
        return ""
    most = max(counted.values())
    for main in [s for s, n in counted.items() if n == most]:
        found = confusables.is_confusable(name, preferred_aliases=[main, *_ANY_SCRIPT])
        if found:
            return str(found[0]["character"])
    return ""


def skeleton(name: str) -> str:
    """TR39's skeleton of ``name``, without regard to case: names with one
    skeleton look alike. (Case is folded after the mapping: the prototype
    of a zero is a capital O, and "B0b" is "Bob"; folded before it, the
    capital I and the small l of "Il" and "ll" would no longer meet.)"""
    prototypes = _prototypes()
    decomposed = unicodedata.normalize("NFD", name)
    mapped = "".join(prototypes.get(c, c) for c in decomposed)
    return unicodedata.normalize("NFD", mapped.casefold())


def look_alike(name: str, others: Iterable[str]) -> str:
    """The first of ``others`` that looks like ``name`` (empty: none)."""
    own = skeleton(name)
    return next((o for o in others if skeleton(o) == own), "")


@functools.cache
def _prototypes() -> dict[str, str]:
    """Each confusable character's prototype (Unicode's confusables.txt
    maps every character to one prototype, a character or a short string,
    which maps to nothing). The package keeps the mapping both ways: a
    character listing one look-alike that lists others is that one's, and
    of a pair listing only each other, a string or else the lower code
    point is the prototype."""
    data = {
        key.translate(_DIRECTION_MARKS): [
            g["c"].translate(_DIRECTION_MARKS) for g in glyphs
        ]
        for key, glyphs in confusables.confusables_data.items()
    }
    out: dict[str, str] = {}
    for key, glyphs in data.items():
        if len(key) != 1 or len(glyphs) != 1 or glyphs[0] == key:
            continue  # a prototype (of several), or a string: no source
        (other,) = glyphs
        if len(data.get(other, ())) > 1:
            out[key] = other
        elif len(other) > 1 or other < key:
            out[key] = other  # a pair: the string, or the lower code point
    return out
