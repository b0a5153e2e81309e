"""What the experiment reports (bench/experiment_report.py, bench/seed000_report.py,
bench/seed003_report.py, bench/seed001_qs_report.py) share: mean ± std over seeds, the best
validation loss of a run, the share of distinct summaries, paired bootstraps, the verdict on a
seed's claim and its lines over per-document ROUGE, the learned-bias figures, and writing the
page atomically."""
import json
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
