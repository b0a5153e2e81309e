#!/usr/bin/env python3
"""Turns the runs of bench/seed000.sh into docs/results/seed000.md: Tables 2, 4 and 5 in
miniature beside lead-1 and the untuned base, Table 7's sweeps (SoftSA's τ, TruncSA's top-p),
Table 3's prefix layers and Figure 3's single-layer prefixes, the low-resource curve of §6.6,
the check that a prefix file on its base scores as the run that tuned it, the attention and
per-head spectrum figures (§4 Figure 1, §6.3 Figure 7), the scale beside the seed's, and the
seed's findings tested by paired bootstraps over the test documents. Missing runs, files and
figures are said to be missing; they never stop the page."""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tomllib

from report_common import (best_valid_loss, claim_lines, distinct_share, document_rouge, line_chart_svg, mean_std,
                           run_minutes, spread, write_atomic)

METRICS = ("rouge1", "rouge2", "rougeL")
RUN_NAME = re.compile(r"^(?P<system>.+)-s(?P<seed>\d+)-p(?P<percent>\d+)$")
NAMES = {"finetune": "Finetune", "prefix": "Prefix-tune", "uniblock": "UniBlock", "hierblock": "HierBlock",
         "truncsa": "TruncSA", "softsa": "SoftSA", "htruncsa": "HTruncSA", "hsoftsa": "HSoftSA",
         "hierblock-softsa": "HierBlock+SoftSA", "finetune-truncsa": "Finetune+TruncSA",
         "finetune-softsa": "Finetune+SoftSA", "prefix-top": "Prefix-tune, top layers",
         "prefix-low": "Prefix-tune, lower layers"}
# Figure 4's colours where the seed gives them (HierBlock blue, HierBlock+SA red, Finetune
# green, Prefix-tune olive); the rest from a palette.
COLOURS = {"hierblock": "#1f77b4", "hierblock-softsa": "#d62728", "finetune": "#2ca02c", "prefix": "#808000"}
PALETTE = ("#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f")
NOT_AVAILABLE = "not available"
LEAD, UNTUNED = "lead-1", "untuned base"


def name(system):
    return NAMES.get(system, system)


def isnan(x):
    return isinstance(x, float) and math.isnan(x)


def read_json(path):
    """The parsed file, or None when it is missing or unreadable."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def rouge_scores(path):
    """{metric: F1 ×100} from an `eval summarize` rouge.json, or None."""
    d = read_json(path)
    try:
        return {m: 100 * float(d["scores"][m]["fmeasure"]["mean"]) for m in METRICS}
    except (TypeError, KeyError, ValueError):
        return None


def safe(fn, *args):
    try:
        return fn(*args)
    except (OSError, ValueError, KeyError, TypeError):
        return float("nan")


def scored(directory):
    """A scored directory's test ROUGE with its per-document scores (`documents`), or None."""
    scores = rouge_scores(os.path.join(directory, "test", "rouge.json"))
    documents = safe(document_rouge, os.path.join(directory, "test", "predictions.jsonl"),
                     os.path.join(directory, "test", "rouge-per-example.jsonl"))
    if scores is None or not isinstance(documents, dict):
        return None
    scores["documents"] = documents
    scores["distinct"] = safe(distinct_share, os.path.join(directory, "test", "predictions.jsonl"))
    return scores


def load(runs_dir):
    """Every scored run as {(system, percent): [runs over seeds]}, and the run directories
    without scores (failed, unfinished or unreadable)."""
    runs, unscored = {}, []
    try:
        names = sorted(os.listdir(runs_dir))
    except OSError:
        return runs, unscored
    for dirname in names:
        path = os.path.join(runs_dir, dirname)
        match = RUN_NAME.match(dirname)
        if not os.path.isdir(path) or not match:
            continue
        result = read_json(os.path.join(path, "result.json"))
        scores = scored(path)
        if not isinstance(result, dict) or scores is None:
            unscored.append(dirname)
            continue
        result.update(scores)
        result["seed"] = int(match["seed"])
        result["valid_loss"] = safe(best_valid_loss, os.path.join(path, "run", "metrics.jsonl"))
        runs.setdefault((match["system"], int(match["percent"])), []).append(result)
    return runs, unscored


def at(runs, percent=100):
    """{system: [runs]} of the runs at one training share, for claim_lines."""
    return {system: rs for (system, p), rs in runs.items() if p == percent}


def summary(rs):
    """mean ± std over a system's seeds of every score, and the rest of its row."""
    seconds = [r["train_seconds"] for r in rs if isinstance(r.get("train_seconds"), (int, float))]
    s = {"n": len(rs), "trainable": rs[0].get("trainable"), "parameters": rs[0].get("parameters"),
         "prefix_bytes": rs[0].get("prefix_bytes"),
         "train_minutes": statistics.mean(seconds) / 60 if seconds else float("nan")}
    for m in METRICS + ("valid_loss", "distinct"):
        s[m] = mean_std([r[m] for r in rs if not isnan(r[m])])
    return s


def num(x, digits=2):
    return "-" if x is None or isnan(x) else f"{x:.{digits}f}"


def count(x):
    return "-" if not isinstance(x, (int, float)) else f"{int(x):,}"


def cell(s, metric, digits=2):
    return "-" if isnan(s[metric][0]) else spread(s[metric], s["n"], digits)


def describe(strata, recipe):
    """The first line of `strata recipes show RECIPE`, without its '# name (where):' head."""
    try:
        text = subprocess.run([strata, "recipes", "show", recipe], capture_output=True, text=True,
                              timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return text.splitlines()[0].split(": ", 1)[-1].replace("|", "\\|") if text.strip() else ""


def rel(path, report):
    return os.path.relpath(path, os.path.dirname(os.path.abspath(report))).replace(os.sep, "/")


# ---- charts ----

# ---- sections ----

def system_text(system, describes):
    """What a system is: its recipe's description, or the setting a sweep or a single layer changes."""
    if m := re.match(r"^softsa-tau(.+)$", system):
        return f"SoftSA (every encoder layer) with the Gumbel temperature τ = {m[1]} (Table 7)"
    if m := re.match(r"^truncsa-p(.+)$", system):
        return f"TruncSA (every encoder layer) keeping top-p {m[1]} of the key impact (Table 7)"
    if m := re.match(r"^prefix-lr(.+)$", system):
        return f"prefix-tuning with the learning rate {m[1]}"
    if m := re.match(r"^prefix-steps(\d+)$", system):
        return f"prefix-tuning for {int(m[1]):,} steps"
    if m := re.match(r"^prefix-layer(\d+)$", system):
        return f"prefix-tuning with prefixes in layer {m[1]} only, of the encoder and of the decoder (Figure 3)"
    return describes.get(system, "")


def base_text(base_config, max_source):
    """What the base was pretrained on, as its kept config.toml says."""
    whole = base_config.get("pretrain", {}).get("whole_documents", False)
    return (f"every part of the training pages (whole pages cut into chunks of {max_source} tokens)" if whole
            else f"the training pages' first {max_source} tokens")


def scale_section(config, rs, base_steps, base_read):
    model, data, train = config["model"], config["data"], config["train"]
    tokens = train["max_steps"] * train["max_tokens"] / 1e6
    params = rs.get("parameters") if rs else None
    return ["## Scale, beside the seed's", "",
            "| | here | seed 000 |", "|---|---|---|",
            f"| model | {model['encoder_layers']}+{model['decoder_layers']}-layer encoder-decoder, d {model['d_model']}"
            f" ({count(params)} parameters), BART-denoised {count(base_steps)} steps on "
            f"{base_read} | "
            "BART-large (406M parameters), pretrained |",
            f"| prefixes | 100 per layer (encoder, decoder, cross-attention) | 100 (XSum, Wikihow), 50 (CNN/DM, PubMed) |",
            f"| input | {data['max_source_tokens']} tokens of the man page | XSum about 430 words; CNN/DM, PubMed "
            "longer, truncated at BART's 1,024 tokens |",
            f"| training | {train['max_steps']:,} steps of at most {train['max_tokens']:,} tokens "
            f"(≤ {tokens:.1f}M tokens seen), learning rate {train['learning_rate']} | 30 epochs of batch 8 "
            "(XSum: 204k documents, about 765k updates), learning rate 5e-5 |",
            "| output | the NAME line, about 6 words; beam 5 | one-sentence (XSum) to multi-sentence summaries; "
            "beam 5 |", ""]


def baseline_row(label, text, b):
    if b is None:
        return f"| {label} | {text} | {NOT_AVAILABLE} | | | | | | | | | | |"
    mean = {m: statistics.mean(v[m] for v in b["documents"].values()) for m in METRICS}
    return (f"| {label} | {text} | {mean['rouge1']:.2f} | {mean['rouge2']:.2f} | {mean['rougeL']:.2f} | – | "
            f"{num(b.get('distinct'), 1)} | 0 | – | – | – | – | – |")


def main_table(rows, systems, describes, baselines):
    lines = ["## Tables 2, 4 and 5 in miniature", "",
             "Test split, ROUGE F1 ×100. Trainable %: trainable over all parameters (the frozen base "
             "included). Prefix file: what a prefix design ships per task (`run/adapter.safetensors`); "
             "finetuning ships the whole model.", "",
             "| system | what it is | R-1 | R-2 | R-L | valid NLL | unique % | trainable params | all params | "
             "trainable % | prefix file KB | train min | seeds |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
             baseline_row(LEAD, "the first sentence of DESCRIPTION (no training)", baselines.get(LEAD)),
             baseline_row(UNTUNED, "the denoising base every system starts from, not tuned (it rewrites its input)",
                          baselines.get(UNTUNED))]
    for system in systems:
        if system not in rows:
            lines.append(f"| {system} | {system_text(system, describes)} | not run | | | | | | | | | | 0 |")
            continue
        s = summary(rows[system])
        share = (f"{100 * s['trainable'] / s['parameters']:.2f}"
                 if s["trainable"] is not None and s["parameters"] else "-")
        kb = f"{s['prefix_bytes'] / 1024:.1f}" if s["prefix_bytes"] else "-"
        lines.append(f"| {system} | {system_text(system, describes)} | {cell(s, 'rouge1')} | {cell(s, 'rouge2')} | "
                     f"{cell(s, 'rougeL')} | {cell(s, 'valid_loss', 3)} | {num(s['distinct'][0], 1)} | "
                     f"{count(s['trainable'])} | {count(s['parameters'])} | {share} | {kb} | "
                     f"{num(s['train_minutes'], 1)} | {s['n']} |")
    lead = baselines.get(LEAD)
    if lead is not None:
        floor = statistics.mean(v["rougeL"] for v in lead["documents"].values())
        beaten = [s for s in systems if s in rows and summary(rows[s])["rougeL"][0] <= floor]
        if beaten:
            lines += ["", f"**Below the trivial baseline:** {', '.join(beaten)} score no higher R-L than lead-1 of "
                      "DESCRIPTION, which needs no training."]
    return lines


def short_table(title, intro, rows, systems, describes):
    lines = ["", title, "", intro, "",
             "| system | what it is | R-1 | R-2 | R-L | valid NLL | unique % | trainable params | seeds |",
             "|---|---|---|---|---|---|---|---|---|"]
    for system in systems:
        if system not in rows:
            lines.append(f"| {system} | {system_text(system, describes)} | not run | | | | | | 0 |")
            continue
        s = summary(rows[system])
        lines.append(f"| {system} | {system_text(system, describes)} | {cell(s, 'rouge1')} | {cell(s, 'rouge2')} | "
                     f"{cell(s, 'rougeL')} | {cell(s, 'valid_loss', 3)} | {num(s['distinct'][0], 1)} | "
                     f"{count(s['trainable'])} | {s['n']} |")
    return lines


def single_layer_chart(rows, single, figures, report):
    values = [summary(rows[s])["rougeL"][0] if s in rows else None for s in single]
    if not any(v is not None for v in values):
        return ["", f"Figure 3: {NOT_AVAILABLE} (no single-layer run has scores)."]
    svg = os.path.join(figures, "single_layer.svg")
    labels = [re.sub(r"^prefix-layer", "", s) for s in single]
    write_atomic(svg, line_chart_svg("Prefixes in one layer: ROUGE-L (seed 1)", [("prefix", values)], labels,
                                     "the layer with prefixes (1 = lowest)", "ROUGE-L F1 ×100 (test)",
                                     colours=COLOURS, name_of=name, palette=PALETTE))
    return ["", f"![ROUGE-L with prefixes in one layer]({rel(svg, report)})"]


def coinciding_layers(runs_dir, single, layers):
    """Single-layer systems whose seed-1 outputs are those of a Table 3 system: with as many
    layers as the base has here, one layer alone can be all of the top or of the lower layers."""
    outputs = {system: read_predictions(os.path.join(runs_dir, f"{system}-s1-p100", "test", "predictions.jsonl"))
               for system in single + layers}
    same = [(s, l) for s in single for l in layers if outputs[s] and outputs[s] == outputs[l]]
    return [f"{s} is {l} at this depth: the same prefixes train (their seed-1 outputs are identical)."
            for s, l in same]


def low_resource(runs, low, fractions, figures, report):
    """The table of R-L (and valid NLL) per system and training share, and the chart."""
    percents = sorted(set(fractions) | {100})
    lines = ["", "## Low-resource settings (§6.6, Figure 4), seed 1", "",
             "Each system trained on a random k % of the training pages (`--train-fraction`; the same subset for "
             "every system, fixed by `data.fraction_seed`), scored on the full test split; 100 % is the seed-1 "
             "run of the main table.", "",
             "| system | " + " | ".join(f"R-L {p} %" for p in percents) + " | " +
             " | ".join(f"NLL {p} %" for p in percents) + " |",
             "|---|" + "---|" * (2 * len(percents))]
    series = []
    for system in low:
        seed1 = [next((r for r in runs.get((system, p), []) if r["seed"] == 1), None) for p in percents]
        rl = [r["rougeL"] if r else None for r in seed1]
        lines.append(f"| {system} | " + " | ".join(num(v) for v in rl) + " | " +
                     " | ".join(num(r["valid_loss"], 3) if r else "-" for r in seed1) + " |")
        if any(v is not None for v in rl):
            series.append((system, rl))
    svg = os.path.join(figures, "low_resource.svg")
    if series:
        write_atomic(svg, line_chart_svg("Low-resource: ROUGE-L by training share (seed 1)", series,
                                         [f"{p}%" for p in percents], "share of the training set",
                                         "ROUGE-L F1 ×100 (test)", colours=COLOURS, name_of=name, palette=PALETTE))
        lines += ["", f"![ROUGE-L against the training share]({rel(svg, report)})"]
    else:
        lines += ["", f"Plot: {NOT_AVAILABLE} (no low-resource run has scores)."]
    return lines


def prefix_file_check(runs_dir):
    run = os.path.join(runs_dir, "prefix-s1-p100")
    lines = ["", "## The prefix file on its base", "",
             "Prefix-tune seed 1 scored twice on the test split: as the run that tuned it, and as the pretrained "
             "base with the run's prefix file loaded (`strata eval summarize --model BASE --adapter FILE`). "
             "The two must agree: the prefix file is all a task needs.", ""]
    own = rouge_scores(os.path.join(run, "test", "rouge.json"))
    loaded = rouge_scores(os.path.join(run, "prefix-file", "test", "rouge.json"))
    if own is None or loaded is None:
        missing = "the run's scores" if own is None else "the scores of base + prefix file"
        return lines + [f"{NOT_AVAILABLE.capitalize()}: {missing} are missing."]
    lines += ["| scored as | R-1 | R-2 | R-L |", "|---|---|---|---|",
              f"| the tuning run | {own['rouge1']:.4f} | {own['rouge2']:.4f} | {own['rougeL']:.4f} |",
              f"| base + prefix file | {loaded['rouge1']:.4f} | {loaded['rouge2']:.4f} | {loaded['rougeL']:.4f} |",
              ""]
    gap = max(abs(own[m] - loaded[m]) for m in METRICS)
    verdict = ("**Equal**: the prefix file reproduces the run's scores." if gap < 1e-9 else
               f"**Not equal**: they differ by up to {gap:.4f} ROUGE points; the prefix file does not "
               "reproduce the tuned model.")
    a = read_predictions(os.path.join(run, "test", "predictions.jsonl"))
    b = read_predictions(os.path.join(run, "prefix-file", "test", "predictions.jsonl"))
    if a is not None and b is not None:
        same = sum(1 for k in a if k in b and a[k] == b[k])
        verdict += f" Identical summaries: {same} of {len(a)} test documents."
    return lines + [verdict]


def findings(runs, baselines, sweeps, budget, single, low, fractions):
    rows = at(runs)
    lines = ["", "## The seed's findings at this scale", "",
             "Each claim is a paired bootstrap over the test documents (2,000 resamples): per document, a system's "
             "ROUGE F averaged over its seeds; Δ is the mean difference (×100) with its 95 % interval and the "
             "two-sided p-value, uncorrected for the number of claims. A claim *holds* when Δ points its way with "
             "p < 0.05 and both sides ran at least two seeds; a single-seed side (Figure 3, the low-resource "
             "curve) shows its Δ and p but takes no verdict.", ""]
    collapsed = [s for s, rs in rows.items() if summary(rs)["distinct"][0] < 5]
    if collapsed:
        lines += [f"**Read this first:** {', '.join(sorted(collapsed))} write (nearly) one summary for every page "
                  "(unique % below 5). Their ROUGE measures which generic line a run settled on, not how it used "
                  "the document, so a difference involving them says which phrase won, even where it holds.", ""]
    claims = [("finetune", LEAD, "Finetune beats lead-1 of DESCRIPTION (the baselines learn)"),
              ("prefix", UNTUNED, "Prefix-tune learns the task: it beats the untuned base it tunes"),
              ("prefix", LEAD, "Prefix-tune beats lead-1 of DESCRIPTION"),
              ("finetune", "prefix", "Finetune beats Prefix-tune (Table 2: the gap the designs close)"),
              ("uniblock", "prefix", "UniBlock beats Prefix-tune (Table 2)"),
              ("hierblock", "prefix", "HierBlock beats Prefix-tune (Table 2)"),
              ("hierblock", "uniblock", "HierBlock beats UniBlock (Table 2)"),
              ("truncsa", "prefix", "TruncSA beats dense Prefix-tune (Table 4)"),
              ("softsa", "prefix", "SoftSA beats dense Prefix-tune (Table 4)"),
              ("htruncsa", "truncsa", "HTruncSA (sparse lower layers only) beats TruncSA (Table 4)"),
              ("hsoftsa", "softsa", "HSoftSA (sparse lower layers only) beats SoftSA (Table 4)"),
              ("finetune-truncsa", "finetune", "TruncSA helps finetuning (Table 4: the seed finds it does not)"),
              ("finetune-softsa", "finetune", "SoftSA helps finetuning (Table 4: the seed finds it does not)"),
              ("hierblock-softsa", "hierblock", "HierBlock+SoftSA beats HierBlock (Table 5)")]
    claims += [(s, re.sub(r"-(tau|p)[0-9.]+$", "", s), f"{s} beats its recipe's default (Table 7 sweeps it; the "
                "seed reports no direction)") for s in sweeps]
    claims += [(s, "prefix", f"{s} beats the table's prefix-tuning (not in the seed)") for s in budget]
    claims += [("finetune", s, f"Finetune beats {s} (not in the seed: the gap outlasts the budget)") for s in budget]
    claims += [("prefix", "prefix-top", "Prefixes in all layers beat prefixes in the top layers only (Table 3)"),
               ("prefix", "prefix-low", "Prefixes in all layers beat prefixes in the lower layers only (Table 3)"),
               ("prefix-top", "prefix-low", "Prefixes in the top layers beat prefixes in the lower layers (Table 3)")]
    if len(single) > 1:
        claims.append((single[-1], single[0], "The top layer's prefixes alone beat the lowest layer's alone "
                       "(Figure 3, seed 1)"))
    documents = {label: b["documents"] for label, b in baselines.items()}
    for a, b, text in claims:
        lines += claim_lines(rows, documents, a, b, text)
    for percent in sorted(p for p in fractions if p < 50):
        share = at(runs, percent)
        for a in ("hierblock", "hierblock-softsa"):
            for b in ("finetune", "prefix"):
                if a in low and b in low:
                    lines += claim_lines(share, {}, a, b, f"{name(a)} beats {name(b)} on {percent} % of the "
                                         "training set (§6.6, Figure 4; seed 1)")
    return lines


def not_run(single):
    lines = ["", "## What was not run, and why", "",
             "- XSum, CNN/DM, PubMed, Wikihow, SAMSum, E2E and DART are not in Debian; the man pages stand in for "
             "summarisation, and the data-to-text tasks (Tables 2 and 6's E2E and DART columns) have no stand-in.",
             "- The human evaluation (Table 6) and the factuality analysis of §6.5 need annotators.",
             "- Table 7's block sizes: encoder 3 and decoder 2 segments only (the seed sweeps 1-3 and 1-2); "
             "TruncSA's τ has no counterpart here (its top-p is the knob swept).",
             "- Low resource: seed 1 only, one corpus (the seed averages XSum and Wikihow), and no 50 % share (the "
             "seed's claim is about less than 50 %; the 100 % point is the main table's run)."]
    if len(single) < 12:
        lines.append(f"- Figure 3 has {len(single)} layers, not BART-large's 12: the base has {len(single)} "
                     "encoder and decoder layers.")
    return lines
def read_predictions(path):
    try:
        with open(path) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        return {r["id"]: r["prediction"] for r in rows}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def layer_key(filename):
    m = re.search(r"(\d+)", filename)
    return (int(m[1]) if m else -1, filename)


def attention_section(figures, report):
    lines = ["", "## Figures", "",
             "### Encoder self-attention with the prefix columns first (§4 Figure 1), seed 1", "",
             "Per encoder layer, averaged over heads, two test pages (`strata analyze attention`); the first P "
             "columns are the prefix keys. Prefix mass: the mean weight a query puts on the prefix keys.", ""]
    masses = {}
    for recipe in ("prefix", "hierblock"):
        directory = os.path.join(figures, f"attention-{recipe}")
        try:
            files = [f for f in os.listdir(directory) if f.endswith((".svg", ".png"))]
        except OSError:
            files = []
        if not files:
            log = os.path.join(figures, f"attention-{recipe}.txt")
            see = f" (see [the log]({rel(log, report)}))" if os.path.exists(log) else ""
            lines.append(f"- {name(recipe)}: {NOT_AVAILABLE}{see}")
            continue
        stems = {}
        for f in sorted(files, key=layer_key):
            stems.setdefault(os.path.splitext(f)[0], []).append(f)
        links = []
        for stem, group in stems.items():
            links.append(f"{stem} " + " ".join(f"[{os.path.splitext(f)[1][1:]}]({rel(os.path.join(directory, f), report)})"
                                                for f in sorted(group)))
        lines.append(f"- {name(recipe)}: " + ", ".join(links))
        report_json = read_json(os.path.join(directory, "attention.json"))
        if isinstance(report_json, dict) and isinstance(report_json.get("layers"), list):
            masses[recipe] = report_json["layers"]
    if masses:
        lines += ["", "| model | layer | prefixes | prefix mass | entropy (nats) |", "|---|---|---|---|---|"]
        for recipe, layers in masses.items():
            for layer in layers:
                if not isinstance(layer, dict):
                    continue
                lines.append(f"| {name(recipe)} | {layer.get('layer', '-')} | {layer.get('prefix_length', '-')} | "
                             f"{num(as_float(layer.get('prefix_mass')), 4)} | {num(as_float(layer.get('entropy')), 4)} |")
    return lines


def as_float(x):
    return float(x) if isinstance(x, (int, float)) else None


def half_of(entry, key):
    """(index reaching 0.9, area, layers) of a spectrum half, or None when it is missing."""
    half = entry.get(key)
    if not isinstance(half, dict):
        return None
    curve = half.get("curve")
    curve = [c for c in curve if isinstance(c, (int, float))] if isinstance(curve, list) else []
    k90 = half.get("index_90")
    if not isinstance(k90, int):
        k90 = next((i + 1 for i, c in enumerate(curve) if c >= 0.9), None) if curve else None
    area = as_float(half.get("area"))
    if area is None and curve:
        area = statistics.mean(curve)
    if k90 is None and area is None:
        return None
    layers = half.get("layers")
    layers = ", ".join(str(x) for x in layers) if isinstance(layers, list) else "-"
    return k90, area, layers


def spectrum_entries(d):
    """The models of `strata analyze spectrum`'s spectrum.json (a "models" list), or of the
    single-model file `strata analyze attention` writes."""
    if isinstance(d, dict) and isinstance(d.get("models"), list):
        return [m for m in d["models"] if isinstance(m, dict)]
    if isinstance(d, dict) and ("lower" in d or "upper" in d):
        return [d]
    return []


def spectrum_section(figures, report):
    """The spectrum figure, its table, and the per-model halves for the findings."""
    directory = os.path.join(figures, "spectrum")
    lines = ["", "### Spectrum of the attention on the prefix keys (§6.3, A.7 Figure 7), seed 1", "",
             "Normalised cumulative singular values of each encoder layer's attention on the prefix keys, per "
             "head and then averaged over heads (`strata analyze spectrum --per-head`, 64 test pages), and "
             "averaged over the lower and over the upper layers. "
             "A curve that rises fast (large area, few singular values to reach 0.9) is skewed: the prefix "
             "attention is nearly low-rank.", ""]
    svgs = sorted(f for f in os.listdir(directory) if f.endswith((".svg", ".png"))) if os.path.isdir(directory) else []
    if svgs:
        lines += [f"![spectrum]({rel(os.path.join(directory, f), report)})" for f in svgs] + [""]
    else:
        log = os.path.join(figures, "spectrum.txt")
        see = f" (see [the log]({rel(log, report)}))" if os.path.exists(log) else ""
        lines += [f"Figure: {NOT_AVAILABLE}{see}.", ""]
    halves, silent = {}, []
    for entry in spectrum_entries(read_json(os.path.join(directory, "spectrum.json"))):
        label = str(entry.get("label") or entry.get("model") or "?")
        halves[label] = (entry.get("prefix_length"), entry.get("examples"),
                         half_of(entry, "lower"), half_of(entry, "upper"))
        if entry.get("silent_maps"):
            silent.append(f"{label}: {entry['silent_maps']} head maps put no weight on any prefix key and are left "
                          f"out ({entry.get('skipped_examples', 0)} pages left out: a layer of theirs had no head "
                          "with weight)")
    if not halves:
        return lines + [f"Table: {NOT_AVAILABLE} (spectrum.json is missing or has none of the expected keys)."], {}
    lines += ["| model | prefixes | examples | lower layers | lower: k at 0.9 | lower: area | upper layers | "
              "upper: k at 0.9 | upper: area |", "|---|---|---|---|---|---|---|---|---|"]
    for label, (p, n, lower, upper) in halves.items():
        cells = []
        for half in (lower, upper):
            if half is None:
                cells += ["-", NOT_AVAILABLE, "-"]
            else:
                cells += [half[2], str(half[0]) if half[0] is not None else "not reached", num(half[1], 4)]
        lines.append(f"| {label.replace('|', chr(92) + '|')} | {p if p is not None else '-'} | "
                     f"{n if n is not None else '-'} | " + " | ".join(cells) + " |")
    if silent:
        lines += [""] + [f"- {line}." for line in silent]
    return lines, halves


def spectrum_findings(halves):
    lines = ["- Spectrum (§6.3, Figure 7): the prefix attention of the lower layers is more skewed than of the "
             "upper layers (larger area under the curve). Seed 1 only, no spread: a direction, not a test."]
    if not halves:
        return lines + [f"  - {NOT_AVAILABLE}"]
    for label, (_, _, lower, upper) in halves.items():
        if lower is None or upper is None or lower[1] is None or upper[1] is None:
            lines.append(f"  - {label}: {NOT_AVAILABLE}")
            continue
        diff = lower[1] - upper[1]
        k = (f"; k at 0.9 {lower[0]} vs {upper[0]}" if lower[0] is not None and upper[0] is not None else "")
        direction = "points the seed's way" if diff > 0 else "points the other way" if diff < 0 else "no difference"
        lines.append(f"  - {label}: area {lower[1]:.4f} (lower) vs {upper[1]:.4f} (upper), {diff:+.4f}{k}: "
                     f"{direction} (one seed: no verdict)")
    ks = [half[0] for _, _, lower, upper in halves.values() for half in (lower, upper) if half]
    if ks and all(k == 1 for k in ks):
        lines.append("  - One singular value reaches 0.9 in every layer of every model: each query weighs the "
                     "prefix keys nearly alike (the prefix attention is close to rank one), so there is little "
                     "skew for the lower and upper layers to differ in.")
    return lines


# ---- the page ----

def last_step(metrics):
    """The last training step a run's metrics.jsonl logged."""
    steps = [0]
    with open(metrics) as f:
        for line in f:
            steps.append(json.loads(line).get("step", 0))
    return max(steps)


def load_baselines(out_dir):
    """lead-1 of DESCRIPTION and the untuned base, each {documents, distinct}, where scored."""
    baselines = {}
    lead = os.path.join(out_dir, "lead1-description")
    documents = safe(document_rouge, os.path.join(lead, "pairs.jsonl"), os.path.join(lead, "rouge-per-example.jsonl"))
    if isinstance(documents, dict):
        baselines[LEAD] = {"documents": documents, "distinct": safe(distinct_share, os.path.join(lead, "pairs.jsonl"))}
    untuned = scored(os.path.join(out_dir, "untuned"))
    if untuned is not None:
        baselines[UNTUNED] = untuned
    return baselines


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", required=True, help="OUT/runs of bench/seed000.sh")
    ap.add_argument("--out-dir", required=True, help="OUT: base/, base.log, untuned/, lead1-description/")
    ap.add_argument("--config", required=True)
    ap.add_argument("--main", required=True, help="the systems of Tables 2, 4 and 5, in table order")
    ap.add_argument("--sweeps", default="", help="Table 7's systems (a recipe with its τ or top-p changed)")
    ap.add_argument("--budget", default="", help="prefix-tuning with a larger learning rate or more steps")
    ap.add_argument("--layers", default="prefix-top prefix-low", help="Table 3's systems besides prefix")
    ap.add_argument("--single", default="", help="Figure 3's systems, lowest layer first")
    ap.add_argument("--low", default="finetune prefix hierblock hierblock-softsa", help="the low-resource systems")
    ap.add_argument("--fractions", default="5 10 25", help="the low-resource training shares (%%)")
    ap.add_argument("--strata", required=True)
    ap.add_argument("--figures", required=True, help="where the figures are (and the charts go)")
    ap.add_argument("--minutes", type=int, default=0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    main_systems, sweeps, single = args.main.split(), args.sweeps.split(), args.single.split()
    budget = args.budget.split()
    layers, low = args.layers.split(), args.low.split()
    fractions = [int(p) for p in args.fractions.split()]
    runs, unscored = load(args.runs)
    if not runs:
        print(f"{args.runs}: no scored run; writing the page with what there is", file=sys.stderr)
    rows = at(runs)
    baselines = load_baselines(args.out_dir)
    describes = {r: describe(args.strata, r) for r in dict.fromkeys(main_systems + layers)}
    try:
        with open(args.config) as f:
            config_text = f.read()
        config = tomllib.loads(config_text)
    except (OSError, ValueError):
        sys.exit(f"{args.config}: cannot read the experiment's settings")

    base = os.path.join(args.out_dir, "base")
    minutes = safe(lambda p: float(open(p).read().strip()) / 60, os.path.join(base, "pretrained"))
    base_loss = safe(best_valid_loss, os.path.join(base, "metrics.jsonl"))
    base_steps = safe(last_step, os.path.join(base, "metrics.jsonl"))
    base_steps = base_steps if isinstance(base_steps, int) else None
    base_config = safe(lambda p: tomllib.load(open(p, "rb")), os.path.join(base, "config.toml"))
    base_read = base_text(base_config if isinstance(base_config, dict) else {}, config["data"]["max_source_tokens"])
    any_run = next((rs[0] for rs in rows.values()), None)
    lines = ["# Seed 000 (discourse-aware prefix design) in miniature: man-page summarisation", "",
             "Generated by `bench/seed000.sh` (do not edit by hand; rerun it). "
             f"This invocation: {args.minutes} minutes on this machine (runs already scored are not redone); "
             f"the runs on this page took {run_minutes(r for rs in runs.values() for r in rs):.0f} minutes of "
             f"training and scoring, one thread each, two at a time, after {num(minutes, 0)} minutes of pretraining "
             "the base.", "",
             "Task: write a man page's one-line NAME description from its body (the installed man pages, split "
             "by page name; the blocking designs split a page's tokens evenly into segments, as the seed does). "
             "Every system starts from one pretrained base: a small BART-like seq2seq model pretrained with "
             f"`strata pretrain` (text infilling and sentence permutation on "
             f"{base_read}; {count(base_steps)} "
             f"steps, best denoising validation loss {num(base_loss, 3)}). Finetuning updates every parameter of "
             "it; the prefix designs freeze it and tune only their prefixes. Test split scored with ROUGE F1 ×100 "
             "(stemmed; beam 5 with no repeated trigram, as the seed decodes); mean ± sample std over seeds (one "
             "seed shows no spread). Valid NLL: the lowest teacher-forced validation loss of the run (nats per "
             "summary token, label smoothing 0.1). Unique %: test documents whose summary no other document got "
             "(a model that ignores its input scores 0).", ""]
    lines += scale_section(config, any_run, base_steps, base_read)
    if unscored:
        lines += [f"Runs without scores (failed, unfinished or unreadable; left out): {', '.join(unscored)}.", ""]
    lines += main_table(rows, main_systems, describes, baselines)
    lines += short_table("## Table 7's sweeps: SoftSA's temperature, TruncSA's top-p",
                         "The main table's SoftSA is τ = 1 and its TruncSA top-p 0.95 (the seed's values); these "
                         "change one setting of the same recipe.", rows,
                         [d for r in ("softsa", "truncsa") for d in [r] + [s for s in sweeps if s.startswith(r + "-")]],
                         describes)
    if budget:
        lines += short_table("## Not in the seed: is prefix-tuning short of learning rate or of steps?",
                             "The same prefix-tuning with one budget raised (the table's runs: learning rate "
                             f"{config['train']['learning_rate']}, {config['train']['max_steps']:,} steps), beside "
                             "finetuning: if the gap to finetuning were one of tuning, these would close much of it.",
                             rows,
                             ["finetune", "prefix"] + budget, describes)
    lines += short_table("## Table 3 and Figure 3 in miniature: which layers' prefixes matter",
                         "Prefix-tune with prefixes in every layer, only in the top layers, only in the lower ones "
                         "(the split is `model.hierarchy_split`), and in a single layer (seed 1). The seed reports "
                         "validation ROUGE; this is the test split, as everywhere on this page.", rows,
                         ["prefix"] + layers + single, describes)
    lines += single_layer_chart(rows, single, args.figures, args.out)
    coinciding = coinciding_layers(args.runs, single, layers)
    if coinciding:
        lines += [""] + [f"- {line}" for line in coinciding]
    lines += low_resource(runs, low, fractions, args.figures, args.out)
    lines += prefix_file_check(args.runs)
    lines += attention_section(args.figures, args.out)
    spectrum_lines, halves = spectrum_section(args.figures, args.out)
    lines += spectrum_lines
    lines += findings(runs, baselines, sweeps, budget, single, low, fractions)
    lines += spectrum_findings(halves)
    lines += not_run(single)
    lines += ["", "## Settings", "", f"`{args.config}`, with `train.seed` = each seed and `threads = 1` (two runs "
              "side by side); the base is pretrained from the same file (`strata pretrain`, its settings in "
              "`seed000-outputs/base/config.toml` beside this page). Each "
              "recipe's own settings: `strata recipes show NAME`.", "", "```toml", config_text.strip(), "```", ""]
    write_atomic(args.out, lines)


if __name__ == "__main__":
    main()
