#!/usr/bin/env python3
"""Turns the runs of bench/seed001.sh into docs/results/seed001.md: ROUGE-1/2/L mean ± std
over seeds per system beside a trivial baseline (lead-1 of DESCRIPTION), parameters, training
time, the scale beside the seed's, the seed's claims tested by paired bootstraps over the test
documents, and Figure 5's learned biases."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tomllib

from report_common import (best_valid_loss, distinct_share, document_rouge, figure_lines, finished_runs, mean_std,
                           paired_bootstrap, run_minutes, spread, verdict, write_atomic)

METRICS = ("rouge1", "rouge2", "rougeL")
BASE, ENC = "longformer", "hibrids-enc"


def load(runs_dir, recipes):
    rows = {r: [] for r in recipes}
    for path, result, rouge in finished_runs(runs_dir, recipes, "rouge.json"):
        for m in METRICS:
            result[m] = 100 * rouge["scores"][m]["fmeasure"]["mean"]
        result["valid_loss"] = best_valid_loss(os.path.join(path, "run", "metrics.jsonl"))
        result["distinct"] = distinct_share(os.path.join(path, "test", "predictions.jsonl"))
        result["documents"] = document_rouge(os.path.join(path, "test", "predictions.jsonl"),
                                          os.path.join(path, "test", "rouge-per-example.jsonl"))
        rows[result["recipe"]].append(result)
    return rows


def summary(rows):
    out = {}
    for recipe, runs in rows.items():
        if not runs:
            continue
        s = {"n": len(runs), "parameters": runs[0]["parameters"],
             "train_minutes": statistics.mean(r["train_seconds"] for r in runs) / 60}
        for m in METRICS + ("valid_loss", "distinct"):
            s[m] = mean_std([r[m] for r in runs])
        out[recipe] = s
    return out


def document_scores(runs, ids, metric):
    """Per test document, the system's score averaged over its seeds."""
    return [statistics.mean(run["documents"][i][metric] for run in runs) for i in ids]


def claim_lines(rows, baseline, a, b, text):
    """A claim as paired bootstraps over the documents every run scored, on R-L and R-2."""
    if a not in rows or rows[a] == [] or (b != "lead" and not rows.get(b)):
        return [f"- {text}: not run"]
    runs_a = rows[a]
    docs = set(runs_a[0]["documents"])
    for run in runs_a + ([] if b == "lead" else rows[b]):
        docs &= set(run["documents"])
    if b == "lead":
        docs &= set(baseline)
    ids = sorted(docs)
    lines = [f"- {text}"]
    for metric in ("rougeL", "rouge2"):
        sa = document_scores(runs_a, ids, metric)
        sb = [baseline[i][metric] for i in ids] if b == "lead" else document_scores(rows[b], ids, metric)
        diff, (lo, hi), p = paired_bootstrap(sa, sb)
        seeds_b = None if b == "lead" else len(rows[b])
        lines.append(f"  - {metric}: Δ {diff:+.2f} [{lo:+.2f}, {hi:+.2f}], p = {p:.3f} over {len(ids)} documents: "
                     f"{verdict(diff, p, len(runs_a), seeds_b)}")
    return lines


def base_description(runs_dir):
    """The denoising base every system starts from: its steps, minutes and best valid loss."""
    base_dir = os.path.join(os.path.dirname(os.path.normpath(runs_dir)), "base")
    with open(os.path.join(base_dir, "config.toml"), "rb") as f:
        steps = tomllib.load(f)["train"]["max_steps"]
    with open(os.path.join(base_dir, "pretrained")) as f:
        minutes = int(f.read().strip()) / 60
    return steps, minutes, best_valid_loss(os.path.join(base_dir, "metrics.jsonl"))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--recipes", required=True)
    ap.add_argument("--strata", required=True)
    ap.add_argument("--baseline", required=True, help="directory of the lead-1 baseline: pairs.jsonl, rouge-per-example.jsonl")
    ap.add_argument("--figures", default="", help="recipes whose first seed's tables `strata analyze biases` drew "
                    "into PAGE-biases/RECIPE/")
    ap.add_argument("--minutes", type=int, default=0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    recipes = args.recipes.split()
    rows = load(args.runs, recipes)
    stats = summary(rows)
    if not stats:
        sys.exit(f"{args.runs}: no finished runs")
    baseline = document_rouge(os.path.join(args.baseline, "pairs.jsonl"),
                           os.path.join(args.baseline, "rouge-per-example.jsonl"))
    describe = {}
    for r in recipes:
        line = subprocess.run([args.strata, "recipes", "show", r], capture_output=True, text=True).stdout
        describe[r] = line.splitlines()[0].split(": ", 1)[-1].replace("|", "\\|") if line else ""
    with open(args.config) as f:
        config = f.read()
    settings = tomllib.loads(config)
    train = settings["train"]
    any_run = next(r for runs in rows.values() for r in runs)
    base_steps, base_minutes, base_loss = base_description(args.runs)

    lines = ["# Seed 001 (HIBRIDS) in miniature: man-page summarisation", "",
             "Generated by `bench/seed001.sh` (do not edit by hand; rerun it). "
             f"This invocation: {args.minutes} minutes on this machine (runs already scored are not redone); the "
             f"runs on this page took {run_minutes(r for runs in rows.values() for r in runs):.0f} minutes of "
             f"training and scoring, one thread each, two at a time, after {base_minutes:.0f} minutes of pretraining "
             "the base.", "",
             "Task: write a man page's one-line NAME description from its body (the installed man pages, "
             "split by page name; sections and subsections give the tree). Every system starts from one "
             f"BART-denoising base ({base_steps:,} steps on the training pages, best valid loss {base_loss:.3f}; "
             "from scratch every system wrote one line for every page) and trains "
             "with the settings below; a recipe adds its attention, section tokens or section layers. "
             "Test split scored with ROUGE F1 ×100 (stemmed; beam 4, no repeated 5-gram, as the seed decodes); "
             "mean ± sample std over seeds (one seed shows no spread). Valid NLL: the lowest teacher-forced "
             "validation loss of the run (nats per summary token, label smoothing 0.1). Unique %: test documents "
             "whose summary no other document got (a model that ignores its input scores 0). Table 1 itself "
             "(question-summary hierarchies, hierarchy F1) is [seed001-qs.md](seed001-qs.md).", "",
             "## Scale, beside the seed's", "",
             "| | here | seed 001 |", "|---|---|---|",
             f"| model | 2+2-layer encoder-decoder, d 128 ({any_run['parameters']:,} parameters), BART-denoised "
             f"{base_steps:,} steps | LED-large (about 460M parameters), pretrained |",
             f"| input | {settings['data']['max_source_tokens']} tokens: the leading tokens of every section | "
             "GovReport 6,384 tokens; WikiBioSum 3,478 |",
             f"| training | {train['max_steps']:,} steps of at most {train['max_tokens']:,} tokens "
             f"(≤ {train['max_steps'] * train['max_tokens'] / 1e6:.1f}M tokens seen) | GovReport 5,000 updates of "
             "8 × 16,384 tokens |",
             "| output | the NAME line, about 6 words | GovReport summaries of about 600 words |", "",
             "## Results", "",
             "| system | what it is | R-1 | R-2 | R-L | valid NLL | unique % | parameters | train min | seeds |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    lead = {m: statistics.mean(v[m] for v in baseline.values()) for m in METRICS}
    lines.append(f"| lead-1 | the first sentence of DESCRIPTION (no training) | {lead['rouge1']:.2f} | "
                 f"{lead['rouge2']:.2f} | {lead['rougeL']:.2f} | – | – | 0 | 0 | – |")
    base_params = stats.get(BASE, {}).get("parameters")
    for r in recipes:
        if r not in stats:
            continue
        s = stats[r]
        n = s["n"]
        extra = f" (+{s['parameters'] - base_params:,})" if base_params and s["parameters"] != base_params else ""
        lines.append(f"| {r} | {describe[r]} | {spread(s['rouge1'], n)} | {spread(s['rouge2'], n)} | "
                     f"{spread(s['rougeL'], n)} | {spread(s['valid_loss'], n, 3)} | {s['distinct'][0]:.1f} | "
                     f"{s['parameters']:,}{extra} | {s['train_minutes']:.1f} | {n} |")
    beaten = [r for r in stats if stats[r]["rougeL"][0] <= lead["rougeL"]]
    if beaten:
        lines += ["", f"**Below the trivial baseline:** {', '.join(beaten)} score no higher R-L than lead-1 of "
                  "DESCRIPTION, which needs no training."]
    lines += ["", "## Table 4's ablations, relative to HIBRIDS-ENC, and Table 5", "",
              "| system | against | Δ R-1 | Δ R-2 | Δ R-L | Δ valid NLL |", "|---|---|---|---|---|---|"]
    for r, against in (("hibrids-enc-no-level", ENC), ("hibrids-enc-no-path", ENC), ("hibrids-enc-symmetric", ENC),
                       ("hierenc-hibrids", "hierenc")):
        if r in stats and against in stats:
            d = [stats[r][m][0] - stats[against][m][0] for m in METRICS + ("valid_loss",)]
            lines.append(f"| {r} | {against} | {d[0]:+.2f} | {d[1]:+.2f} | {d[2]:+.2f} | {d[3]:+.3f} |")
    lines += ["", "## The seed's findings at this scale", "",
              "Each claim is a paired bootstrap over the test documents (2,000 resamples): per document, a system's "
              "ROUGE F averaged over its seeds; Δ is the mean difference (×100) with its 95 % interval and the "
              "two-sided p-value, uncorrected for the number of claims. A claim *holds* when Δ points its way with "
              "p < 0.05 and both sides ran at least two seeds.", ""]
    collapsed = [r for r in stats if stats[r]["distinct"][0] < 5]
    if collapsed:
        lines += [f"**Read this first:** {', '.join(collapsed)} write (nearly) one summary for every page (unique % "
                  "below 5). Their ROUGE measures which generic line a run settled on, not how it used the "
                  "document's structure, so a difference involving them says which phrase won, even where it holds.",
                  ""]
    claims = [(r, "lead", f"{r.upper()} beats lead-1 of DESCRIPTION") for r in (BASE, ENC)]
    claims += [(ENC, BASE, "HIBRIDS-ENC beats the base (Longformer-style window)")]
    claims += [(ENC, o, f"HIBRIDS-ENC beats {o.upper()}")
               for o in ("sectok", "lvlsectok", "tokbias", "secbias", "hierenc", "multitask")]
    claims += [(ENC, "hibrids-dec", "HIBRIDS on the encoder beats it on the decoder (Table 1)"),
               (ENC, "hibrids-s-enc", "full HIBRIDS beats HIBRIDS_S on the encoder"),
               ("hibrids-dec", BASE, "HIBRIDS-DEC beats the base (Figure 4)"),
               (ENC, "hibrids-enc-dec", "HIBRIDS on both sides is worse than on the encoder alone (§7, not reported "
                                        "in the seed's tables)"),
               ("hierenc-hibrids", "hierenc", "HIBRIDS in HIERENC's section layers improves it (Table 5)")]
    claims += [(ENC, r, f"removing {what} hurts (Table 4)") for r, what in
               (("hibrids-enc-no-level", "level difference"), ("hibrids-enc-no-path", "path length"),
                ("hibrids-enc-symmetric", "asymmetry"))]
    for a, b, text in claims:
        lines += claim_lines(rows, baseline, a, b, text)
    figures = args.figures.split()
    if figures:
        lines += ["", "## Figure 6: the learned biases, on full-document summarisation", ""]
        lines += figure_lines(args.out, figures)
    lines += ["", "## What was not run, and why", "",
              "- GovReport and WikiBioSum (Task III's corpora) are not in Debian; the man pages stand in.", "",
              "## Settings", "", f"`{args.config}`, with `train.seed` = each seed, `threads = 1` "
              "(two runs side by side on 2 cores) and `train.base_model` = the denoising base:", "", "```toml",
              config.strip(), "```", ""]
    write_atomic(args.out, lines)


if __name__ == "__main__":
    main()
