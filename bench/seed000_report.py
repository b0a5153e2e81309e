#!/usr/bin/env python3
"""Turns the runs of bench/seed000.sh into docs/results/seed000.md: Tables 2, 4 and 5 in
miniature (ROUGE-1/2/L mean ± std over seeds per system, parameters, prefix file size, training
time), Table 3's prefix layers, the low-resource curve of §6.6 (a table and an SVG plot), the
check that a prefix file on its base scores as the run that tuned it, the attention and
spectrum figures (§4 Figure 1, §6.3 Figure 7), and the seed's findings checked against the
numbers (a finding holds only when the difference exceeds the seeds' spread). Missing runs,
files and figures are said to be missing; they never stop the page."""
import argparse
import html
import json
import math
import os
import re
import statistics
import subprocess
import sys

from report_common import best_valid_loss, claim, distinct_share, fmt, mean_std, run_minutes, write_atomic

METRICS = ("rouge1", "rouge2", "rougeL")
PERCENTS = (5, 10, 25, 50, 100)
RUN_NAME = re.compile(r"^(?P<recipe>.+)-s(?P<seed>\d+)-p(?P<percent>\d+)$")
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


def name(recipe):
    return NAMES.get(recipe, recipe)


def isnan(x):
    return isinstance(x, float) and math.isnan(x)


def read_json(path):
    """The parsed file, or None when it is missing or unreadable."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_result(path):
    """result.json of a run. bench/seed000.sh writes it with printf, so a count it could not grep
    from the training log comes out empty ("trainable": ,): read that as null."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    for attempt in (text, re.sub(r":\s*(?=[,}])", ": null", text)):
        try:
            result = json.loads(attempt)
            return result if isinstance(result, dict) else None
        except ValueError:
            continue
    return None


def rouge_scores(path):
    """{metric: F1 ×100} from an `eval summarize` rouge.json, or None."""
    d = read_json(path)
    try:
        return {m: 100 * float(d["scores"][m]["fmeasure"]["mean"]) for m in METRICS}
    except (TypeError, KeyError, ValueError):
        return None


def safe(fn, path):
    try:
        return fn(path)
    except (OSError, ValueError, KeyError, TypeError):
        return float("nan")


def load(runs_dir):
    """Every scored run as {(recipe, seed, percent): result}, and the run directories without
    scores (failed, unfinished or unreadable)."""
    runs, unscored = {}, []
    try:
        names = sorted(os.listdir(runs_dir))
    except OSError:
        return runs, unscored
    for dirname in names:
        path = os.path.join(runs_dir, dirname)
        if not os.path.isdir(path):
            continue
        match = RUN_NAME.match(dirname)
        result = read_result(os.path.join(path, "result.json"))
        scores = rouge_scores(os.path.join(path, "test", "rouge.json"))
        if result is None or scores is None:
            unscored.append(dirname)
            continue
        try:
            recipe = result.get("recipe") or match["recipe"]
            seed = int(result["seed"] if result.get("seed") is not None else match["seed"])
            percent = int(result["percent"] if result.get("percent") is not None else match["percent"])
        except (TypeError, ValueError):
            unscored.append(dirname)
            continue
        result.update(scores)
        result["test_count"] = (read_json(os.path.join(path, "test", "rouge.json")) or {}).get("count")
        result["valid_loss"] = safe(best_valid_loss, os.path.join(path, "run", "metrics.jsonl"))
        result["distinct"] = safe(distinct_share, os.path.join(path, "test", "predictions.jsonl"))
        runs[(recipe, seed, percent)] = result
    return runs, unscored


def known(values):
    return [v for v in values if isinstance(v, (int, float)) and not isnan(v)]


def first_known(runs, key):
    for r in runs:
        if isinstance(r.get(key), (int, float)):
            return r[key]
    return None


def summary(runs, recipes, percent=100):
    """Per recipe, over the seeds of its runs at `percent`: metric -> (mean, std) and the rest."""
    out = {}
    for recipe in recipes:
        rs = [runs[k] for k in sorted(runs) if k[0] == recipe and k[2] == percent]
        if not rs:
            continue
        seconds = known(r.get("train_seconds") for r in rs)
        s = {"n": len(rs), "trainable": first_known(rs, "trainable"), "parameters": first_known(rs, "parameters"),
             "prefix_bytes": first_known(rs, "prefix_bytes"),
             "train_minutes": statistics.mean(seconds) / 60 if seconds else float("nan")}
        s["of"] = {}
        for m in METRICS + ("valid_loss", "distinct"):
            values = known(r[m] for r in rs)
            s[m] = mean_std(values)
            s["of"][m] = len(values)
        out[recipe] = s
    return out


def single(runs, recipe, seed, percent, spread_of):
    """One run as claim() stats: each metric with the seeds' std of `spread_of` in the main table
    (a stand-in spread for a single-seed comparison; 0 when that is unknown)."""
    r = runs.get((recipe, seed, percent))
    if r is None:
        return None
    s = {}
    for m in METRICS + ("valid_loss",):
        std = spread_of[m][1] if spread_of and not isnan(spread_of[m][1]) else 0.0
        s[m] = (r[m], std)
    return s


def cell(ms, digits=2, of=None, n=None):
    """mean ± std, saying over how many runs when some of the n had no value."""
    if isnan(ms[0]):
        return "-"
    return fmt(ms, digits) + (f" ({of} of {n} runs)" if of is not None and n is not None and of < n else "")


def part(of, n):
    return f" ({of} of {n} runs)" if of < n and of > 0 else ""


def num(x, digits=2):
    return "-" if x is None or isnan(x) else f"{x:.{digits}f}"


def count(x):
    return "-" if not isinstance(x, (int, float)) else f"{int(x):,}"


def check(stats, a, b, metric):
    """claim(), but a missing value reads "not available" rather than as a loss."""
    lower = metric == "valid_loss"
    if a in stats and b in stats and (isnan(stats[a][metric][0]) or isnan(stats[b][metric][0])):
        return f"  - {metric}: {NOT_AVAILABLE}"
    return claim(stats, a, b, metric, lower_is_better=lower)


def no_help(stats, dense, sparse, metric):
    """The null finding "sparsity does not help `dense`": claim() that the sparse variant beats
    it, read the other way round (it stands unless the sparse one wins beyond the spread)."""
    line = check(stats, sparse, dense, metric)
    head, sep, verdict = line.rpartition("): ")
    if not sep:
        return line
    if verdict == "**holds**":
        verdict = "sparsity helps beyond the seeds' spread: **does not hold**"
    elif verdict == "**does not hold**":
        verdict = "sparsity does not help: **holds**"
    else:
        verdict = "sparsity is better, within the seeds' spread: **holds** (no help established)"
    return head.replace(f"  - {metric}: ", f"  - {metric} (sparse vs dense): ", 1) + sep + verdict


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


# ---- the low-resource plot ----

def nice_ticks(lo, hi, target=5):
    """Round tick values covering [lo, hi]: steps of 1, 2 or 5 × 10^k."""
    if not (hi > lo):
        lo, hi = max(lo - 1, 0.0) if lo >= 0 else lo - 1, hi + 1
    raw = (hi - lo) / target
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first, last = math.floor(lo / step) * step, math.ceil(hi / step) * step
    ticks, t = [], first
    while t <= last + step / 2:
        ticks.append(round(t, 10))
        t += step
    return ticks, step


def low_resource_svg(series, percents, y_label):
    """A line chart: x = the training share (evenly spaced categories), y = R-L; one polyline
    and marker set per system, a legend at the right."""
    width, height = 680, 400
    left, right, top, bottom = 64, 190, 40, 56
    pw, ph = width - left - right, height - top - bottom
    values = [v for _, ys in series for v in ys if v is not None]
    ticks, step = nice_ticks(min(values), max(values))
    y0, y1 = ticks[0], ticks[-1]

    def x_at(i):
        return left + (pw * (i + 0.5) / len(percents))

    def y_at(v):
        return top + ph * (1 - (v - y0) / (y1 - y0))

    digits = 0 if step >= 1 else (1 if step >= 0.1 else 2)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
           f'<text x="{left + pw / 2:.1f}" y="22" text-anchor="middle" font-size="14">'
           'Low-resource: ROUGE-L by training share (seed 1)</text>']
    for t in ticks:
        y = y_at(t)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#e0e0e0"/>')
        out.append(f'<line x1="{left - 5}" y1="{y:.1f}" x2="{left}" y2="{y:.1f}" stroke="#000000"/>')
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{t:.{digits}f}</text>')
    for i, p in enumerate(percents):
        x = x_at(i)
        out.append(f'<line x1="{x:.1f}" y1="{top + ph}" x2="{x:.1f}" y2="{top + ph + 5}" stroke="#000000"/>')
        out.append(f'<text x="{x:.1f}" y="{top + ph + 19}" text-anchor="middle">{p}%</text>')
    out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#000000"/>')
    out.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#000000"/>')
    out.append(f'<text x="{left + pw / 2:.1f}" y="{height - 12}" text-anchor="middle">'
               'share of the training set</text>')
    out.append(f'<text x="16" y="{top + ph / 2:.1f}" text-anchor="middle" '
               f'transform="rotate(-90 16 {top + ph / 2:.1f})">{html.escape(y_label)}</text>')
    palette = iter(PALETTE * 4)
    for k, (recipe, ys) in enumerate(series):
        colour = COLOURS.get(recipe) or next(palette)
        points = [(x_at(i), y_at(v)) for i, v in enumerate(ys) if v is not None]
        segment = []  # a share without a run breaks the line
        for i, v in enumerate(ys + [None]):
            if v is not None:
                segment.append(f"{x_at(i):.1f},{y_at(v):.1f}")
                continue
            if len(segment) > 1:
                out.append(f'<polyline points="{" ".join(segment)}" fill="none" stroke="{colour}" stroke-width="2"/>')
            segment = []
        for x, y in points:
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour}"/>')
        ly = top + 10 + 20 * k
        lx = left + pw + 16
        out.append(f'<line x1="{lx}" y1="{ly}" x2="{lx + 24}" y2="{ly}" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<circle cx="{lx + 12}" cy="{ly}" r="3.5" fill="{colour}"/>')
        out.append(f'<text x="{lx + 30}" y="{ly + 4}">{html.escape(name(recipe))}</text>')
    out.append("</svg>")
    return out + [""]


# ---- sections ----

def main_table(stats, recipes, describes):
    lines = ["## Tables 2, 4 and 5 in miniature", "",
             "Test split, ROUGE F1 ×100. Trainable %: trainable over all parameters (the frozen base "
             "included). Prefix file: what a prefix design ships per task (`run/adapter.safetensors`); "
             "finetuning ships the whole model.", "",
             "| system | what it is | R-1 | R-2 | R-L | valid NLL | unique % | trainable params | all params | "
             "trainable % | prefix file KB | train min | seeds |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in recipes:
        if r not in stats:
            lines.append(f"| {r} | {describes.get(r, '')} | not run | | | | | | | | | | 0 |")
            continue
        s = stats[r]
        share = (f"{100 * s['trainable'] / s['parameters']:.2f}"
                 if s["trainable"] is not None and s["parameters"] else "-")
        kb = f"{s['prefix_bytes'] / 1024:.1f}" if s["prefix_bytes"] else "-"
        lines.append(f"| {r} | {describes.get(r, '')} | {cell(s['rouge1'])} | {cell(s['rouge2'])} | "
                     f"{cell(s['rougeL'])} | {cell(s['valid_loss'], 3, s['of']['valid_loss'], s['n'])} | "
                     f"{num(s['distinct'][0], 1)}{part(s['of']['distinct'], s['n'])} | "
                     f"{count(s['trainable'])} | {count(s['parameters'])} | {share} | {kb} | "
                     f"{num(s['train_minutes'], 1)} | {s['n']} |")
    return lines


def layers_table(runs, layers, describes):
    lines = ["", "## Table 3 in miniature: which layers' prefixes matter (seed 1)", "",
             "Prefix-tune with prefixes in every layer, only in the top layers, only in the lower ones "
             "(the split is `model.hierarchy_split`). The seed reports validation ROUGE; this is the "
             "test split, as everywhere on this page.", "",
             "| prefixes | recipe | what it is | R-1 | R-2 | R-L | valid NLL | trainable params |",
             "|---|---|---|---|---|---|---|---|"]
    labels = {"prefix": "all layers", "prefix-top": "top layers", "prefix-low": "lower layers"}
    for recipe in ["prefix"] + [r for r in layers if r != "prefix"]:
        label = labels.get(recipe, recipe)
        r = runs.get((recipe, 1, 100))
        if r is None:
            lines.append(f"| {label} | {recipe} | {describes.get(recipe, '')} | not run | | | | |")
            continue
        lines.append(f"| {label} | {recipe} | {describes.get(recipe, '')} | {r['rouge1']:.2f} | {r['rouge2']:.2f} | "
                     f"{r['rougeL']:.2f} | {num(r['valid_loss'], 3)} | {count(r.get('trainable'))} |")
    return lines


def low_resource(runs, low, figures, report):
    """The table of R-L (and valid NLL) per system and training share, and the SVG plot."""
    found = {p for (recipe, seed, p) in runs if recipe in low and seed == 1}
    percents = sorted(set(PERCENTS) | found)
    lines = ["", "## Low-resource settings (§6.6, Figure 4), seed 1", "",
             "Each system trained on a random k % of the training pages (`--train-fraction`; the same subset for "
             "every system, fixed by `data.fraction_seed`), scored on the full test split; 100 % is the seed-1 "
             "run of the main table.", "",
             "| system | " + " | ".join(f"R-L {p} %" for p in percents) + " | " +
             " | ".join(f"NLL {p} %" for p in percents) + " |",
             "|---|" + "---|" * (2 * len(percents))]
    series = []
    for recipe in low:
        rl = [runs[(recipe, 1, p)]["rougeL"] if (recipe, 1, p) in runs else None for p in percents]
        nll = [runs[(recipe, 1, p)]["valid_loss"] if (recipe, 1, p) in runs else None for p in percents]
        lines.append(f"| {recipe} | " + " | ".join(num(v) for v in rl) + " | " +
                     " | ".join(num(v, 3) for v in nll) + " |")
        if any(v is not None for v in rl):
            series.append((recipe, rl))
    svg = os.path.join(figures, "low_resource.svg")
    if series:
        write_atomic(svg, low_resource_svg(series, percents, "ROUGE-L F1 ×100 (test)"))
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
    loaded = rouge_scores(os.path.join(run, "test-prefix-file", "rouge.json"))
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
    b = read_predictions(os.path.join(run, "test-prefix-file", "predictions.jsonl"))
    if a is not None and b is not None:
        same = sum(1 for k in a if k in b and a[k] == b[k])
        verdict += f" Identical summaries: {same} of {len(a)} test documents."
    return lines + [verdict]


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
             "Normalised cumulative singular values of each encoder layer's attention on the prefix keys "
             "(`strata analyze spectrum`, 16 test pages), averaged over the lower and over the upper layers. "
             "A curve that rises fast (large area, few singular values to reach 0.9) is skewed: the prefix "
             "attention is nearly low-rank.", ""]
    svgs = sorted(f for f in os.listdir(directory) if f.endswith((".svg", ".png"))) if os.path.isdir(directory) else []
    if svgs:
        lines += [f"![spectrum]({rel(os.path.join(directory, f), report)})" for f in svgs] + [""]
    else:
        log = os.path.join(figures, "spectrum.txt")
        see = f" (see [the log]({rel(log, report)}))" if os.path.exists(log) else ""
        lines += [f"Figure: {NOT_AVAILABLE}{see}.", ""]
    halves = {}
    for entry in spectrum_entries(read_json(os.path.join(directory, "spectrum.json"))):
        label = str(entry.get("label") or entry.get("model") or "?")
        halves[label] = (entry.get("prefix_length"), entry.get("examples"),
                         half_of(entry, "lower"), half_of(entry, "upper"))
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
    return lines, halves


def spectrum_findings(halves):
    lines = ["- Spectrum (§6.3, Figure 7): the prefix attention of the lower layers is more skewed than of the "
             "upper layers (larger area under the curve). Seed 1 only, 16 pages, no spread: a direction, not a "
             "test."]
    if not halves:
        return lines + [f"  - {NOT_AVAILABLE}"]
    for label, (_, _, lower, upper) in halves.items():
        if lower is None or upper is None or lower[1] is None or upper[1] is None:
            lines.append(f"  - {label}: {NOT_AVAILABLE}")
            continue
        diff = lower[1] - upper[1]
        k = (f"; k at 0.9 {lower[0]} vs {upper[0]}" if lower[0] is not None and upper[0] is not None else "")
        verdict = "**points the same way**" if diff > 0 else "**does not hold**"
        lines.append(f"  - {label}: area {lower[1]:.4f} (lower) vs {upper[1]:.4f} (upper), {diff:+.4f}{k}: {verdict}")
    return lines


# ---- the page ----

def last_step(metrics):
    """The last training step a run's metrics.jsonl logged."""
    steps = [0]
    with open(metrics) as f:
        for line in f:
            steps.append(json.loads(line).get("step", 0))
    return max(steps)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", required=True, help="OUT/runs of bench/seed000.sh")
    ap.add_argument("--out-dir", required=True, help="OUT: base/pretrained, base.log, base/metrics.jsonl")
    ap.add_argument("--config", required=True)
    ap.add_argument("--main", required=True, help="the systems of Tables 2, 4 and 5, in table order")
    ap.add_argument("--layers", default="prefix-top prefix-low", help="Table 3's systems besides prefix")
    ap.add_argument("--low", default="finetune prefix hierblock hierblock-softsa", help="the low-resource systems")
    ap.add_argument("--strata", required=True)
    ap.add_argument("--figures", required=True, help="where the figures are (and low_resource.svg goes)")
    ap.add_argument("--minutes", type=int, default=0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    main_recipes, low = args.main.split(), args.low.split()
    runs, unscored = load(args.runs)
    if not runs:
        print(f"{args.runs}: no scored run; writing the page with what there is", file=sys.stderr)
    stats = summary(runs, main_recipes)
    describes = {r: describe(args.strata, r) for r in dict.fromkeys(main_recipes + args.layers.split())}
    try:
        with open(args.config) as f:
            config = f.read()
    except OSError:
        config = f"# {args.config}: {NOT_AVAILABLE}"

    try:
        with open(os.path.join(args.out_dir, "base", "pretrained")) as f:
            pretrain = f"in {float(f.read().strip()) / 60:.1f} minutes"
    except (OSError, ValueError):
        pretrain = ""
    base_loss = safe(best_valid_loss, os.path.join(args.out_dir, "base", "metrics.jsonl"))
    base_steps = safe(last_step, os.path.join(args.out_dir, "base", "metrics.jsonl"))
    notes = ([] if pretrain else [f"pretraining time {NOT_AVAILABLE}"]) + \
        ([f"{base_steps} steps"] if isinstance(base_steps, int) else []) + \
        ([f"best denoising validation loss {base_loss:.3f}"] if not isnan(base_loss) else []) + \
        [f"log: `{os.path.join(args.out_dir, 'base.log')}`"]
    base_note = f" ({'; '.join(notes)})"
    counts = [r["test_count"] for r in runs.values() if isinstance(r.get("test_count"), int)]
    docs = f" ({counts[0]:,} pages)" if counts else ""

    lines = ["# Seed 000 (discourse-aware prefix design) in miniature: man-page summarisation", "",
             "Generated by `bench/seed000.sh` (do not edit by hand; rerun it). "
             f"This invocation: {args.minutes} minutes on this machine (runs already scored are not redone); "
             f"the runs on this page took {run_minutes(runs.values()):.0f} minutes of training and scoring, one thread each, "
             "two at a time, plus the base's pretraining.", "",
             "Task: write a man page's one-line NAME description from its body (the installed man pages, split "
             "by page name; the blocking designs split a page's tokens evenly into segments, as the seed does). Every system starts from the "
             "same pretrained base: a small BART-like seq2seq model pretrained with `strata pretrain` (text "
             f"infilling and sentence permutation on the training pages){' ' if pretrain else ''}{pretrain}{base_note}. Finetuning "
             "updates every parameter of it; the prefix designs freeze it and tune only their prefixes. "
             f"Test split{docs} scored with ROUGE F1 ×100 (stemmed, greedy decoding); mean ± sample std over "
             "seeds (Table 3, the low-resource curve and the figures: seed 1 only). Valid NLL: the lowest "
             "teacher-forced validation loss of the run (nats per summary token, label smoothing 0.1), a finer "
             "measure than ROUGE for models this small. Unique %: test documents whose summary no other "
             "document got (a model that ignores its input scores 0).", ""]
    if unscored:
        lines += [f"Runs without scores (failed, unfinished or unreadable; left out): {', '.join(unscored)}.", ""]
    lines += main_table(stats, main_recipes, describes)
    lines += layers_table(runs, args.layers.split(), describes)
    lines += low_resource(runs, low, args.figures, args.out)
    lines += prefix_file_check(args.runs)
    lines += attention_section(args.figures, args.out)
    spectrum_lines, halves = spectrum_section(args.figures, args.out)
    lines += spectrum_lines

    lines += ["", "## The seed's findings at this scale", "",
              "A finding holds here only when the difference exceeds the larger standard deviation of the two "
              "systems over seeds. Where one side is a single run (Table 3, low resource), the spread used is "
              "the seeds' std of the same system in the main table (of Prefix-tune for the layer variants): a "
              "stand-in, likely too small for runs on little data, so read those verdicts as directions.", ""]
    collapsed = [r for r in stats if not isnan(stats[r]["distinct"][0]) and stats[r]["distinct"][0] < 5]
    if stats and len(collapsed) == len(stats):
        lines += ["**Read this first:** every system writes (nearly) one summary for every page (unique % below 5 "
                  "for all of them). Their ROUGE measures which generic sentence a run settled on, not how it "
                  "used the document, so a ROUGE verdict below is luck even where it says *holds*; the validation "
                  "NLL is the measure that can speak. Unless a valid_loss line says **holds**, none of the seed's "
                  "findings is established at this scale.", ""]
    claims = [("uniblock", "prefix", "UniBlock beats Prefix-tune (Table 2)"),
              ("hierblock", "prefix", "HierBlock beats Prefix-tune (Table 2)"),
              ("hierblock", "uniblock", "HierBlock beats UniBlock (Table 2)"),
              ("finetune", "prefix", "Finetune beats Prefix-tune (Table 2: the gap the designs close)"),
              ("truncsa", "prefix", "TruncSA beats dense Prefix-tune (Table 4)"),
              ("softsa", "prefix", "SoftSA beats dense Prefix-tune (Table 4)"),
              ("htruncsa", "truncsa", "HTruncSA (sparse lower layers only) beats TruncSA (Table 4)"),
              ("hsoftsa", "softsa", "HSoftSA (sparse lower layers only) beats SoftSA (Table 4)"),
              ("hierblock-softsa", "hierblock", "HierBlock+SoftSA beats HierBlock (Table 5)")]
    for a, b, text in claims[:-1]:
        lines.append(f"- {text}")
        for metric in ("rougeL", "valid_loss"):
            lines.append(check(stats, a, b, metric))
    for sparse in ("finetune-truncsa", "finetune-softsa"):
        lines.append(f"- Sparsity does not help finetuning: {name(sparse)} does not beat dense Finetune beyond the "
                     "seeds' spread (Table 4)")
        for metric in ("rougeL", "valid_loss"):
            lines.append(no_help(stats, "finetune", sparse, metric))
    a, b, text = claims[-1]
    lines.append(f"- {text}")
    for metric in ("rougeL", "valid_loss"):
        lines.append(check(stats, a, b, metric))

    # Table 3: seed 1 of each, the spread of prefix over seeds as the stand-in.
    layer_stats = {}
    for recipe in ("prefix", "prefix-top", "prefix-low"):
        s = single(runs, recipe, 1, 100, stats.get("prefix"))
        if s is not None:
            layer_stats[recipe] = s
    for a, b, text in (("prefix", "prefix-top", "Prefixes in all layers beat prefixes in the top layers only"),
                       ("prefix-top", "prefix-low", "Prefixes in the top layers beat prefixes in the lower layers")):
        lines.append(f"- {text} (Table 3; seed 1 only)")
        for metric in ("rougeL", "valid_loss"):
            lines.append(check(layer_stats, a, b, metric))

    # Low resource: every share below 50 %, seed 1, each system's main-table spread.
    below = sorted(p for p in {p for (recipe, seed, p) in runs if recipe in low and seed == 1} | set(PERCENTS[:3])
                   if p < 50)
    for a in ("hierblock", "hierblock-softsa"):
        for b in ("finetune", "prefix"):
            lines.append(f"- {name(a)} beats {name(b)} with less than 50 % of the training set (§6.6, Figure 4; "
                         "seed 1 only)")
            for p in below:
                share = {r: s for r in (a, b) if (s := single(runs, r, 1, p, stats.get(r))) is not None}
                for metric in ("rougeL", "valid_loss"):
                    lines.append(check(share, a, b, metric).replace("  - ", f"  - {p} %, ", 1))
    lines += spectrum_findings(halves)

    lines += ["", "## Settings", "", f"`{args.config}`, with `train.seed` = each seed and `threads = 1` (two runs "
              "side by side); the base is pretrained from the same file (`strata pretrain`, 2 threads). Each "
              "recipe's own settings: `strata recipes show NAME`.", "", "```toml", config.strip(), "```", ""]
    write_atomic(args.out, lines)


if __name__ == "__main__":
    main()
