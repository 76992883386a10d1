"""Text metrics: exact match and ROUGE-1 with ADK's Unicode-aware tokenizer."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from ._porter import stem

_NON_ALPHANUM = re.compile(r"[^a-z0-9]+")
_VALID_TOKEN = re.compile(r"^[a-z0-9]+$")


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


@functools.lru_cache(maxsize=65536)
def _word_tokens(word: str, use_stemmer: bool) -> tuple[str, ...]:
    return tuple(_ascii_tokens(word, use_stemmer))


def _ascii_tokens(text: str, use_stemmer: bool) -> list[str]:
    # rouge-score's DefaultTokenizer: lowercase, split on non-alphanumerics, stem words longer
    # than three characters, drop anything that is not [a-z0-9]+ afterwards.
    tokens = _NON_ALPHANUM.sub(" ", text.lower()).split()
    if use_stemmer:
        tokens = [stem(t) if len(t) > 3 else t for t in tokens]
    return [t for t in tokens if _VALID_TOKEN.match(t)]


def tokenize(text: str, *, use_stemmer: bool = True) -> list[str]:
    """ADK's tokenizer for response_match_score.

    NFKC-normalized and lowercased; each CJK character is a token; Thai, Lao, Khmer and
    Myanmar split into grapheme clusters; other non-ASCII words are kept whole; ASCII words
    go through rouge-score's tokenizer with Porter stemming.
    """
    if text.isascii():
        # The same result as the loop below, which on ASCII keeps [a-z0-9] runs as words.
        return [
            t for word in _ASCII_WORD.findall(text.lower()) for t in _word_tokens(word, use_stemmer)
        ]
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
        if word.isascii():
            tokens.extend(_word_tokens(word, use_stemmer))
        else:
            tokens.append(word)
    return tokens


@dataclass(frozen=True)
class RougeScore:
    precision: float
    recall: float
    fmeasure: float


def _fmeasure(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def rouge_n(candidate_tokens: list[str], reference_tokens: list[str], n: int = 1) -> RougeScore:
    def grams(tokens: list[str]) -> Counter[tuple[str, ...]]:
        return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))

    cand, ref = grams(candidate_tokens), grams(reference_tokens)
    overlap = sum(min(count, cand[gram]) for gram, count in ref.items())
    precision = overlap / max(sum(cand.values()), 1)
    recall = overlap / max(sum(ref.values()), 1)
    return RougeScore(precision, recall, _fmeasure(precision, recall))


def response_match_score(actual: str, expected: str) -> float:
    """ADK's response_match_score: ROUGE-1 F-measure of actual against expected."""
    return rouge_n(tokenize(actual), tokenize(expected), 1).fmeasure


def exact_match(actual: str, expected: str) -> float:
    """1.0 when the response equals the reference exactly, else 0.0."""
    return 1.0 if actual == expected else 0.0
