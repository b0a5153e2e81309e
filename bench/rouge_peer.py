#!/usr/bin/env python3
"""The peer for bench_rouge: ROUGE the way Google's rouge-score package computes it.

HONEST NOTE: this is NOT the rouge-score package. It cannot be installed here (no PyPI), so
this file is strata's own re-implementation of rouge-score's algorithm, written to do the
same work in the same way in pure Python: its tokenizer (lower-case, [^a-z0-9]+ -> space,
split, NLTK PorterStemmer on tokens longer than 3 characters, drop invalid tokens), n-gram
collections.Counter objects, a full Python LCS table per rougeL pair, and for rougeLsum the
per-sentence re-tokenisation, LCS tables, backtracking and token-count clipping of
ROUGE-1.5.5's summary-level LCS. Like rouge-score, it caches nothing between calls. Timings
of the real package should be close but were not measured.

Usage: rouge_peer.py PAIRS.jsonl [--types rouge1,rouge2,rougeL,rougeLsum] [--no-stem]
                                 [--per-example OUT.jsonl]
Each input line is {"prediction": ..., "reference": ...}. Prints one JSON object: pairs,
seconds and cpu_seconds (scoring only, not reading), pairs_per_second and the mean P/R/F
per type.
"""

import argparse
import collections
import json
import re
import sys
import time

from nltk.stem import porter

NON_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")
SPACES = re.compile(r"\s+")
VALID_TOKEN = re.compile(r"^[a-z0-9]+$")


def tokenize(text, stemmer):
    words = SPACES.split(NON_ALPHANUMERIC.sub(" ", text.lower()))
    if stemmer is not None:
        words = [stemmer.stem(w) if len(w) > 3 else w for w in words]
    return [w for w in words if VALID_TOKEN.match(w)]


def make_score(hits, predicted, expected):
    precision = hits / max(predicted, 1)
    recall = hits / max(expected, 1)
    f = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return (precision, recall, f)


def ngram_counts(tokens, n):
    return collections.Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def rouge_n(target, prediction, n):
    expected, predicted = ngram_counts(target, n), ngram_counts(prediction, n)
    hits = sum(min(count, predicted[gram]) for gram, count in expected.items())
    return make_score(hits, sum(predicted.values()), sum(expected.values()))


def lcs_table(a, b):
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            if a[i - 1] == b[j - 1]:
                table[i][j] = table[i - 1][j - 1] + 1
            else:
                table[i][j] = max(table[i - 1][j], table[i][j - 1])
    return table


def rouge_l(target, prediction):
    if not target or not prediction:
        return (0.0, 0.0, 0.0)
    length = lcs_table(target, prediction)[-1][-1]
    return make_score(length, len(prediction), len(target))


def lcs_positions(reference, candidate):
    """Positions in `reference` of the LCS read back from the end of the table."""
    table = lcs_table(reference, candidate)
    i, j, positions = len(reference), len(candidate), []
    while i > 0 and j > 0:
        if reference[i - 1] == candidate[j - 1]:
            positions.append(i - 1)
            i, j = i - 1, j - 1
        elif table[i][j - 1] > table[i - 1][j]:
            j -= 1
        else:
            i -= 1
    return positions


def rouge_lsum(target_text, prediction_text, stemmer):
    def sentences(text):
        return [tokenize(line, stemmer) for line in text.split("\n") if line]

    references, candidates = sentences(target_text), sentences(prediction_text)
    m = sum(len(s) for s in references)
    n = sum(len(s) for s in candidates)
    if not references or not candidates or not m or not n:
        return (0.0, 0.0, 0.0)
    left_r = collections.Counter(t for s in references for t in s)
    left_c = collections.Counter(t for s in candidates for t in s)
    hits = 0
    for reference in references:
        union = set()
        for candidate in candidates:
            union.update(lcs_positions(reference, candidate))
        for token in (reference[i] for i in sorted(union)):
            if left_c[token] > 0 and left_r[token] > 0:
                hits += 1
                left_c[token] -= 1
                left_r[token] -= 1
    return make_score(hits, n, m)


def score(types, target, prediction, stemmer):
    target_tokens = tokenize(target, stemmer)
    prediction_tokens = tokenize(prediction, stemmer)
    result = {}
    for name in types:
        if name == "rougeL":
            result[name] = rouge_l(target_tokens, prediction_tokens)
        elif name == "rougeLsum":
            result[name] = rouge_lsum(target, prediction, stemmer)
        else:
            result[name] = rouge_n(target_tokens, prediction_tokens, int(name[5:]))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs")
    parser.add_argument("--types", default="rouge1,rouge2,rougeL,rougeLsum")
    parser.add_argument("--no-stem", action="store_true")
    parser.add_argument("--per-example")
    args = parser.parse_args()

    types = args.types.split(",")
    stemmer = None if args.no_stem else porter.PorterStemmer()
    with open(args.pairs, encoding="utf-8") as f:
        pairs = [json.loads(line) for line in f if line.strip()]

    start, start_cpu = time.perf_counter(), time.process_time()
    rows = [score(types, p["reference"], p["prediction"], stemmer) for p in pairs]
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - start_cpu

    if args.per_example:
        with open(args.per_example, "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps({k: dict(zip(("precision", "recall", "fmeasure"), v))
                                    for k, v in row.items()}) + "\n")
    means = {name: [sum(row[name][k] for row in rows) / max(len(rows), 1) for k in range(3)]
             for name in types}
    json.dump({"pairs": len(rows), "seconds": seconds, "cpu_seconds": cpu_seconds,
               "pairs_per_second": len(rows) / seconds if seconds > 0 else 0.0,
               "mean": means}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
