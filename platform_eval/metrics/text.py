"""Text metrics: exact match and ROUGE-1 with ADK's Unicode-aware tokenizer."""

from __future__ import annotations

import re
import unicodedata
from collections import _count_elements  # type: ignore[attr-defined]
from dataclasses import dataclass
from typing import Any

from ._porter import stem


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return (
        0x4E00 <= code <= 0x9FFF  # CJK Unified Ideographs
        or 0x3040 <= code <= 0x309F  # Hiragana
        or 0x30A0 <= code <= 0x30FF  # Katakana
        or 0xAC00 <= code <= 0xD7AF  # Hangul syllables
    )


def _is_non_spaced_script(char: str) -> bool:
    code = ord(char)
    return (
        0x0E00 <= code <= 0x0E7F  # Thai
        or 0x0E80 <= code <= 0x0EFF  # Lao
        or 0x1780 <= code <= 0x17FF  # Khmer
        or 0x1000 <= code <= 0x109F  # Myanmar
    )


_ASCII_WORD = re.compile(r"[a-z0-9]+")


def _stemmed(words: list[str], use_stemmer: bool) -> list[str]:
    # rouge-score stems words longer than three characters and keeps what is still
    # [a-z0-9]+; the stem of such a word is [a-z0-9]*, so only an empty stem is dropped.
    if not use_stemmer:
        return words
    try:
        # Mapped in C over the stems already known: a third of the time of a cached call
        # per word, on every response.
        tokens = list(map(_STEMS.__getitem__, words))
    except KeyError:
        tokens = list(map(_stem_token, words))
    if _EMPTY_STEMS and "" in tokens:
        return [token for token in tokens if token]
    return tokens


#: Stems by word, as rouge-score computes them; cleared when full, so bounded.
_STEMS: dict[str, str] = {}
_STEMS_LIMIT = 65536
#: Words whose stem is empty: until there is one, no token list needs to be searched for "".
_EMPTY_STEMS: set[str] = set()


def _stem_token(word: str) -> str:
    stemmed = _STEMS.get(word)
    if stemmed is None:
        stemmed = stem(word) if len(word) > 3 else word
        if not stemmed:
            _EMPTY_STEMS.add(word)
        if len(_STEMS) >= _STEMS_LIMIT:
            _STEMS.clear()
        _STEMS[word] = stemmed
    return stemmed


# Every byte but [a-z0-9] becomes a space: on ASCII text, bytes.translate and split find the
# same words as the regular expression, three times faster.
_SPACE_NON_ALPHANUM = bytes(
    byte if chr(byte).isascii() and (chr(byte).islower() or chr(byte).isdigit()) else 0x20
    for byte in range(256)
)


def _ascii_words(text: str) -> list[str]:
    lowered = text.lower()
    if lowered.isascii():
        return lowered.encode("ascii").translate(_SPACE_NON_ALPHANUM).decode("ascii").split()
    return _ASCII_WORD.findall(lowered)


def _ascii_tokens(text: str, use_stemmer: bool) -> list[str]:
    """rouge-score's DefaultTokenizer: lowercase, split on non-alphanumerics, stem."""
    return _stemmed(_ascii_words(text), use_stemmer)


def tokenize(text: str, *, use_stemmer: bool = True) -> list[str]:
    """ADK's tokenizer for response_match_score.

    NFKC-normalized and lowercased; each CJK character is a token; Thai, Lao, Khmer and
    Myanmar split into grapheme clusters; other non-ASCII words are kept whole; ASCII words
    go through rouge-score's tokenizer with Porter stemming.
    """
    if text.isascii():
        # The same result as the loop below, which on ASCII keeps [a-z0-9] runs as words.
        return _ascii_tokens(text, use_stemmer)
    chars: list[str] = []
    for char in unicodedata.normalize("NFKC", text).lower():
        if _is_cjk(char):
            chars.extend((" ", char, " "))
        elif _is_non_spaced_script(char):
            if unicodedata.category(char).startswith("M"):
                chars.append(char)
            else:
                chars.extend((" ", char))
        elif char.isalnum() or unicodedata.category(char).startswith("M"):
            chars.append(char)
        else:
            chars.append(" ")
    tokens: list[str] = []
    for word in "".join(chars).split():
        # ASCII alphanumerics, lowercased: one [a-z0-9]+ word for rouge-score's tokenizer.
        tokens.extend(_stemmed([word], use_stemmer) if word.isascii() else (word,))
    return tokens


@dataclass(frozen=True)
class RougeScore:
    precision: float
    recall: float
    fmeasure: float


def _fmeasure(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def _overlap(candidate_grams: list[Any], reference_grams: list[Any]) -> int:
    """Sum over n-grams of min(count in candidate, count in reference): the candidate's counted
    in C (Counter's own helper, without Counter's checks), then used up one reference n-gram at
    a time."""
    unused: dict[Any, int] = {}
    _count_elements(unused, candidate_grams)
    count_of = unused.get
    overlap = 0
    for gram in reference_grams:
        count = count_of(gram)
        if count:
            unused[gram] = count - 1
            overlap += 1
    return overlap


def rouge_n(candidate_tokens: list[str], reference_tokens: list[str], n: int = 1) -> RougeScore:
    def grams(tokens: list[str]) -> list[Any]:
        return tokens if n == 1 else [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]

    overlap = _overlap(grams(candidate_tokens), grams(reference_tokens))
    precision = overlap / max(len(candidate_tokens) - n + 1, 1)
    recall = overlap / max(len(reference_tokens) - n + 1, 1)
    return RougeScore(precision, recall, _fmeasure(precision, recall))


def rouge1_fmeasure(candidate_tokens: list[str], reference_tokens: list[str]) -> float:
    """rouge_n(..., 1).fmeasure, without the score object (ADK's metric, for every turn)."""
    overlap = _overlap(candidate_tokens, reference_tokens)
    precision = overlap / max(len(candidate_tokens), 1)
    recall = overlap / max(len(reference_tokens), 1)
    return _fmeasure(precision, recall)


def response_match_score(actual: str, expected: str) -> float:
    """ADK's response_match_score: ROUGE-1 F-measure of actual against expected."""
    return rouge1_fmeasure(tokenize(actual), tokenize(expected))


def exact_match(actual: str, expected: str) -> float:
    """1.0 when the response equals the reference exactly, else 0.0."""
    return 1.0 if actual == expected else 0.0
