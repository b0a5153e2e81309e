#!/usr/bin/env python3
"""Turns the runs of `TASK=qs bench/seed001.sh` into docs/results/seed001-qs.md: seed 001's
Table 1 (QSGen-Hier) in miniature on man-page question-summary hierarchies. Hierarchy F1,
summary ROUGE and question BLEU per system (mean ± std over seeds), a constant-output
baseline, and the seed's claims tested with paired bootstraps over the test hierarchies."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import tomllib

from report_common import (best_valid_loss, distinct_share, figure_lines, finished_runs, mean_std, paired_bootstrap,
                           read_jsonl, run_minutes, spread, verdict, write_atomic)

BASE, ENC, DEC, BOTH = "longformer", "hibrids-enc", "hibrids-dec", "hibrids-enc-dec"
HIERENC, HIERENC_HIBRIDS = "hierenc", "hierenc-hibrids"
CONSTANT = "constant"
# The page's systems (Table 1's, Table 5's HIERENC with HIBRIDS and HIBRIDS on both sides) as
# recipes (`strata recipes list`), and the seeds each should have.
SYSTEMS = ["longformer", "sectok", "lvlsectok", "tokbias", "secbias", "hierenc", "multitask", "hibrids-enc",
           "hibrids-s-enc", "hibrids-dec", "hibrids-s-dec", "hibrids-enc-dec", "hierenc-hibrids"]
SEEDS = 3
CANDIDATES = 300  # training hierarchies tried as the constant output, each against as many others


def linearize_task_one(root):
    """Task I's target (strata's linearize() without the root's question): pairs depth-first,
    level tokens before every pair but the first."""
    flat = []

    def walk(node, depth):
        flat.append((depth, node["question"].strip() if flat else "", node["summary"].strip()))
        for child in node.get("children", []):
            walk(child, depth + 1)

    walk(root, 0)
    parts, previous = [], 0
    for i, (depth, question, summary) in enumerate(flat):
        if i > 0:
            if depth > previous:
                parts.append("[L↑]")
            elif depth == previous:
                parts.append("[L-]")
            else:
                parts.extend(["[L↓]"] * (previous - depth))
        parts.extend(t for t in (question, summary) if t)
        previous = depth
    return " ".join(parts)


def hierarchy_scores(strata, pairs):
    """`strata eval hierarchy` on (prediction, reference) pairs: (per-pair rows, summary)."""
    with tempfile.TemporaryDirectory() as tmp:
        path, per = os.path.join(tmp, "pairs.jsonl"), os.path.join(tmp, "per.jsonl")
        with open(path, "w") as f:
            for i, (p, r) in enumerate(pairs):
                f.write(json.dumps({"id": i, "prediction": p, "reference": r}) + "\n")
        out = subprocess.run([strata, "eval", "hierarchy", "--pairs", path, "--json", "--per-example", per],
                             capture_output=True, text=True, check=True).stdout
        return read_jsonl(per), json.loads(out)


def constant_baseline(strata, data_dir, test_references):
    """The training hierarchy that, written for every input, scores the best mean hierarchy
    F1 against other training hierarchies; then its scores on the test set. What a model
    that ignores its input can reach."""
    train = [linearize_task_one(h) for e in read_jsonl(os.path.join(data_dir, "train.jsonl"))
             for h in e["hierarchy"]]
    candidates, references = train[:CANDIDATES], train[CANDIDATES:2 * CANDIDATES]
    rows, _ = hierarchy_scores(strata, [(c, r) for c in candidates for r in references])
    means = [statistics.mean(rows[i * len(references) + j]["f1"] for j in range(len(references)))
             for i in range(len(candidates))]
    best = candidates[max(range(len(candidates)), key=means.__getitem__)]
    rows, summary = hierarchy_scores(strata, [(best, r) for r in test_references])
    return best, rows, summary


def not_run_lines(runs):
    """The page's lines on Table 1's systems and seeds that are not in `runs`."""
    missing = [r for r in SYSTEMS if not runs.get(r)]
    short = [r for r in SYSTEMS if runs.get(r) and len(runs[r]) < SEEDS]
    lines = []
    if missing:
        lines.append(f"- **{', '.join(r.upper() for r in missing)}**: the recipes exist, not run here "
                     "(`RECIPES=\"...\" TASK=qs bench/seed001.sh` adds them, keeping the runs already made).")
    if short:
        lines.append(f"- Fewer than {SEEDS} seeds: {', '.join(f'{r.upper()} ({len(runs[r])})' for r in short)}.")
    return lines


def load_runs(runs_dir, recipes):
    runs = {r: [] for r in recipes}
    for path, result, summary in finished_runs(runs_dir, recipes, "hierarchy.json"):
        result["summary"] = summary
        result["rows"] = read_jsonl(os.path.join(path, "test", "hierarchy-per-example.jsonl"))
        result["valid_loss"] = best_valid_loss(os.path.join(path, "run", "metrics.jsonl"))
        result["distinct"] = distinct_share(os.path.join(path, "test", "predictions.jsonl"))
        result["references"] = [r["reference"] for r in read_jsonl(os.path.join(path, "test", "predictions.jsonl"))]
        runs[result["recipe"]].append(result)
    return {r: v for r, v in runs.items() if v}


def corpus_values(summary):
    """The page's columns from one `strata eval hierarchy --json` summary (×100)."""
    g = summary["generated"]
    return {"f1": 100 * summary["f1"], "rouge1": 100 * summary["summary_rouge"]["rouge1"],
            "rouge2": 100 * summary["summary_rouge"]["rouge2"], "rougeL": 100 * summary["summary_rouge"]["rougeL"],
            "bleu": summary["question_bleu_nltk"]["score"], "sacrebleu": summary["question_bleu_sacrebleu"]["score"],
            "pairs": g["pairs_per_hierarchy"], "malformed": g["malformed"]}


def per_example(runs, metric):
    """Per test hierarchy, the score averaged over the system's seeds (×100)."""
    n = len(runs[0]["rows"])
    return [100 * statistics.mean(run["rows"][i][metric] for run in runs) for i in range(n)]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    for flag in ("--runs", "--config", "--recipes", "--strata", "--out", "--data"):
        ap.add_argument(flag, required=True)
    ap.add_argument("--minutes", type=int, default=0)
    ap.add_argument("--figures", default="", help="recipes whose first seed's tables `strata analyze biases` drew "
                    "into PAGE-biases/RECIPE/")
    args = ap.parse_args()
    recipes = args.recipes.split()
    runs = load_runs(args.runs, recipes)
    if not runs:
        sys.exit(f"{args.runs}: no finished runs")
    references = next(iter(runs.values()))[0]["references"]
    for recipe, rs in runs.items():
        if any(r["references"] != references for r in rs):
            sys.exit(f"{recipe}: its test references differ from the other runs'")
    constant, constant_rows, constant_summary = constant_baseline(args.strata, args.data, references)
    with open(args.config) as f:
        config = f.read()
    settings = tomllib.loads(config)
    base_dir = os.path.join(os.path.dirname(os.path.normpath(args.runs)), "base")
    with open(os.path.join(base_dir, "config.toml"), "rb") as f:
        base_steps = tomllib.load(f)["train"]["max_steps"]
    base_loss = best_valid_loss(os.path.join(base_dir, "metrics.jsonl"))
    with open(os.path.join(base_dir, "pretrained")) as f:
        base_minutes = int(f.read().strip()) / 60
    train, data, decode = settings["train"], settings["data"], settings["decode"]
    tokens_seen = train["max_steps"] * train["max_tokens"]
    with open(os.path.join(args.data, "stats.json")) as f:
        data_stats = json.load(f)
    describe = {}
    for r in recipes:
        line = subprocess.run([args.strata, "recipes", "show", r], capture_output=True, text=True).stdout
        describe[r] = line.splitlines()[0].split(": ", 1)[-1].replace("|", "\\|") if line else ""

    columns = ("f1", "rouge1", "rouge2", "rougeL", "bleu", "sacrebleu")
    base_params = runs.get(BASE, [{}])[0].get("parameters")
    train_n = data_stats["train"]["examples"]
    L = ["# Seed 001 (HIBRIDS) in miniature: Table 1, question-summary hierarchies (QSGen-Hier)", "",
         "Generated by `TASK=qs bench/seed001.sh` (do not edit by hand; rerun it). "
         f"This invocation: {args.minutes} minutes on this machine (runs already scored are not redone); the runs "
         f"on this page took {run_minutes(r for rs in runs.values() for r in rs):.0f} minutes of training and "
         f"scoring, one thread each, two at a time, after {base_minutes:.0f} minutes of pretraining the base.", "",
         "**Task I of the seed (§5.1):** given a root question and the document, write the root's summary and the "
         "rest of the hierarchy, linearised depth-first with level tokens ([L↑] deeper, [L-] same level, [L↓] "
         "shallower). Data: `strata data qs-manpages` over the installed man pages (docs/formats.md, "
         "\"Man-page hierarchies\"): the root asks \"What is NAME?\" and answers with the NAME line, each kept "
         "section is a child asking a question fixed by its heading and answering with its first sentence, each "
         "subsection a grandchild. "
         f"{train_n:,} / {data_stats['validation']['examples']:,} / {data_stats['test']['examples']:,} hierarchies "
         f"(train / validation / test, split by page name), {data_stats['test']['pairs_mean']:.1f} pairs and "
         f"{data_stats['test']['target_words_mean']:.0f} target words per test hierarchy.", "",
         "**What it can and cannot show.** The references are made by a rule from their inputs (headings → "
         "questions, lead sentences → summaries), so that rule scores hierarchy F1 = 100 by construction: the "
         "corpus tests whether a model learns to lay out a hierarchy that follows the document's tree and to copy "
         "the right sentences into it, not how well it writes questions. The seed's hierarchies were written by "
         "annotators.", "",
         "## Scale, beside the seed's", "",
         "| | here | seed 001 |", "|---|---|---|",
         f"| model | {settings['model']['encoder_layers']}+{settings['model']['decoder_layers']}-layer "
         f"encoder-decoder, d {settings['model']['d_model']} ({next(iter(runs.values()))[0]['parameters']:,} "
         f"parameters), from one BART-denoising base pretrained here on the training pages ({base_steps:,} steps, "
         f"validation loss {base_loss:.3f}) | LED-large (Longformer encoder-decoder, about 460M parameters), "
         "pretrained |",
         f"| input | {data['max_source_tokens']} tokens: the leading tokens of every kept section, heading first | "
         "aligned sections, 2,029 tokens on average (window 1,024) |",
         f"| training | {train_n:,} hierarchies, {train['max_steps']:,} steps of at most {train['max_tokens']:,} "
         f"tokens (≤ {tokens_seen / 1e6:.1f}M tokens seen) | 4,878 hierarchies, 500 updates of 8 × 10,240 tokens "
         "(≈ 41M tokens) |",
         f"| decoding | {'greedy' if decode['beam_size'] == 1 else 'beam ' + str(decode['beam_size'])}, "
         f"{decode['max_length']} tokens, no repeated {decode['no_repeat_ngram_size']}-gram | beam 4, 1,024 tokens, "
         "no repeated 5-gram |", ""]
    L += ["## Results", "",
          "Hier F1: seed 001 §5.2's hierarchy F1 (×100; `strata eval hierarchy`). R-1/2/L: ROUGE F of the "
          "summaries (one per line, stemmed). B-4: BLEU of the questions, NLTK 3.5's corpus BLEU as the seed "
          "(whitespace tokens, no smoothing) and SacreBLEU's default beside it. Mean ± std over seeds; one seed shows "
          "no spread. Unique %: test inputs whose output no other input got. Pairs: QS pairs per generated "
          "hierarchy (the references have "
          f"{data_stats['test']['pairs_mean']:.2f}).", "",
          "| system | what it is | Hier F1 | R-1 | R-2 | R-L | B-4 (NLTK) | B-4 (SacreBLEU) | valid NLL | unique % "
          "| pairs | parameters | seeds |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    c = corpus_values(constant_summary)
    L.append(f"| {CONSTANT} | one training hierarchy written for every input (the best of {CANDIDATES} on "
             f"{CANDIDATES} others) | " + " | ".join(f"{c[k]:.2f}" for k in columns) +
             f" | – | 0.0 | {c['pairs']:.2f} | 0 | – |")
    values = {}
    for r in recipes:
        if r not in runs:
            continue
        rs = runs[r]
        per_run = [corpus_values(x["summary"]) for x in rs]
        values[r] = {k: mean_std([v[k] for v in per_run]) for k in columns + ("pairs",)}
        n = len(rs)
        extra = f" (+{rs[0]['parameters'] - base_params:,})" if base_params and rs[0]["parameters"] != base_params else ""
        L.append(f"| {r} | {describe[r]} | " + " | ".join(spread(values[r][k], n) for k in columns) +
                 f" | {spread(mean_std([x['valid_loss'] for x in rs]), n, 3)} | "
                 f"{statistics.mean(x['distinct'] for x in rs):.1f} | {values[r]['pairs'][0]:.2f} | "
                 f"{rs[0]['parameters']:,}{extra} | {n} |")

    L += ["", "## The seed's findings at this scale", "",
          "Each claim is a paired bootstrap over the test hierarchies (2,000 resamples): per hierarchy, a system's "
          "score averaged over its seeds; Δ is the mean difference (×100) with its 95 % interval and the two-sided "
          "p-value. A claim *holds* when Δ points its way with p < 0.05 and both systems ran at least two seeds; "
          "question BLEU is a corpus score and is not tested. \"Seeds agreeing\" counts the seed pairs (same seed "
          "number) whose corpus scores point the claim's way. The p-values are not corrected for the number of claims "
          "tested here: with two seeds and this many tests, a p-value near 0.05 is weak evidence.", ""]
    claims = [(r, CONSTANT, f"{r.upper()} beats writing one hierarchy for every input") for r in recipes if r in runs]
    claims += [(ENC, o, f"HIBRIDS-ENC beats {o.upper()} (Table 1)") for o in recipes
               if o in runs and o not in (ENC, DEC, BOTH, HIERENC_HIBRIDS)]
    claims += [(ENC, DEC, "HIBRIDS on the encoder beats it on the decoder (Table 1)"),
               (HIERENC_HIBRIDS, HIERENC, "HIBRIDS in HIERENC's section layers improves it (Table 5)"),
               (ENC, BOTH, "HIBRIDS on both sides is worse than on the encoder alone (§7, not in the seed's tables)")]
    constant_scores = {m: [100 * row[m] for row in constant_rows] for m in ("f1", "rougeL")}
    for a, b, text in claims:
        if a not in runs or (b != CONSTANT and b not in runs):
            L.append(f"- {text}: not run")
            continue
        L.append(f"- {text}")
        for metric, name in (("f1", "hierarchy F1"), ("rougeL", "summary R-L")):
            sa = per_example(runs[a], metric)
            sb = constant_scores[metric] if b == CONSTANT else per_example(runs[b], metric)
            diff, (lo, hi), p = paired_bootstrap(sa, sb)
            seeds_b = None if b == CONSTANT else len(runs[b])
            if b == CONSTANT:
                agree = sum(1 for x in runs[a] if 100 * statistics.mean(row[metric] for row in x["rows"]) >
                            statistics.mean(constant_scores[metric]))
                total = len(runs[a])
            else:
                by_seed = {x["seed"]: x for x in runs[b]}
                pairs = [(x, by_seed[x["seed"]]) for x in runs[a] if x["seed"] in by_seed]
                agree = sum(1 for x, y in pairs if statistics.mean(row[metric] for row in x["rows"]) >
                            statistics.mean(row[metric] for row in y["rows"]))
                total = len(pairs)
            L.append(f"  - {name}: Δ {diff:+.2f} [{lo:+.2f}, {hi:+.2f}], p = {p:.3f}; seeds agreeing {agree}/{total}: "
                     f"{verdict(diff, p, len(runs[a]), seeds_b)}")

    if args.figures.split():
        L += ["", "## Figure 5: the learned biases, on question-summary hierarchies", ""]
        L += figure_lines(args.out, args.figures.split())
    L += ["", "## What was not run, and why", "",
          "- **Task II (QSGen-ChildQ, Table 2)**: built (`data.qs_task = child_questions`) and tested, not run here: "
          "its targets are the section questions, templates of the headings this corpus puts in the input."]
    L += not_run_lines(runs)
    L += ["- **Human evaluation (Table 3)** and GovReport-QS itself (not in Debian): the loader reads its "
          "JSONL shape (docs/formats.md), the data is not here.", "",
          "## The constant baseline's output", "", "```", constant, "```", "",
          "## Settings", "", "`configs/seed001-qs.toml`, with `train.seed` = each seed and `threads = 1`:", "",
          "```toml", config.strip(), "```", ""]
    write_atomic(args.out, L)


if __name__ == "__main__":
    main()
