"""The service's text computation metrics: BLEU and ROUGE (1, L, Lsum), scored 0 to 1.

BLEU is sentence BLEU as sacrebleu computes it (13a tokenization, exponential smoothing,
effective order), divided by 100. ROUGE is rouge-score's: its tokenizer (lowercase, ASCII
alphanumerics, optional Porter stemming) and F-measure; Lsum splits summaries on newlines.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from .text import RougeScore, _ascii_tokens, _fmeasure, rouge_n

# sacrebleu's 13a tokenizer (the mteval-v13a rules used by WMT).
_13A_RULES = (
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
)
MAX_ORDER = 4


def tokenize_13a(line: str) -> list[str]:
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = (
            line.replace("&quot;", '"')
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
        )
    line = f" {line} "
    for pattern, replacement in _13A_RULES:
        line = pattern.sub(replacement, line)
    return line.split()


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def bleu(candidate: str, reference: str, *, effective_order: bool = True) -> float:
    """Sentence BLEU in [0, 1]. ``effective_order``: the geometric mean stops at the longest
    n-gram the hypothesis has (sacrebleu's ``use_effective_order``); else a hypothesis shorter
    than four tokens scores 0, as a corpus BLEU."""
    hypothesis = tokenize_13a(candidate.rstrip())
    target = tokenize_13a(reference.rstrip())
    correct, total = [], []
    for n in range(1, MAX_ORDER + 1):
        hyp, ref = _ngrams(hypothesis, n), _ngrams(target, n)
        correct.append(sum(min(count, ref[gram]) for gram, count in hyp.items()))
        total.append(max(len(hypothesis) - n + 1, 0))
    if not any(correct):
        return 0.0
    sys_len, ref_len = len(hypothesis), len(target)
    brevity = 1.0 if sys_len >= ref_len else (math.exp(1 - ref_len / sys_len) if sys_len else 0.0)
    precisions = [0.0] * MAX_ORDER
    smooth, order = 1.0, MAX_ORDER
    for n in range(1, MAX_ORDER + 1):
        if total[n - 1] == 0:
            break
        if effective_order:
            order = n  # stop at the longest n-gram the hypothesis has
        if correct[n - 1] == 0:
            smooth *= 2
            precisions[n - 1] = 100.0 / (smooth * total[n - 1])
        else:
            precisions[n - 1] = 100.0 * correct[n - 1] / total[n - 1]
    logs = [math.log(p) if p > 0 else -9999999999 for p in precisions[:order]]
    # exp(log(100)) / 100 rounds to 1.0000000000000004: a score is never above 1.
    return min(1.0, brevity * math.exp(sum(logs) / order) / 100.0)


def _lcs_table(ref: Sequence[str], can: Sequence[str]) -> list[list[int]]:
    rows, cols = len(ref), len(can)
    table = [[0] * (cols + 1) for _ in range(rows + 1)]
    for i in range(1, rows + 1):
        for j in range(1, cols + 1):
            if ref[i - 1] == can[j - 1]:
                table[i][j] = table[i - 1][j - 1] + 1
            else:
                table[i][j] = max(table[i - 1][j], table[i][j - 1])
    return table


def rouge_l(candidate_tokens: Sequence[str], reference_tokens: Sequence[str]) -> RougeScore:
    if not candidate_tokens or not reference_tokens:
        return RougeScore(0.0, 0.0, 0.0)
    lcs = _lcs_table(reference_tokens, candidate_tokens)[-1][-1]
    precision, recall = lcs / len(candidate_tokens), lcs / len(reference_tokens)
    return RougeScore(precision, recall, _fmeasure(precision, recall))


def _lcs_indices(ref: Sequence[str], can: Sequence[str]) -> list[int]:
    table = _lcs_table(ref, can)
    i, j, indices = len(ref), len(can), []
    while i > 0 and j > 0:
        if ref[i - 1] == can[j - 1]:
            indices.append(i - 1)
            i, j = i - 1, j - 1
        elif table[i][j - 1] > table[i - 1][j]:
            j -= 1
        else:
            i -= 1
    return indices[::-1]


def rouge_l_sum(
    candidate_sentences: Sequence[Sequence[str]], reference_sentences: Sequence[Sequence[str]]
) -> RougeScore:
    """Summary-level ROUGE-L: the union LCS of each reference sentence with every candidate one."""
    ref_total = sum(len(s) for s in reference_sentences)
    can_total = sum(len(s) for s in candidate_sentences)
    if not ref_total or not can_total:
        return RougeScore(0.0, 0.0, 0.0)
    ref_counts: Counter[str] = Counter(t for s in reference_sentences for t in s)
    can_counts: Counter[str] = Counter(t for s in candidate_sentences for t in s)
    hits = 0
    for ref in reference_sentences:
        union = sorted({i for can in candidate_sentences for i in _lcs_indices(ref, can)})
        for token in (ref[i] for i in union):
            if can_counts[token] > 0 and ref_counts[token] > 0:
                hits += 1
                can_counts[token] -= 1
                ref_counts[token] -= 1
    precision, recall = hits / can_total, hits / ref_total
    return RougeScore(precision, recall, _fmeasure(precision, recall))


def rouge(
    candidate: str, reference: str, rouge_type: str = "rouge1", use_stemmer: bool = False
) -> float:
    """The F-measure of ``rouge1`` ... ``rouge9``, ``rougeL`` or ``rougeLsum``."""
    if rouge_type == "rougeLsum":

        def sentences(text: str) -> list[list[str]]:
            return [_ascii_tokens(s, use_stemmer) for s in text.split("\n") if s]

        return rouge_l_sum(sentences(candidate), sentences(reference)).fmeasure
    cand, ref = _ascii_tokens(candidate, use_stemmer), _ascii_tokens(reference, use_stemmer)
    if rouge_type == "rougeL":
        return rouge_l(cand, ref).fmeasure
    match = re.fullmatch(r"rouge([1-9])", rouge_type)
    if not match:
        raise ValueError(
            f"unknown ROUGE type {rouge_type!r}; expected rouge1..rouge9, rougeL, rougeLsum"
        )
    return rouge_n(cand, ref, int(match.group(1))).fmeasure
