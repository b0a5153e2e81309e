"""What the experiment reports (bench/experiment_report.py, bench/seed000_report.py,
bench/seed003_report.py, bench/seed001_qs_report.py) share: mean ± std over seeds, the best
validation loss of a run, the share of distinct summaries, paired bootstraps, the verdict on a
seed's claim and its lines over per-document ROUGE, the learned-bias figures, and writing the
page atomically."""
import html
import json
import math
import os
import random
import statistics


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def document_rouge(pairs_path, per_example_path, metrics=("rouge1", "rouge2", "rougeL")):
    """{document key: {metric: F ×100}} from a pairs file (its ids, in order) and its per-example
    scores (`strata eval rouge --per-example`). The key is the id with its occurrence, "ID#1",
    since a man page's name can repeat across packages."""
    seen, keys = {}, []
    for row in read_jsonl(pairs_path):
        seen[row["id"]] = seen.get(row["id"], 0) + 1
        keys.append(f"{row['id']}#{seen[row['id']]}")
    return {k: {m: 100 * row[m]["fmeasure"] for m in metrics} for k, row in zip(keys, read_jsonl(per_example_path))}


def finished_runs(runs_dir, recipes, scores_file):
    """(run directory, its result.json, its test/<scores_file> as JSON) of every run of `recipes`
    that has both: a run still training or killed is left out."""
    for name in sorted(os.listdir(runs_dir)):
        path = os.path.join(runs_dir, name)
        try:
            with open(os.path.join(path, "result.json")) as f:
                result = json.load(f)
            with open(os.path.join(path, "test", scores_file)) as f:
                scores = json.load(f)
        except FileNotFoundError:
            continue
        if result["recipe"] in recipes:
            yield path, result, scores


def run_minutes(results):
    """The training and scoring time of the runs (their result.json dicts), summed, in minutes:
    what a page's runs cost, whichever invocation of its script made them."""
    return sum((r.get("train_seconds") or 0) + (r.get("eval_seconds") or 0) for r in results) / 60


def mean_std(values):
    if not values:
        return float("nan"), float("nan")
    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def fmt(ms, digits=2):
    return f"{ms[0]:.{digits}f} ± {ms[1]:.{digits}f}"


def fmt_seeds(values, digits=2):
    """Mean ± std over seeds; a single seed shows its value and no spread."""
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return fmt(mean_std(values), digits)


def best_valid_loss(metrics):
    """The lowest validation loss of the run (metrics.jsonl rows with split = valid)."""
    losses = []
    with open(metrics) as f:
        for line in f:
            row = json.loads(line)
            if row.get("split") == "valid" and "loss" in row:
                losses.append(row["loss"])
    return min(losses) if losses else float("nan")


def distinct_share(predictions):
    """The share of test documents whose summary differs from every other one's (×100): a
    model that ignores its input writes one summary for all."""
    with open(predictions) as f:
        outputs = [json.loads(line)["prediction"] for line in f]
    counts = {}
    for o in outputs:
        counts[o] = counts.get(o, 0) + 1
    return 100 * sum(1 for o in outputs if counts[o] == 1) / max(len(outputs), 1)


def paired_bootstrap(a, b, resamples=2000, seed=7):
    """Paired bootstrap over test documents (Koehn 2004): the mean of a - b, its 95 % percentile
    interval over resamples of the documents, and the two-sided p-value (twice the share of
    resamples on the other side of zero, add-one smoothed, at most 1)."""
    diffs = [x - y for x, y in zip(a, b)]
    n = len(diffs)
    observed = sum(diffs) / n
    rng = random.Random(seed)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    other_side = sum(1 for m in means if (m <= 0 if observed > 0 else m >= 0))
    p = min(1.0, 2 * (other_side + 1) / (resamples + 1))
    return observed, (means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]), p


def bootstrap_statistic(n, difference, resamples=2000, seed=7):
    """Paired bootstrap of a statistic that is not a mean over units (a corpus F1 from summed
    counts): difference(indices) is system a's statistic minus b's over the units at those
    indices (repeats allowed). The observed difference, its 95 % percentile interval and the
    two-sided p-value, computed as paired_bootstrap computes them."""
    observed = difference(list(range(n)))
    rng = random.Random(seed)
    values = sorted(difference([rng.randrange(n) for _ in range(n)]) for _ in range(resamples))
    other_side = sum(1 for v in values if (v <= 0 if observed > 0 else v >= 0))
    p = min(1.0, 2 * (other_side + 1) / (resamples + 1))
    return observed, (values[int(0.025 * resamples)], values[int(0.975 * resamples) - 1]), p


def verdict(diff, p, seeds_a, seeds_b=None):
    """A seed's claim "a beats b" from a paired bootstrap's mean difference and p-value; seeds_b
    None for a baseline without seeds (lead, a constant output). One seed takes no verdict."""
    if seeds_a < 2 or (seeds_b is not None and seeds_b < 2):
        return "one seed: no verdict"
    if diff == 0:
        return "**does not hold** (no difference)"
    if diff > 0:
        return "**holds**" if p < 0.05 else "points its way, not significant"
    return "**the opposite holds**" if p < 0.05 else "**does not hold** (points the other way, not significant)"


def document_scores(runs, ids, metric, key="documents"):
    """Per test document, the system's score averaged over its seeds' runs."""
    return [statistics.mean(run[key][i][metric] for run in runs) for i in ids]


def claim_lines(rows, baselines, a, b, text, metrics=("rougeL", "rouge2"), key="documents"):
    """The claim "a beats b" as paired bootstraps over the documents every run scored, one line
    per metric. rows: {system: [runs, each with KEY: {document: {metric: score}}]}; baselines:
    {name: {document: {metric: score}}}, systems without seeds (lead, an untuned model) that b
    may name."""
    if not rows.get(a) or (b not in baselines and not rows.get(b)):
        return [f"- {text}: not run"]
    runs_a, runs_b = rows[a], ([] if b in baselines else rows[b])
    docs = set(runs_a[0][key])
    for run in runs_a + runs_b:
        docs &= set(run[key])
    if b in baselines:
        docs &= set(baselines[b])
    ids = sorted(docs)
    if not ids:
        return [f"- {text}: no test document was scored by both"]
    lines = [f"- {text}"]
    for metric in metrics:
        sa = document_scores(runs_a, ids, metric, key)
        sb = [baselines[b][i][metric] for i in ids] if b in baselines else document_scores(runs_b, ids, metric, key)
        diff, (lo, hi), p = paired_bootstrap(sa, sb)
        seeds_b = None if b in baselines else len(runs_b)
        lines.append(f"  - {metric}: Δ {diff:+.2f} [{lo:+.2f}, {hi:+.2f}], p = {p:.3f} over {len(ids)} documents: "
                     f"{verdict(diff, p, len(runs_a), seeds_b)}")
    return lines


def spread(ms, n, digits=2):
    """mean ± std over seeds; a single seed shows no spread."""
    return f"{ms[0]:.{digits}f}" if n < 2 else fmt(ms, digits)


def write_atomic(path, lines):
    tmp = path + ".tmp"
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(tmp, "w") as f:
        f.write("\n".join(lines))
    os.replace(tmp, path)


def figure_lines(page, recipes):
    """The learned HIBRIDS tables of each recipe `strata analyze biases` drew into
    PAGE-biases/RECIPE/ (seed 001 Figures 5 and 6): how to read them, then per figure its
    largest relations and the picture."""
    lines = ["`strata analyze biases` on the first seed of each system, drawn on the seed's example tree "
             "(§1 > §1.1 > §1.1.1 > §1.1.1.1, §1.2; §2 > §2.1): one cell per (query section, key section), the bias "
             "of their relation averaged over heads and layers, × 100; blue positive, orange negative.", ""]
    folder = os.path.splitext(os.path.basename(page))[0] + "-biases"
    for recipe in recipes:
        path = os.path.join(os.path.dirname(page), folder, recipe, "biases.json")
        with open(path) as f:
            report = json.load(f)
        for figure in report["figures"]:
            def listed(key):
                return ", ".join(f"{e['relation']} {100 * e['value']:+.1f}" for e in figure[key]) or "none"
            lines += [f"**{recipe}, {figure['side']}** ({figure['title']}): largest positive {listed('largest_positive')}; "
                      f"largest negative {listed('largest_negative')}.", "",
                      f"![{recipe} {figure['side']} biases]({folder}/{recipe}/{figure['files'][0]})", ""]
    return lines


# ---- charts ----

def figure(figures, report, name, alt, svg_lines):
    """Writes an SVG beside the page and returns the Markdown line that shows it."""
    path = os.path.join(figures, name)
    write_atomic(path, svg_lines)
    return f"![{alt}]({os.path.relpath(path, os.path.dirname(report))})"


PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#808000",
           "#bcbd22")


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


def line_chart_svg(title, series, x_labels, x_title, y_label, colours=None, name_of=str, palette=PALETTE):
    """A line chart as SVG lines: x = evenly spaced categories, y = a score; one polyline and
    marker set per system (a category without a value breaks its line), a legend at the right
    naming each system by name_of(system), in colours[system] or the next of the palette."""
    width, height = 680, 400
    left, right, top, bottom = 64, 190, 40, 56
    pw, ph = width - left - right, height - top - bottom
    values = [v for _, ys in series for v in ys if v is not None]
    ticks, step = nice_ticks(min(values), max(values))
    y0, y1 = ticks[0], ticks[-1]

    def x_at(i):
        return left + (pw * (i + 0.5) / len(x_labels))

    def y_at(v):
        return top + ph * (1 - (v - y0) / (y1 - y0))

    digits = 0 if step >= 1 else (1 if step >= 0.1 else 2)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
           f'<text x="{left + pw / 2:.1f}" y="22" text-anchor="middle" font-size="14">'
           f'{html.escape(title)}</text>']
    for t in ticks:
        y = y_at(t)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#e0e0e0"/>')
        out.append(f'<line x1="{left - 5}" y1="{y:.1f}" x2="{left}" y2="{y:.1f}" stroke="#000000"/>')
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{t:.{digits}f}</text>')
    for i, label in enumerate(x_labels):
        x = x_at(i)
        out.append(f'<line x1="{x:.1f}" y1="{top + ph}" x2="{x:.1f}" y2="{top + ph + 5}" stroke="#000000"/>')
        out.append(f'<text x="{x:.1f}" y="{top + ph + 19}" text-anchor="middle">{html.escape(str(label))}</text>')
    out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#000000"/>')
    out.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#000000"/>')
    out.append(f'<text x="{left + pw / 2:.1f}" y="{height - 12}" text-anchor="middle">'
               f'{html.escape(x_title)}</text>')
    out.append(f'<text x="16" y="{top + ph / 2:.1f}" text-anchor="middle" '
               f'transform="rotate(-90 16 {top + ph / 2:.1f})">{html.escape(y_label)}</text>')
    palette = iter(palette * 4)
    for k, (system, ys) in enumerate(series):
        colour = (colours or {}).get(system) or next(palette)
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
        out.append(f'<text x="{lx + 30}" y="{ly + 4}">{html.escape(name_of(system))}</text>')
    out.append("</svg>")
    return out + [""]
