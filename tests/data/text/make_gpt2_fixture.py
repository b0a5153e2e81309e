#!/usr/bin/env python3
"""Makes the byte-level BPE fixture in this folder (no real GPT-2 vocabulary can be
downloaded, so one is learned here from a small corpus) and the reference encodings that
GPT-2's own algorithm gives with it.

  gpt2_tiny/vocab.json, gpt2_tiny/merges.txt   GPT-2 format: bytes in GPT-2 order, merges,
                                               then <|endoftext|>
  gpt2_tiny_tokenizer.json                     the same in HF tokenizer.json form
  gpt2_reference.jsonl                         {"text", "pieces", "ids"} per test string

The pre-tokeniser regex, bytes_to_unicode and bpe() below are copied from GPT-2's
encoder.py (github.com/openai/gpt-2, src/encoder.py). Needs Python 3 and the `regex`
module. Run from this folder: python3 make_gpt2_fixture.py
"""
import collections
import json
import os

import regex as re

PAT = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
NUM_MERGES = 400

CORPUS = """\
The quick brown fox jumps over the lazy dog. It's a well-known sentence; it's used to test
fonts, keyboards and tokenizers. We'll see how they're split: don't, won't, I'd, you've,
she'll, I'm. Numbers such as 2024, 3.14159 and 1,000,000 are split into digit runs.
Section 1.2 describes the method; section 3 reports results on 10 datasets.
  Indented lines, trailing spaces   and	tabs	matter too.

Unicode letters: naïve café, résumé, Zürich, São Paulo, Ελληνικά, русский текст, 東京 and
日本語のテキスト. Emoji 👍🏽 and symbols like → ≤ ≥ © also occur.
The summary of the document is short. The document is long, with many sections and
paragraphs; each paragraph has sentences, and each sentence has words.
The the the. There, their, they're. The model reads the text and writes the summary.
Long documents are split into sections, and sections into paragraphs. A structure-aware
model attends within a section first and across sections second; the attention pattern
follows the tree of headings. Training on long inputs needs memory, so the attention is
sparse: each token sees its neighbours, its sentence, and a few global tokens.
Results: the structured model reaches 41.2 ROUGE-1 against 39.8 for the baseline, while
using 14% of the attention pairs. Tokenizers matter here too: a byte-level tokenizer never
produces an unknown token, whereas a word-level one does, and the numbers 41.2 and 39.8
become four tokens each. Let's keep that in mind; we'll come back to it in section 4.
"""

EXTRA_TESTS = [
    "I'm here!  It's 2024.",
    "naïve café 東京",
    "hi 👍🏽 ok",
    "\n\nHello\n",
    "a   b  ",
    "don't 'sam !!'s",
    "  leading and trailing  ",
    "tab\tand\u00a0nbsp and\u3000ideographic space",
    "x\u0085y\u2028z",
    "CamelCaseWords and snake_case_words and 12345678901234567890",
    "unseen words: xylophone quixotic zephyr",
    "Ünïcödé wörds ånd ÇÀPS",
    "'''quotes''' and 'single' and \"double\"",
    "",
]


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(2**8):
        if b not in bs:
            bs.append(b)
            cs.append(2**8 + n)
            n += 1
    return dict(zip(bs, [chr(n) for n in cs]))


BYTE_ENCODER = bytes_to_unicode()


def spell(token):
    return "".join(BYTE_ENCODER[b] for b in token.encode("utf-8"))


def get_pairs(word):
    pairs = set()
    prev_char = word[0]
    for char in word[1:]:
        pairs.add((prev_char, char))
        prev_char = char
    return pairs


def bpe(token, bpe_ranks):
    word = tuple(token)
    pairs = get_pairs(word)
    if not pairs:
        return token
    while True:
        bigram = min(pairs, key=lambda pair: bpe_ranks.get(pair, float("inf")))
        if bigram not in bpe_ranks:
            break
        first, second = bigram
        new_word = []
        i = 0
        while i < len(word):
            try:
                j = word.index(first, i)
                new_word.extend(word[i:j])
                i = j
            except ValueError:
                new_word.extend(word[i:])
                break
            if word[i] == first and i < len(word) - 1 and word[i + 1] == second:
                new_word.append(first + second)
                i += 2
            else:
                new_word.append(word[i])
                i += 1
        word = tuple(new_word)
        if len(word) == 1:
            break
        pairs = get_pairs(word)
    return " ".join(word)


def learn_merges(text, count):
    """Plain BPE: most frequent pair, ties to the lexicographically smallest."""
    words = collections.Counter(tuple(spell(t)) for t in re.findall(PAT, text))
    merges = []
    while len(merges) < count:
        pairs = collections.Counter()
        for word, n in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += n
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        if pairs[best] < 2:
            break
        merges.append(best)
        merged = collections.Counter()
        for word, n in words.items():
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] += n
        words = merged
    return merges


def main():
    merges = learn_merges(CORPUS, NUM_MERGES)
    vocab = {}
    for b in sorted(BYTE_ENCODER, key=list(BYTE_ENCODER).index):
        vocab[BYTE_ENCODER[b]] = len(vocab)
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    vocab["<|endoftext|>"] = len(vocab)
    ranks = {pair: i for i, pair in enumerate(merges)}

    os.makedirs("gpt2_tiny", exist_ok=True)
    with open("gpt2_tiny/vocab.json", "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open("gpt2_tiny/merges.txt", "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write(f"{a} {b}\n")
    tokenizer = {
        "version": "1.0",
        "added_tokens": [{"id": vocab["<|endoftext|>"], "content": "<|endoftext|>",
                          "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": True, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                          "trim_offsets": True, "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": "", "end_of_word_suffix": "",
                  "fuse_unk": False, "vocab": vocab, "merges": [f"{a} {b}" for a, b in merges]},
    }
    with open("gpt2_tiny_tokenizer.json", "w", encoding="utf-8") as f:
        json.dump(tokenizer, f, ensure_ascii=False, indent=1)

    with open("gpt2_reference.jsonl", "w", encoding="utf-8") as f:
        for text in CORPUS.splitlines(keepends=True) + [CORPUS] + EXTRA_TESTS:
            pieces = re.findall(PAT, text)
            ids = [vocab[t] for p in pieces for t in bpe(spell(p), ranks).split(" ")]
            f.write(json.dumps({"text": text, "pieces": pieces, "ids": ids},
                               ensure_ascii=False) + "\n")
    print(f"{len(merges)} merges, {len(vocab)} vocabulary entries")


if __name__ == "__main__":
    main()
