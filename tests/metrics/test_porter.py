"""Our Porter stemmer against NLTK's PorterStemmer (NLTK_EXTENSIONS, rouge-score's stemmer)."""

from __future__ import annotations

import itertools
import random
import re
import sys

import pytest
from conftest import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st

from platform_eval.metrics._porter import stem

porter = pytest.importorskip("nltk.stem.porter", reason="NLTK is the reference stemmer")
NLTK = porter.PorterStemmer()


def _words(text: str) -> list[str]:
    return text.split()


# Every suffix a rule of some step tests, so generated words reach every branch.
SUFFIXES = _words(
    "sses ies ss s ied eed ed ing at bl iz ational tional enci anci izer bli abli alli entli eli "
    "ousli ization ation ator alism iveness fulness ousness aliti iviti biliti fulli logi icate "
    "ative alize iciti ical ful ness al ance ence er ic able ible ant ement ment ent sion tion ou "
    "ism ate iti ous ive ize e ll y ying ies ly ings ness es ally ically ization ations"
)
STEMS_ALPHABET = "aeiouybcdfglmnprstvwxz"

WORDS = _words(
    "caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated troubled "
    "sized hopping tanned falling hissing fizzed failing filing happy sky relational conditional "
    "rational valenci hesitanci digitizer conformabli radicalli differentli vileli analogousli "
    "vietnamization predication operator feudalism decisiveness hopefulness callousness formaliti "
    "sensitiviti sensibiliti triplicate formative formalize electriciti electrical hopeful goodness "
    "revival allowance inference airliner gyroscopic adjustable defensible irritant replacement "
    "adjustment dependent adoption homologou communism activate angulariti homologous effective "
    "bowdlerize probate rate cease controll roll generously dying lying tying news innings outings "
    "cannings howe proceed exceed succeed skies spies flies tried enjoy enjoyment yyyy syzygy toy "
    "by ivy oats trees troubles private oaten orrery geology archaeology fully hopefully "
    "ies lies dies pied ied running runs ran booked flight returned Friday Paris shipped tracking"
)


def generated_words(count: int) -> list[str]:
    rng = random.Random(20261121)
    words = []
    for _ in range(count):
        stem_text = "".join(rng.choice(STEMS_ALPHABET) for _ in range(rng.randint(0, 6)))
        suffixes = "".join(rng.choice(SUFFIXES) for _ in range(rng.randint(0, 2)))
        words.append(stem_text + suffixes)
    return words


def corpus_words() -> set[str]:
    corpus = CORPUS
    if not corpus.is_dir():
        return set()
    words: set[str] = set()
    for path in itertools.islice(corpus.rglob("*.json"), 400):
        words.update(re.findall(r"[a-z0-9]+", path.read_text(errors="replace").lower()))
    return words


def test_the_papers_examples_and_nltks_irregular_forms() -> None:
    for word in WORDS:
        assert stem(word) == NLTK.stem(word), word


def test_generated_words_reach_every_rule_and_agree() -> None:
    for word in generated_words(20_000):
        assert stem(word) == NLTK.stem(word), word


def test_every_word_of_the_corpus() -> None:
    words = corpus_words()
    if not words:
        pytest.skip("../shared/corpus is absent (a user's clone)")
    assert len(words) > 1000
    for word in words:
        assert stem(word) == NLTK.stem(word), word


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=STEMS_ALPHABET + "ABCY0123456789", max_size=14))
def test_any_string_agrees(word: str) -> None:
    assert stem(word) == NLTK.stem(word)


@pytest.mark.slow  # seconds of its own (an SDK, a process): CI runs it
def test_stemming_imports_no_nltk() -> None:
    import subprocess

    code = (
        "import sys; from platform_eval.metrics import text; "
        "text.response_match_score('running flights', 'ran a flight'); "
        "print('nltk' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
