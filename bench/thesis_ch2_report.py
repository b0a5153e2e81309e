"""docs/results/thesis-ch2.md from the runs of bench/thesis-ch2.sh: Tables 2.2-2.5 in miniature
(ROUGE-1/2/3/L of the baselines, the extractors, the TLMs and the bounds, mean ± std over seeds),
paired bootstraps over test documents for the chapter's findings, Fig. 2.2's copy curves and the
share of the TLM+E's copied n-grams that come from its extract block."""
import argparse
import json
import math
import os
import re
import statistics
import tomllib
import unicodedata
from collections import Counter

from report_common import (bootstrap_statistic, figure, fmt, line_chart_svg, mean_std, paired_bootstrap, read_jsonl,
                           write_atomic)

TYPES = ["rouge1", "rouge2", "rouge3", "rougeL"]
BASELINES = [("lead", "Lead-1"), ("lexrank", "LexRank"), ("textrank", "TextRank"), ("sumbasic", "SumBasic")]
SEEDED = [("sent_clf", "Sent-CLF"), ("sent_ptr", "Sent-PTR"), ("tlm", "TLM (no extracts)"),
          ("tlm-e-mm", "TLM+E (M,M)"), ("tlm-e-gm", "TLM+E (G,M)"),
          ("tlm-e-long-gm", "TLM+E (G,M), 768-token intro, sparse attention")]
BOUNDS = [("tlm-e-gg", "TLM+E (G,G): a bound, it reads the oracle"),
          ("tlm-e-long-gg", "TLM+E (G,G), 768-token intro, sparse attention: a bound"),
          ("gold-ext", "Gold Ext: the oracle itself")]
THESIS = {  # ROUGE-1/2/3/L: arXiv (Table 2.2) for the man pages, bigPatent (Table 2.4, R1/2/L) for descriptions
    "man": {"sent_ptr": "42.32/15.63/7.49/38.06", "tlm": "39.65/12.15/4.40/35.76 (TLM-I)",
            "tlm-e-gm": "41.62/14.69/6.16/38.03 (TLM-I+E)", "tlm-e-gg": "46.40/18.15/8.71/42.27",
            "gold-ext": "44.25/18.17/9.14/35.33", "lead": "-", "lexrank": "33.85/10.73/4.54/28.99",
            "sumbasic": "29.47/6.95/2.36/26.30"},
    "descriptions": {"tlm": "36.41/11.38/-/30.88", "tlm-e-gm": "38.65/12.31/-/34.09",
                     "tlm-e-gg": "39.99/13.79/-/35.33"},
}
# Systems only one corpus has: the long-window TLM+E reads man pages (descriptions fit 256 tokens).
ONLY_ON = {"tlm-e-long-gm": "man", "tlm-e-long-gg": "man"}
CORPUS_NAMES = {"man": "man pages (the arXiv/PubMed analogue: intro = SYNOPSIS + DESCRIPTION, summary = the NAME line)",
                "descriptions": "package descriptions (the bigPatent/Newsroom analogue: long description -> short)"}
RESAMPLES = 2000
COPY_ORDERS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25)  # Fig. 2.2's n, thinned


def per_example(system_dir):
    """Per test document, ROUGE F ×100 of each type; None when the system was not scored."""
    path = os.path.join(system_dir, "rouge-per-example.jsonl")
    if not os.path.exists(path):
        return None
    return [{t: 100 * row[t]["fmeasure"] for t in TYPES} for row in read_jsonl(path)]


def run_dir(corpus_dir, name, seed):
    """A seeded system's run folder."""
    return os.path.join(corpus_dir, "systems", f"{name}-s{seed}")


def system_runs(corpus_dir, name, seeds):
    """The per-example scores of each seed's run of a system (one entry for a seed-free one)."""
    if any(name == b for b, _ in BASELINES) or name == "gold-ext":
        rows = per_example(os.path.join(corpus_dir, "systems", name))
        return [rows] if rows else []
    out = []
    for seed in seeds:
        rows = per_example(run_dir(corpus_dir, name, seed))
        if rows:
            out.append(rows)
    return out


def seed_stats(runs, kind):
    return mean_std([statistics.mean(r[kind] for r in rows) for rows in runs])


def averaged(runs, kind):
    """Per document, the score averaged over the seeds (the thesis averages its samples)."""
    return [statistics.mean(rows[i][kind] for rows in runs) for i in range(len(runs[0]))]


def output_words(corpus_dir, name, seeds):
    """Mean words of the system's outputs (first run): F-measures favour outputs as long as the
    reference, so an extractor that picks two sentences pays for it."""
    d = os.path.join(corpus_dir, "systems", name)
    if not os.path.exists(d):
        d = run_dir(corpus_dir, name, seeds[0])
    rows = read_jsonl(os.path.join(d, "pairs.jsonl"))
    return statistics.mean(len(r["prediction"].split()) for r in rows) if rows else float("nan")


def valid_losses(corpus_dir, run):
    path = os.path.join(corpus_dir, "runs", run, "metrics.jsonl")
    if not os.path.exists(path):
        return []
    return [(r["step"], r["loss"]) for r in read_jsonl(path) if r.get("split") == "valid" and "loss" in r]


def copy_curve(system_dir):
    path = os.path.join(system_dir, "copy.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)["orders"]


def unigram_f1(a, b):
    """Unigram overlap F1 of two texts (lowercased word tokens, clipped counts)."""
    x, y = Counter(re.findall(r"\w+", a.lower())), Counter(re.findall(r"\w+", b.lower()))
    common = sum((x & y).values())
    if not common:
        return 0.0
    precision, recall = common / sum(x.values()), common / sum(y.values())
    return 2 * precision * recall / (precision + recall)


def input_dependence(pairs_path):
    """(mean unigram F1 ×100 of each output against its own reference, against the reference of
    the document half the test set away): a system that writes the same kind of text whatever
    it reads scores about the same on both. Half the set away, not the next document: neighbours
    can be one source package's descriptions."""
    rows = read_jsonl(pairs_path)
    n = len(rows)
    own = [unigram_f1(r["prediction"], r["reference"]) for r in rows]
    other = [unigram_f1(r["prediction"], rows[(i + n // 2) % n]["reference"]) for i, r in enumerate(rows)]
    return 100 * statistics.mean(own), 100 * statistics.mean(other)


def table_2_1(stats):
    """Table 2.1's row for the corpus (documents, compression ratio, mean summary and document
    words), from the corpus's stats.json where it has them."""
    every = stats.get("all", {})
    if "compression_ratio" in every:
        docs, ratio = every["documents"], every["compression_ratio"]
        summary, document = every["summary_words_mean"], every["document_words_mean"]
    elif "input_words" in every and "target_words" in every:
        docs = every.get("documents", 0)
        summary, document = every["target_words"]["mean"], every["input_words"]["mean"]
        ratio = document / summary if summary else float("nan")
    else:
        return []
    return ["| corpus (all splits) | documents | ratio | summary words | document words |", "|---|---|---|---|---|",
            f"| here | {docs:,} | {ratio:.1f} | {summary:.1f} | {document:.1f} |",
            "| thesis, arXiv / bigPatent | 215,913 / 1.34M | 39.8 / 36.4 | 292.8 / 116.5 | 6,913.8 / 3,572.8 |", ""]


def corpus_section(out_dir, corpus, seeds, figures, report):
    c = os.path.join(out_dir, corpus)
    # The single-run parts (copy rates, input dependence) read the first seed's systems; with no
    # seed finished, only the baselines have outputs.
    first = seeds[0] if seeds else None
    lines = [f"## {CORPUS_NAMES.get(corpus, corpus)}", ""]
    stats_path = os.path.join(c, "data", "stats.json")
    if os.path.exists(stats_path):
        with open(stats_path) as f:
            lines += table_2_1(json.load(f))
    test = os.path.join(c, "test.jsonl")
    n_test = sum(1 for _ in open(test)) if os.path.exists(test) else 0
    lines += [f"Test documents scored: {n_test}; seeds {', '.join(seeds) or 'none finished'}. ROUGE F ×100, stemmed; mean ± std over "
              "seeds (baselines have none). Thesis column: the closest table of the paper, at its scale.", "",
              "| system | seeds | words | ROUGE-1 | ROUGE-2 | ROUGE-3 | ROUGE-L | thesis R1/R2/R3/RL |",
              "|---|---|---|---|---|---|---|---|"]
    runs = {}
    for name, label in BASELINES + SEEDED + BOUNDS:
        if ONLY_ON.get(name, corpus) != corpus:
            continue
        runs[name] = system_runs(c, name, seeds)
        if not runs[name]:
            lines.append(f"| {label} | 0 | | not run | | | | {THESIS.get(corpus, {}).get(name, '')} |")
            continue
        cells = [fmt(seed_stats(runs[name], t)) if len(runs[name]) > 1 else f"{seed_stats(runs[name], t)[0]:.2f}"
                 for t in TYPES]
        lines.append(f"| {label} | {len(runs[name])} | {output_words(c, name, seeds):.1f} | " + " | ".join(cells) +
                     f" | {THESIS.get(corpus, {}).get(name, '')} |")
    lines.append("")

    if runs.get("tlm") and runs.get("lead"):
        tlm, lead = seed_stats(runs["tlm"], "rouge1")[0], seed_stats(runs["lead"], "rouge1")[0]
        curve = ", ".join(f"{loss:.2f} at {step}" for step, loss in valid_losses(c, f"tlm-s{first}"))
        if tlm < lead:
            lines += [f"**The TLMs lose to Lead-1** (ROUGE-1 {tlm:.2f} against {lead:.2f}): at this budget the "
                      "language models do not yet beat the first sentence, and the findings about them below "
                      f"compare models below that trivial baseline. The TLM's validation loss (nats per token over whole windows): {curve}.",
                      ""]
    dependence = []
    for name, label in BASELINES[:1] + SEEDED + BOUNDS[:1]:
        d = os.path.join(c, "systems", "lead") if name == "lead" else run_dir(c, name, first)
        path = os.path.join(d, "pairs.jsonl")
        if os.path.exists(path) and os.path.getsize(path) > 0:
            own, other = input_dependence(path)
            dependence.append(f"| {label} | {own:.1f} | {other:.1f} | {own - other:+.1f} |")
    if dependence:
        lines += ["Does a summary depend on its document? Unigram F1 ×100 of each output (first seed) against its "
                  "own reference and against the reference of a document half the test set away. A system that "
                  "writes the same kind of text whatever it reads has a gap near 0.", "",
                  "| system | own reference | another's | gap |", "|---|---|---|---|"] + dependence + [""]
    findings = [("tlm-e-gm", "tlm", "TLM+E (G,M) beats TLM without extracts"),
                ("tlm-e-gm", "tlm-e-mm", "(G,M) beats (M,M)"),
                ("tlm-e-gg", "tlm-e-gm", "(G,G) beats (G,M) (the bound sits above)"),
                ("sent_ptr", "tlm-e-gm", "the extractor (Sent-PTR) beats TLM+E on ROUGE"),
                ("sent_ptr", "sent_clf", "Sent-PTR beats Sent-CLF (the thesis: on arXiv; CLF wins on PubMed)"),
                ("sent_clf", "lead", "Sent-CLF beats Lead-1"),
                ("sent_ptr", "lead", "Sent-PTR beats Lead-1"),
                ("tlm", "lead", "TLM beats Lead-1"),
                ("tlm-e-long-gm", "tlm-e-gm", "TLM+E reading a 768-token intro (1,024-token windows, sparse attention) "
                 "beats the one reading 128 (man pages: what the longer window bought)")]
    lines += ["Findings, each a paired bootstrap over the test documents of ROUGE-2 and ROUGE-L F (each "
              f"document's score averaged over the seeds), {RESAMPLES} resamples: the mean difference, its 95 % "
              "interval and the two-sided p; a finding holds "
              "when both differences are positive with p < 0.05 and every trained system in it has two seeds or "
              "more, and goes the other way when both are negative with p < 0.05; anything between is not "
              "established:", ""]
    for a, b, text in findings:
        if any(ONLY_ON.get(n, corpus) != corpus for n in (a, b)):
            continue
        if not runs.get(a) or not runs.get(b):
            lines.append(f"- {text}: not run")
            continue
        parts, tests = [], []
        for kind in ("rouge2", "rougeL"):
            diff, (lo, hi), p = paired_bootstrap(averaged(runs[a], kind), averaged(runs[b], kind), RESAMPLES)
            parts.append(f"{kind} {diff:+.2f} [{lo:+.2f}, {hi:+.2f}] (p = {p:.3f})")
            tests.append((diff, p))
        seeded = [n for n in (a, b) if n in dict(SEEDED + BOUNDS) and n != "gold-ext"]
        if any(len(runs[n]) < 2 for n in seeded):
            verdict = "one seed: no spread, no verdict"
        elif all(d > 0 and p < 0.05 for d, p in tests):
            verdict = "**holds**"
        elif all(d < 0 and p < 0.05 for d, p in tests):
            verdict = "**does not hold** (the other way, significantly)"
        else:
            # One metric significant and the other not (or the two disagreeing): say which, decide nothing.
            signif = [f"{kind}, {'in its favour' if d > 0 else 'the other way'}"
                      for kind, (d, p) in zip(("rouge2", "rougeL"), tests) if p < 0.05]
            if not signif:
                verdict = "not established (p >= 0.05 on both metrics)"
            elif len(signif) == 1:
                verdict = f"not established (significant only on {signif[0]})"
            else:
                verdict = f"not established (the metrics disagree: {' and '.join(signif)})"
        lines.append(f"- {text}: " + ", ".join(parts) + f": {verdict}")
    lines.append("")

    lines += ["Copy rate (Fig. 2.2): the share of a summary's n-grams found in its source (the document; for "
              "the extractors, the sentences they read), averaged over the documents with n words or more, first "
              "seed's run; '-' where no summary is that long. The reference row is the human summaries.", "",
              "| system | n=1 | 2 | 3 | 5 | 10 | 20 | 25 |", "|---|---|---|---|---|---|---|---|"]
    curve_rows = [("reference", "Reference (human)", os.path.join(c, "systems", "lead"), "reference")]
    for name, label in BASELINES[:1] + SEEDED + BOUNDS[:1]:
        d = os.path.join(c, "systems", "lead") if name == "lead" else run_dir(c, name, first)
        curve_rows.append((name, label, d, "prediction"))
    series = []
    for name, label, d, field in curve_rows:
        path = os.path.join(d, "copy-reference.json" if field == "reference" else "copy.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            orders = {o["n"]: o for o in json.load(f)["orders"]}

        def rate(n):
            r = orders.get(n, {}).get("copy_rate")
            return None if r is None else 100 * r
        lines.append(f"| {label} | " + " | ".join("-" if rate(n) is None else f"{rate(n):.1f}"
                                                 for n in (1, 2, 3, 5, 10, 20, 25)) + " |")
        series.append((label.split(":")[0], [rate(n) for n in COPY_ORDERS]))  # the legend is narrow
    lines.append("")
    if series:
        lines += [figure(figures, report, f"copy-{corpus}.svg", f"Copy rate against n, {corpus}",
                         line_chart_svg(f"Copied n-grams, {corpus} (first seed)", series, list(COPY_ORDERS), "n",
                                        "% of the summary's n-grams in its source")), ""]
    attribution = copy_curve(run_dir(c, "tlm-e-gm", first))
    if attribution and "attribution" in attribution[0]:
        lines += ["Where TLM+E (G,M)'s copies come from (Fig. 2.2, right): of its copied n-grams, the share found "
                  "in the extract block, and in the extract block only (the rest is found only in the intro it "
                  "read). The thesis: about 2/3 of copied 5-grams and 4/5 of copied 25-grams from the extracts. Where "
                  "the intro is the whole document (package descriptions), every extract n-gram is in the intro too, "
                  "so 'extract only' is near 0 by construction and only the man pages can split the two.", "",
                  "| n | copied | from extract | extract only |", "|---|---|---|---|"]
        for o in attribution:
            a = o["attribution"]
            if o["n"] in (1, 2, 3, 5, 10, 15, 20, 25) and a.get("from_extract_share") is not None:
                lines.append(f"| {o['n']} | {a.get('copied', '')} | {100 * a['from_extract_share']:.1f}% | "
                             f"{100 * a['extract_only_share']:.1f}% |")
        lines.append("")
    lines += copy_findings(c, seeds)
    return lines


EXTRACTORS = ("sent_clf", "sent_ptr")
# Word characters as `strata eval copy` splits text (src/eval/copy_rate.cpp): letters, marks
# and numbers; everything else separates words.
WORD_CATEGORIES = {"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No"}


def copy_tokens(text):
    """Lowercased words of `text`, as `strata eval copy` reads them."""
    tokens, current = [], []
    for ch in text:
        if unicodedata.category(ch) in WORD_CATEGORIES:
            lower = ch.lower()
            current.append(lower if len(lower) == 1 else ch)
        elif current:
            tokens.append("".join(current))
            current = []
    if current:
        tokens.append("".join(current))
    return tokens


def ngrams(tokens, n):
    return [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]


def document_words(row):
    """A test document's words: its paragraphs, section by section, depth first (the text the
    systems' copy rates were measured against)."""
    def paragraphs(node):
        out = list(node.get("paragraphs") or [])
        for section in node.get("sections") or []:
            out += paragraphs(section)
        return out
    return copy_tokens("\n".join(paragraphs(row)))


def copy_counts(corpus_dir, name, seed, n, documents, extracts=None):
    """Per test document, for a system's run: (its output's n-grams, how many of them the
    document holds, how many of those the extract block holds), the block being `extracts`'s
    output for the same document (None: not counted)."""
    rows = read_jsonl(os.path.join(run_dir(corpus_dir, name, seed), "pairs.jsonl"))
    blocks = read_jsonl(os.path.join(run_dir(corpus_dir, extracts, seed), "pairs.jsonl")) if extracts else [None] * len(rows)
    counts = []
    for row, block, document in zip(rows, blocks, documents):
        grams = ngrams(copy_tokens(row["prediction"]), n)
        found = [g for g in grams if g in document]
        in_block = None
        if block is not None:
            block_grams = set(ngrams(copy_tokens(block["prediction"]), n))
            in_block = sum(g in block_grams for g in found)
        counts.append((len(grams), len(found), in_block))
    # The counts must be the ones `strata eval copy` made for this run, where it counted against
    # the document too (an extractor's copy.json counts against the sentences it read).
    if name in EXTRACTORS:
        return counts
    order = next((o for o in copy_curve(run_dir(corpus_dir, name, seed)) or [] if o["n"] == n), None)
    pooled = (sum(c[0] for c in counts), sum(c[1] for c in counts))
    if order and (order["total"], order["copied"]) != pooled:
        raise SystemExit(f"{run_dir(corpus_dir, name, seed)}: {n}-gram copy counts {pooled} (total, copied) differ from "
                         f"its copy.json's ({order['total']}, {order['copied']})")
    return counts


def copy_findings(corpus_dir, seeds):
    """The thesis's two copy findings, tested per test document over the seeds: Sent-PTR copies
    more of its 3-grams than TLM+E (G,M) (paired bootstrap of the per-document copy rates), and
    most of TLM+E (G,M)'s copied 5-grams lie in its extract block (Sent-PTR's picks; bootstrap of
    the pooled share over documents, against one half)."""
    systems = ("sent_ptr", "tlm-e-gm")
    if not seeds or any(not os.path.exists(os.path.join(run_dir(corpus_dir, s, seed), "pairs.jsonl"))
                        for s in systems for seed in seeds):
        return []
    test = read_jsonl(os.path.join(corpus_dir, "test.jsonl"))
    words = [document_words(row) for row in test]
    verdict_seeds = len(seeds) >= 2
    lines = ["Copy findings, tested per test document over the seeds (copy rates counted as `strata eval copy` "
             "counts them, against the document; the extract block of TLM+E (G,M) is the same seed's Sent-PTR "
             f"picks), {RESAMPLES} resamples:", ""]

    n = 3
    documents = [set(ngrams(w, n)) for w in words]
    rates = {}
    for name in systems:
        per_seed = [copy_counts(corpus_dir, name, seed, n, documents) for seed in seeds]
        rates[name] = [[100 * found / total for total, found, _ in (run[i] for run in per_seed) if total]
                       for i in range(len(test))]
    both = [i for i in range(len(test)) if rates["sent_ptr"][i] and rates["tlm-e-gm"][i]]
    a = [statistics.mean(rates["sent_ptr"][i]) for i in both]
    b = [statistics.mean(rates["tlm-e-gm"][i]) for i in both]
    diff, (lo, hi), p = paired_bootstrap(a, b, RESAMPLES)
    verdict = ("one seed: no verdict" if not verdict_seeds else "**holds**" if diff > 0 and p < 0.05 else
               "**does not hold** (the other way, significantly)" if p < 0.05 else "not established")
    lines.append(f"- Extractors copy more than TLM+E (the thesis): of their {n}-grams, Sent-PTR copies "
                 f"{statistics.mean(a):.1f} % and TLM+E (G,M) {statistics.mean(b):.1f} % per document ({len(both)} "
                 f"documents with {n} words or more from both), difference {diff:+.1f} points [{lo:+.1f}, {hi:+.1f}] "
                 f"(p = {p:.3f}): {verdict}")

    n = 5
    documents = [set(ngrams(w, n)) for w in words]
    per_seed = [copy_counts(corpus_dir, "tlm-e-gm", seed, n, documents, extracts="sent_ptr") for seed in seeds]
    copied = [sum(run[i][1] for run in per_seed) for i in range(len(test))]
    in_block = [sum(run[i][2] for run in per_seed) for i in range(len(test))]
    total = sum(copied)
    if total < 30:
        lines.append(f"- Long copies come from the extract block (the thesis: about 2/3 of copied 5-grams): TLM+E (G,M) "
                     f"copied {total} 5-grams from its documents over {len(seeds)} seeds, too few to test")
    else:
        def share_over_half(indices):
            return sum(in_block[i] for i in indices) / max(1, sum(copied[i] for i in indices)) - 0.5
        over, (lo, hi), p = bootstrap_statistic(len(test), share_over_half, resamples=RESAMPLES)
        # What copying from anywhere in the document would give: the share of its 5-grams that
        # the extract block holds (the block is a part of a short document more often than not).
        held = 0
        for seed in seeds:
            for row, w in zip(read_jsonl(os.path.join(run_dir(corpus_dir, "sent_ptr", seed), "pairs.jsonl")), words):
                block = set(ngrams(copy_tokens(row["prediction"]), n))
                held += sum(g in block for g in ngrams(w, n))
        chance = 100 * held / max(1, len(seeds) * sum(max(0, len(w) - n + 1) for w in words))
        verdict = ("one seed: no verdict" if not verdict_seeds else "**holds**" if over > 0 and p < 0.05 else
                   "**does not hold** (under half, significantly)" if p < 0.05 else "not established")
        lines.append(f"- Long copies come from the extract block (the thesis: about 2/3 of copied 5-grams): of TLM+E "
                     f"(G,M)'s {total} copied 5-grams over {len(seeds)} seeds, the extract block holds "
                     f"{100 * (over + 0.5):.0f} % (95 % interval {100 * (lo + 0.5):.0f}-{100 * (hi + 0.5):.0f} %; "
                     f"above one half, p = {p:.3f}; it holds {chance:.0f} % of the documents' 5-grams): {verdict}")
    return lines + [""]


def kept_seeds(keep, corpus):
    """The seeds of a corpus that finished and were kept: those with a done marker."""
    d = os.path.join(keep, corpus)
    names = os.listdir(d) if os.path.isdir(d) else []
    return sorted((n[1:-len(".done")] for n in names if re.fullmatch(r"s\d+\.done", n)), key=int)


def shown(path):
    """A path as the page shows it: relative to the checkout when it is inside it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def checkouts(keep, kept):
    """Which commits the kept seeds were trained from (bench/thesis-ch2.sh's `commits` files:
    'seed part commit' lines), as a sentence; empty when none is recorded."""
    by_commit = {}
    for corpus, seed in kept:
        path = os.path.join(keep, corpus, "commits")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                fields = line.split()
                if len(fields) == 3 and fields[0] == seed:
                    by_commit.setdefault(fields[2], []).append(f"{corpus} seed {seed}")
    if not by_commit:
        return ""
    return f" Trained from commit{'s' if len(by_commit) > 1 else ''} " + "; ".join(
        f"`{c}` ({', '.join(dict.fromkeys(runs))})" for c, runs in by_commit.items()) + "."


def progress(keep, seeds_of, planned):
    """What the page covers of the planned experiment, what it cost, and what is left."""
    planned_corpora, planned_seeds = (part.split() for part in planned.split(":"))
    seconds, kept = 0, []
    for corpus, seeds in seeds_of.items():
        for seed in seeds:
            marker = os.path.join(keep, corpus, f"s{seed}.done")
            if os.path.exists(marker):
                with open(marker) as f:
                    seconds += int(f.read().strip() or 0)
                kept.append((corpus, seed))
    text = (f"Its {len(kept)} corpus-and-seed run{'s' if len(kept) != 1 else ''} took {seconds / 3600:.1f} CPU-core hours in all (each run is one "
            f"process on one core, two side by side; `{shown(keep)}` keeps their outputs so that the experiment resumes on "
            "another machine)." + checkouts(keep, kept))
    missing = [(c, s) for c in planned_corpora for s in planned_seeds if (c, s) not in kept]

    def parts_kept(corpus, seed):
        """The parts of an unfinished seed that are kept (bench/thesis-ch2.sh trains a seed in parts)."""
        d, prefix = os.path.join(keep, corpus), f"s{seed}."
        parts = sorted(n[len(prefix):-len(".done")] for n in (os.listdir(d) if os.path.isdir(d) else [])
                       if n.startswith(prefix) and n.endswith(".done") and n != f"s{seed}.done")
        return f" ({', '.join(parts)} kept)" if parts else ""
    if missing:
        text += ("\n\n**Not finished:** this page covers " + (", ".join(f"{c} seed {s}" for c, s in kept) or "nothing") +
                 "; still to run: " + ", ".join(f"{c} seed {s}{parts_kept(c, s)}" for c, s in missing) +
                 f" (`SEEDS=\"{' '.join(planned_seeds)}\" bash bench/thesis-ch2.sh` restores the kept ones and runs the "
                 "rest). The verdicts below are on the seeds run so far.")
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--corpora", required=True)
    ap.add_argument("--seeds", help="the seeds reported, the same for every corpus (default: each corpus's kept "
                    "seeds, those with a done marker under --keep, so that a page written mid-experiment covers "
                    "only finished seeds)")
    ap.add_argument("--keep", default="docs/results/thesis-ch2/outputs",
                    help="the finished seeds' outputs (bench/thesis-ch2.sh's KEEP): their done markers hold their seconds")
    ap.add_argument("--planned", default="descriptions man:1 2 3",
                    help="the whole experiment, 'CORPORA:SEEDS': what is missing from it is said under the title")
    ap.add_argument("--tlm-steps", type=int, default=1000)
    ap.add_argument("--extractor-steps", type=int, default=500)
    ap.add_argument("--tlm-config", default="configs/thesis-ch2-tlm.toml")
    ap.add_argument("--long-tlm-config", default="configs/thesis-ch2-tlm-long.toml")
    ap.add_argument("--report", required=True)
    args = ap.parse_args()
    seeds_of = {corpus: args.seeds.split() if args.seeds else kept_seeds(args.keep, corpus)
                for corpus in args.corpora.split()}
    with open(args.tlm_config, "rb") as f:
        config = tomllib.load(f)
    tlm, train = config["model"], config["train"]
    with open(args.long_tlm_config, "rb") as f:
        long_config = tomllib.load(f)
    long_mask = json.loads(long_config["model"]["decoder_attention"])["heads"][0]["mask"]
    # Figures beside the page: docs/results/thesis-ch2.md -> docs/results/thesis-ch2/.
    figures = os.path.splitext(args.report)[0]
    lines = ["# Thesis ch. 2 in miniature: extract-then-abstract on man pages and package descriptions", "",
             "Made by `bench/thesis-ch2.sh` (`bench/thesis_ch2_report.py` writes this page). "
             + progress(args.keep, seeds_of, args.planned), ""] + [
             "## Scale", "",
             "| | thesis | here |", "|---|---|---|",
             "| data | arXiv 216k / PubMed 133k papers, Newsroom 1.2M, bigPatent 1.3M | the corpora below, cut to "
             "thousands of training documents |",
             "| TLM | GPT-2-like, 20 layers, d 768, 220M parameters, 1024-token windows, 200k steps of 256 windows | "
             f"{tlm['decoder_layers']} layers, d {tlm['d_model']}, d_ff {tlm['d_ff']}, {tlm['max_positions']}-token "
             f"windows, {args.tlm_steps:,} steps of {train['max_tokens'] // tlm['max_positions']} windows "
             f"(`{args.tlm_config}`) |"] + ([
             "| TLM+E, long (man pages only) | | the same model in "
             f"{long_config['model']['max_positions']}-token windows, an intro of "
             f"{long_config['tlm']['intro_tokens']} tokens (not {config['tlm']['intro_tokens']}), attention "
             f"`{long_mask.replace('|', chr(92) + '|')}` (segment 2: the summary), {args.tlm_steps:,} steps of "
             f"{long_config['train']['max_tokens'] // long_config['model']['max_positions']} windows "
             f"(`{args.long_tlm_config}`) |"] if "man" in args.corpora.split() else []) + [
             "| extractors | 300-d embeddings, BiLSTMs 512, 300 sentences x 35 tokens, evaluated every 200 updates "
             f"with patience 50 | 128-d, BiLSTMs 128, 60 sentences x 35 tokens, {args.extractor_steps} steps of about 16 "
             "documents, the best validation loss kept (`configs/thesis-ch2-extractor.toml`) |",
             "| decoding | top-k 30, temperature 0.7, averaged over samples | the same, one sample per seed |", ""]
    for corpus, seeds in seeds_of.items():
        lines += corpus_section(args.out_dir, corpus, seeds, figures, args.report)
    write_atomic(args.report, lines + [""])


if __name__ == "__main__":
    main()
