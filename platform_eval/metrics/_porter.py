"""The Porter stemmer ROUGE uses, with NLTK's extensions (rouge-score's and ADK's stemmer).

rouge-score stems with ``nltk.stem.porter.PorterStemmer()``, whose default mode is
``NLTK_EXTENSIONS``: Porter's 1980 algorithm plus a handful of irregular forms and rule changes.
Scores must match google-adk's to the last bit, so this module reproduces that mode exactly
(``tests/metrics/test_porter.py`` checks it word by word against NLTK), without importing NLTK,
which costs two seconds on first use.

The rules keep the paper's structure: each step tries its suffixes in order, and the first
suffix the word ends with decides, whether or not its condition holds.
"""

from __future__ import annotations

from collections.abc import Callable

_VOWELS = frozenset("aeiou")

# NLTK_EXTENSIONS' irregular forms: stemmed by lookup, before any rule runs.
_IRREGULAR = {
    form: stem
    for stem, forms in {
        "sky": ("sky", "skies"),
        "die": ("dying",),
        "lie": ("lying",),
        "tie": ("tying",),
        "news": ("news",),
        "inning": ("innings", "inning"),
        "outing": ("outings", "outing"),
        "canning": ("cannings", "canning"),
        "howe": ("howe",),
        "proceed": ("proceed",),
        "exceed": ("exceed",),
        "succeed": ("succeed",),
    }.items()
    for form in forms
}


def _consonant_flags(word: str) -> list[bool]:
    # A 'y' is a consonant at the start of a word or after a vowel (the paper's definition,
    # which refers to itself through the previous letter).
    flags: list[bool] = []
    previous = False
    for index, char in enumerate(word):
        if char in _VOWELS:
            previous = False
        elif char == "y":
            previous = True if index == 0 else not previous
        else:
            previous = True
        flags.append(previous)
    return flags


def _measure(stem: str) -> int:
    """m in [C](VC){m}[V]: the number of vowel-to-consonant transitions."""
    count = 0
    vowel_before = False
    for consonant in _consonant_flags(stem):
        if consonant and vowel_before:
            count += 1
        vowel_before = not consonant
    return count


def _has_vowel(stem: str) -> bool:
    return not all(_consonant_flags(stem))


def _ends_double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _consonant_flags(word)[-1]


def _ends_cvc(word: str) -> bool:
    """*o: consonant-vowel-consonant, the last not w, x or y (NLTK: also a two-letter vc word)."""
    flags = _consonant_flags(word)
    if len(word) >= 3:
        return flags[-3] and not flags[-2] and flags[-1] and word[-1] not in "wxy"
    return len(word) == 2 and not flags[0] and flags[1]


def _positive(stem: str) -> bool:
    return _measure(stem) > 0


def _above_one(stem: str) -> bool:
    return _measure(stem) > 1


Rule = tuple[str, str, Callable[[str], bool]]


def _first_rule(word: str, rules: tuple[Rule, ...]) -> str:
    for suffix, replacement, condition in rules:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem + replacement if condition(stem) else word
    return word


def _step1a(word: str) -> str:
    if word.endswith("ies") and len(word) == 4:
        return word[:-3] + "ie"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("ies"):
        return word[:-2]
    if word.endswith("ss"):
        return word
    if word.endswith("s"):
        return word[:-1]
    return word


def _step1b(word: str) -> str:
    if word.endswith("ied"):
        return word[:-3] + ("ie" if len(word) == 4 else "i")
    if word.endswith("eed"):
        return word[:-1] if _positive(word[:-3]) else word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
            stem = word[: -len(suffix)]
            break
    else:
        return word
    if stem.endswith(("at", "bl", "iz")):
        return stem + "e"
    if _ends_double_consonant(stem):
        return stem if stem[-1] in "lsz" else stem[:-1]
    if _measure(stem) == 1 and _ends_cvc(stem):
        return stem + "e"
    return stem


def _step1c(word: str) -> str:
    # NLTK: y -> i after a consonant that is not the whole stem ("happy" -> "happi", "by" stays).
    if word.endswith("y") and len(word) > 2 and _consonant_flags(word[:-1])[-1]:
        return word[:-1] + "i"
    return word


_STEP2: tuple[Rule, ...] = (
    ("ational", "ate", _positive),
    ("tional", "tion", _positive),
    ("enci", "ence", _positive),
    ("anci", "ance", _positive),
    ("izer", "ize", _positive),
    ("bli", "ble", _positive),
    ("alli", "al", _positive),
    ("entli", "ent", _positive),
    ("eli", "e", _positive),
    ("ousli", "ous", _positive),
    ("ization", "ize", _positive),
    ("ation", "ate", _positive),
    ("ator", "ate", _positive),
    ("alism", "al", _positive),
    ("iveness", "ive", _positive),
    ("fulness", "ful", _positive),
    ("ousness", "ous", _positive),
    ("aliti", "al", _positive),
    ("iviti", "ive", _positive),
    ("biliti", "ble", _positive),
    ("fulli", "ful", _positive),
    # NLTK measures "logi" on the stem with its "l" ("geologi" -> "geolog" on "geol").
    ("logi", "log", lambda stem: _positive(stem + "l")),
)

_STEP3: tuple[Rule, ...] = (
    ("icate", "ic", _positive),
    ("ative", "", _positive),
    ("alize", "al", _positive),
    ("iciti", "ic", _positive),
    ("ical", "ic", _positive),
    ("ful", "", _positive),
    ("ness", "", _positive),
)

_STEP4: tuple[Rule, ...] = (
    ("al", "", _above_one),
    ("ance", "", _above_one),
    ("ence", "", _above_one),
    ("er", "", _above_one),
    ("ic", "", _above_one),
    ("able", "", _above_one),
    ("ible", "", _above_one),
    ("ant", "", _above_one),
    ("ement", "", _above_one),
    ("ment", "", _above_one),
    ("ent", "", _above_one),
    ("ion", "", lambda stem: _above_one(stem) and stem[-1] in "st"),
    ("ou", "", _above_one),
    ("ism", "", _above_one),
    ("ate", "", _above_one),
    ("iti", "", _above_one),
    ("ous", "", _above_one),
    ("ive", "", _above_one),
    ("ize", "", _above_one),
)


def _step2(word: str) -> str:
    # NLTK: "alli" becomes "al" and step 2 runs again on the result.
    if word.endswith("alli") and _positive(word[:-4]):
        return _step2(word[:-2])
    return _first_rule(word, _STEP2)


def _step5a(word: str) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        measure = _measure(stem)
        if measure > 1 or (measure == 1 and not _ends_cvc(stem)):
            return stem
    return word


def _step5b(word: str) -> str:
    if word.endswith("ll") and _above_one(word[:-1]):
        return word[:-1]
    return word


def stem(word: str) -> str:
    """The stem NLTK's ``PorterStemmer().stem(word)`` gives (``text`` caches it per token)."""
    lowered = word.lower()
    if lowered in _IRREGULAR:
        return _IRREGULAR[lowered]
    if len(word) <= 2:
        return lowered
    result = _step1a(lowered)
    result = _step1b(result)
    result = _step1c(result)
    result = _step2(result)
    result = _first_rule(result, _STEP3)
    result = _first_rule(result, _STEP4)
    result = _step5a(result)
    return _step5b(result)
