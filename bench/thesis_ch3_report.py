"""docs/results/thesis-ch3.md from the runs of bench/thesis-ch3.sh: Table 3.1's cumulative
ablation in miniature on the Debian suite (average test score, its spread across tasks, the
share of the training data used), the samplers, FBA and the hard block mask, single-task
baselines, a trivial baseline per task, paired bootstraps over test examples, the smallest
task's validation score over training (Fig. 3.6) and the tasks' sampling shares (Fig. 3.4),
with the thesis's findings checked one by one."""
import argparse
import glob
import json
import math
import os
import random
import statistics
from collections import Counter

from report_common import figure, line_chart_svg, mean_std, read_jsonl, spread, verdict, write_atomic

ABLATION = ["mtl-rand", "cond-attn", "cond-bottleneck", "cond-align-cln", "ca-mtl"]
ABLATION_NAMES = {
    "mtl-rand": "MTL π_rand", "cond-attn": "+ conditional attention", "cond-bottleneck": "+ conditional bottleneck",
    "cond-align-cln": "+ conditional alignment & CLN", "ca-mtl": "+ MT-Uncertainty (CA-MTL)",
}
THESIS_TABLE_3_1 = {  # GLUE dev average / task σ / % data (thesis Table 3.1, BERT-base)
    "mtl-rand": (80.61, 14.41, 100), "cond-attn": (82.41, 10.67, 100), "cond-bottleneck": (82.90, 11.27, 100),
    "cond-align-cln": (83.12, 10.91, 100), "ca-mtl": (84.03, 10.02, 66.3),
}
RESAMPLES = 400


# ---- metrics over (gold, predicted) lists, as the C++ side computes them ----------------------
def accuracy(g, p):
    return sum(a == b for a, b in zip(g, p)) / len(g)


def f1_of(g, p, positive):
    tp = sum(a == positive and b == positive for a, b in zip(g, p))
    fp = sum(a != positive and b == positive for a, b in zip(g, p))
    fn = sum(a == positive and b != positive for a, b in zip(g, p))
    return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)


def macro_f1(g, p):
    labels = set(g) | set(p)
    return statistics.mean(f1_of(g, p, c) for c in labels)


def mcc(g, p):
    n = len(g)
    pairs = Counter(zip(g, p))
    tk, pk = Counter(g), Counter(p)
    c = sum(pairs[(k, k)] for k in tk)
    cov_tp = c * n - sum(tk[k] * pk[k] for k in set(tk) | set(pk))
    cov_pp = n * n - sum(v * v for v in pk.values())
    cov_tt = n * n - sum(v * v for v in tk.values())
    return 0.0 if cov_pp == 0 or cov_tt == 0 else cov_tp / math.sqrt(cov_pp * cov_tt)


def pearson(x, y):
    mx, my = statistics.mean(x), statistics.mean(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return 0.0 if sxx == 0 or syy == 0 else sxy / math.sqrt(sxx * syy)


def task_metric(metric, labels, g, p):
    if metric == "pearson":
        return pearson(p, g)
    if metric == "macro_f1":
        return macro_f1(g, p)
    if metric == "f1":
        return f1_of(g, p, labels[0])
    if metric == "mcc":
        return mcc(g, p)
    return accuracy(g, p)


# ---- reading the runs ---------------------------------------------------------------------------
def runs_of(out_dir, system, seeds):
    found = []
    for seed in seeds:
        d = os.path.join(out_dir, "runs", f"{system}-s{seed}")
        if os.path.exists(os.path.join(d, "result.json")):
            found.append(d)
    return found


def predictions(run):
    """task -> (gold list, predicted list) of one run's test split."""
    out = {}
    for row in read_jsonl(os.path.join(run, "predictions.jsonl")):
        g, p = out.setdefault(row["task"], ([], []))
        g.append(row["gold"])
        p.append(row["predicted"])
    return out


def valid_rows(run):
    return [r for r in read_jsonl(os.path.join(run, "run", "metrics.jsonl")) if r.get("split") == "valid"]


def test_scores(run):
    with open(os.path.join(run, "test.json")) as f:
        j = json.load(f)
    return {name: t["value"] for name, t in j["tasks"].items()}, j["score"]


# ---- the trivial baseline ---------------------------------------------------------------------
def trivial_baseline(suite, tasks):
    """Per task, the test metric of always answering the training split's most frequent label
    (a regression: its mean target, whose Pearson correlation is 0)."""
    scores = {}
    for name, info in tasks.items():
        train = read_jsonl(os.path.join(suite, "tasks", name, "train.jsonl"))
        test = read_jsonl(os.path.join(suite, "tasks", name, "test.jsonl"))
        gold = [r["label"] for r in test]
        if info["kind"] == "regression":
            scores[name] = 0.0
            continue
        majority = Counter(r["label"] for r in train).most_common(1)[0][0]
        scores[name] = task_metric(info.get("metric", "accuracy"), info["labels"], gold, [majority] * len(gold))
    return scores


# ---- paired bootstrap over test examples ----------------------------------------------------------
def average_score(tasks, names, preds_list, idx_of):
    """The mean over tasks `names` of each task's metric on the examples idx_of[task],
    averaged over the runs in preds_list (a system's seeds)."""
    total = 0.0
    for t in names:
        info = tasks[t]
        values = []
        for preds in preds_list:
            g, p = preds[t]
            idx = idx_of[t]
            values.append(task_metric(info.get("metric", "accuracy"), info.get("labels", []),
                                      [g[i] for i in idx], [p[i] for i in idx]))
        total += statistics.mean(values)
    return total / len(names)


def bootstrap(tasks, preds_a, preds_b, resamples=RESAMPLES, seed=7):
    """Average score of a minus b (average_score over the tasks both have), its 95 % percentile
    interval and the two-sided p-value of a paired bootstrap that resamples each task's test
    examples, both systems scored on the same resample."""
    names = [t for t in tasks if all(t in p for p in preds_a + preds_b)]
    sizes = {t: len(preds_a[0][t][0]) for t in names}
    full = {t: range(sizes[t]) for t in names}
    observed = average_score(tasks, names, preds_a, full) - average_score(tasks, names, preds_b, full)
    rng = random.Random(seed)
    diffs = []
    for _ in range(resamples):
        idx = {t: [rng.randrange(sizes[t]) for _ in range(sizes[t])] for t in names}
        diffs.append(average_score(tasks, names, preds_a, idx) - average_score(tasks, names, preds_b, idx))
    diffs.sort()
    other_side = sum(1 for d in diffs if (d <= 0 if observed > 0 else d >= 0))
    p = min(1.0, 2 * (other_side + 1) / (resamples + 1))
    return observed, (diffs[int(0.025 * resamples)], diffs[int(0.975 * resamples) - 1]), p


def seeds_above(tasks, preds_a, preds_b):
    """(seeds of a above b, seeds compared): seed i of a against seed i of b on the full test set."""
    n = min(len(preds_a), len(preds_b))
    above = 0
    for i in range(n):
        names = [t for t in tasks if t in preds_a[i] and t in preds_b[i]]
        full = {t: range(len(preds_a[i][t][0])) for t in names}
        above += average_score(tasks, names, [preds_a[i]], full) > average_score(tasks, names, [preds_b[i]], full)
    return above, n


# ---- the page -----------------------------------------------------------------------------------
def system_stats(out, system, seeds):
    """A system's runs: their test scores, spread, data used and minutes; None when not run."""
    runs = runs_of(out, system, seeds)
    if not runs:
        return None
    scores = [test_scores(r) for r in runs]
    spreads = [statistics.pstdev(s[0].values()) if len(s[0]) > 1 else 0.0 for s in scores]
    used = [valid_rows(r)[-1].get("data_used", float("nan")) for r in runs if valid_rows(r)]
    minutes = [json.load(open(os.path.join(r, "result.json")))["train_seconds"] / 60 for r in runs]
    return {"scores": [100 * s[1] for s in scores], "score": mean_std([100 * s[1] for s in scores]),
            "sigma": mean_std([100 * x for x in spreads]), "used": mean_std([100 * u for u in used]),
            "seeds": len(runs), "minutes": statistics.mean(minutes),
            "per_task": {t: statistics.mean(100 * s[0][t] for s in scores if t in s[0]) for t in scores[0][0]},
            "preds": [predictions(r) for r in runs]}


def single_task_stats(stats, names):
    """The single-task baselines as one system: seed i's predictions on task t are those of
    single-t's seed i (as system_stats keeps them, for comparison_row)."""
    seeds = min(stats[f"single-{t}"]["seeds"] for t in names)
    return {"seeds": seeds,
            "preds": [{t: stats[f"single-{t}"]["preds"][i][t] for t in names} for i in range(seeds)]}


def comparison_row(tasks, stats, a, b):
    """A paired-bootstrap row "a | b | a - b [interval] | p | seeds a > b | verdict", or None."""
    if a not in stats or b not in stats:
        return None
    diff, (lo, hi), p = bootstrap(tasks, stats[a]["preds"], stats[b]["preds"])
    above, n = seeds_above(tasks, stats[a]["preds"], stats[b]["preds"])
    return {"a": a, "b": b, "diff": diff, "lo": lo, "hi": hi, "p": p, "above": above, "n": n,
            "verdict": verdict(diff, p, stats[a]["seeds"], stats[b]["seeds"])}


def comparison_lines(rows):
    lines = ["| a | b | a − b [95 % interval] | p | seeds with a > b | verdict on \"a beats b\" |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['a']} | {r['b']} | {100 * r['diff']:+.2f} [{100 * r['lo']:+.2f}, {100 * r['hi']:+.2f}] | "
                     f"{r['p']:.3f} | {r['above']} of {r['n']} | {r['verdict']} |")
    return lines


def adaptation_section(out, suite_tasks, seeds, held_out, base_name):
    """Tables 3.3 and B.2: a new task on the trained model against the backbone fine-tuned alone."""
    lines = []
    rows = {}
    for task in held_out:
        if task not in suite_tasks:
            continue
        for init in ["bert", "random", "section"] + [t for t in suite_tasks if t != "section"]:
            for pct in ("0.1", "1", "10", "100"):
                st = system_stats(out, f"adapt-{task}-{init}-{pct}", seeds)
                if st:
                    rows[(task, init, pct)] = st
    if not rows:
        return lines, {}
    lines += ["## New tasks from the trained model (Table 3.3)", "",
              f"A new head on the trained `{base_name}` (same seed), its task embedding fresh (*random*) or copied "
              "from `section` (the nearest trained task), against the masked-LM backbone fine-tuned on the new task "
              "alone (*backbone*, no conditional modules: the thesis's BERT row), each on 0.1-100 % of the new "
              "task's training examples, the same steps (the subset repeats). The transfer tasks are held out of "
              "every multi-task run. Test score x 100, mean ± std over seeds.", ""]
    findings = {}
    for task in held_out:
        cells = {k: v for k, v in rows.items() if k[0] == task and k[1] in ("bert", "random", "section")}
        if not cells:
            continue
        info = suite_tasks[task]
        pcts = [p for p in ("0.1", "1", "10", "100") if any(k[2] == p for k in cells)]
        lines += [f"**{task}** ({info['examples']['train']} training examples, {info['examples']['test']} test; "
                  f"{info.get('metric', 'accuracy')}):", "",
                  "| initialisation | " + " | ".join(f"{p} %" for p in pcts) + " |", "|---|" + "---|" * len(pcts)]
        for init, label in (("bert", "backbone alone"), ("random", "CA-MTL, new embedding random"),
                            ("section", "CA-MTL, embedding of section")):
            lines.append(f"| {label} | " + " | ".join(
                spread(rows[(task, init, p)]["score"], rows[(task, init, p)]["seeds"])
                if (task, init, p) in rows else "" for p in pcts) + " |")
        lines.append("")
        comps = []
        one = {task: info}
        named = {}
        for p in pcts:
            for a, b in (("random", "bert"), ("section", "random")):
                ka, kb = (task, a, p), (task, b, p)
                if ka in rows and kb in rows:
                    na, nb = f"{a} {p} %", f"{b} {p} %"
                    named[na], named[nb] = rows[ka], rows[kb]
                    row = comparison_row(one, named, na, nb)
                    comps.append(row)
                    findings[(task, a, b, p)] = row
        if comps:
            lines += comparison_lines(comps) + [""]
    zero = {k[1]: v for k, v in rows.items() if k[0] == held_out[0] and k[2] == "0.1" and k[1] != "bert"}
    if len(zero) > 2:
        task = held_out[0]
        lines += [f"## Which embedding a new task starts from (Table B.2), {task} at 0.1 %", "",
                  f"The thesis evaluates each initialisation zero-shot (0 % of the data); a new head knows nothing "
                  f"before it trains, so here each trains on 0.1 % ({max(1, round(0.001 * suite_tasks[task]['examples']['train']))} "
                  "examples), as the first column above.", "",
                  "| new task embedding from | test score | seeds |", "|---|---|---|"]
        for init, st in sorted(zero.items(), key=lambda kv: -kv[1]["score"][0]):
            lines.append(f"| {init} | {spread(st['score'], st['seeds'])} | {st['seeds']} |")
        best = max(zero, key=lambda k: zero[k]["score"][0])
        worst = min(zero, key=lambda k: zero[k]["score"][0])
        lines.append("")
        if best != worst:
            row = comparison_row({task: suite_tasks[task]}, zero, best, worst)
            findings["b2"] = row
            lines += [f"Best against worst start: {best} − {worst} {100 * row['diff']:+.2f} "
                      f"[{100 * row['lo']:+.2f}, {100 * row['hi']:+.2f}], p = {row['p']:.3f} (chosen after "
                      "looking, so the p-value flatters it).", ""]
    return lines, findings


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--systems", required=True)
    ap.add_argument("--held-out", default="", help="tasks left out of the multi-task runs (the transfer tasks)")
    ap.add_argument("--seeds", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--minutes", type=int, default=0)
    ap.add_argument("--report", required=True)
    args = ap.parse_args()
    out, seeds, held_out = args.out_dir, args.seeds.split(), args.held_out.split()
    figures = os.path.splitext(args.report)[0]  # docs/results/thesis-ch3.md -> docs/results/thesis-ch3/
    suite = os.path.join(out, "suite")
    with open(os.path.join(suite, "tasks.json")) as f:
        suite_tasks = json.load(f)
    tasks = {name: t for name, t in suite_tasks.items() if not t.get("transfer") and name not in held_out}
    names = list(tasks)
    systems = args.systems.split()

    stats = {}
    for system in systems + [f"single-{t}" for t in names]:
        st = system_stats(out, system, seeds)
        if st:
            stats[system] = st
    per_task = {s: st["per_task"] for s, st in stats.items()}
    trivial = trivial_baseline(suite, tasks)
    trivial_avg = statistics.mean(100 * v for v in trivial.values())
    single = {t: per_task[f"single-{t}"][t] for t in names if f"single-{t}" in per_task}
    if single:
        per_task["single-task"] = single
    if len(single) == len(names):
        stats["single-task"] = single_task_stats(stats, names)

    steps = 1000
    lines = ["# Thesis ch. 3 in miniature: CA-MTL on the Debian suite", ""]
    lines += [
        "Produced by `bench/thesis-ch3.sh` (`bench/thesis_ch3_report.py` writes this page from the runs; "
        f"{args.minutes} minutes for the last invocation). Every number below is measured here; the thesis's "
        "are quoted beside them for direction only.", "",
        "## Scale", "",
        "| | thesis (Table 3.1) | here |", "|---|---|---|",
        "| backbone | BERT-base: 12 layers, d = 768, 110M parameters, pretrained on BooksCorpus + Wikipedia | 4 layers, "
        "d = 128, masked-LM-pretrained here on the Debian package descriptions (4,000 steps) |",
        "| frozen | embeddings + bottom half | embeddings + layers 0-1 of 4 |",
        "| input length L, bias blocks N | 128, N = d / L = 6 | 64, N = d / L = 2 |",
        f"| tasks | GLUE, 9 tasks (8 scored), 393k MNLI ... 2.5k RTE | the Debian suite, {len(names)} tasks, "
        f"{max(t['examples']['train'] for t in tasks.values()) // 1000}k ... "
        f"{min(t['examples']['train'] for t in tasks.values()) / 1000:.1f}k training examples (`strata data debian`) |",
        "| new tasks | SciTail, SNLI | " + (", ".join(f"{t} ({suite_tasks[t]['examples']['train']} training examples)"
                                           for t in held_out if t in suite_tasks) or "none") + ", held out |",
        f"| training | 5 epochs, batch 32, lr 2e-5 | {steps:,} steps of 32 ({32 * steps:,} examples, about "
        f"{32 * steps / sum(t['examples']['train'] for t in tasks.values()):.2f} epochs of the suite), lr 5e-4; "
        "the long row 3,000 |",
        f"| seeds | 1 | {', '.join(seeds)} (a system with fewer says so in its row; one seed shows no spread and takes "
        "no verdict) |", "",
        "Scores are each task's test metric x 100 (accuracy; macro-F1 for priority; F1 of `match`; MCC for "
        "acceptability; Pearson for the Jaccard regression), their unweighted mean the *average*; *task σ* is their "
        "standard deviation across tasks; *% data* is the share of distinct training examples a run trained on.", "",
    ]

    # Comparisons, all by paired bootstrap over test examples.
    comparisons = [(ABLATION[i + 1], ABLATION[i]) for i in range(len(ABLATION) - 1)] + [("ca-mtl", "mtl-rand")]
    others = [s for s in systems if s not in ABLATION and s in stats]
    comparisons += [(s, "cond-align-cln") for s in others] + [("ca-mtl-weighted", "ca-mtl")]
    comparisons += [(s, "single-task") for s in ("mtl-rand", "cond-align-cln", "ca-mtl")]
    verdicts = {}
    for a, b in comparisons:
        row = comparison_row(tasks, stats, a, b)
        if row:
            verdicts[(a, b)] = row

    # What the baselines learn: tasks no system lifts above the majority label.
    short_runs = {s: v for s, v in per_task.items() if s != "cond-align-cln-long"}
    stuck = [t for t in names if all(v.get(t, -1e9) <= 100 * trivial[t] + 0.05 for v in short_runs.values())]
    lines += ["## In short", ""]
    multi = [s for s in systems if s in stats]
    below = [s for s in multi if stats[s]["score"][0] <= trivial_avg]
    lines.append((f"- Every multi-task system beats the trivial baseline's average ({trivial_avg:.1f}), so the models "
                  "learn" if not below else
                  f"- {', '.join(below)} do not beat the trivial baseline's average ({trivial_avg:.1f})") +
                 "; but at about a tenth of an epoch " +
                 (f"no system lifts {', '.join(stuck)} above its majority label." if stuck
                  else "every task rises above its majority label."))
    if "cond-align-cln-long" in per_task and stuck:
        lifted = [t for t in stuck if per_task["cond-align-cln-long"].get(t, -1e9) > 100 * trivial[t] + 0.05]
        lines.append(f"- Three times as many steps (the long row) lift {', '.join(lifted) if lifted else 'none of them'}"
                     f"{' above it' if lifted else ''}.")
    mtu = runs_of(out, "ca-mtl", seeds)
    if mtu and valid_rows(mtu[0]):
        last = valid_rows(mtu[0])[-1]
        shares = {t: last.get("share/" + t, 0.0) for t in names}
        top = max(shares, key=shares.get)
        lines.append(f"- MT-Uncertainty as Algorithm 1 spends {100 * shares[top]:.1f} % of its training examples on "
                     f"`{top}` (first seed)" + (
                         ": dividing each entropy by log C makes a task whose predictions stay near uniform the most "
                         "uncertain candidate there is, so it wins most top-b and the other tasks starve."
                         if shares[top] > 0.5 else "."))
    lines.append("")

    # The ablation.
    lines += ["## Table 3.1 in miniature: the cumulative ablation", "",
              "| configuration | average | task σ | % data | seeds | minutes/run | thesis avg / σ / % data |",
              "|---|---|---|---|---|---|---|"]
    for system in ABLATION:
        th = THESIS_TABLE_3_1[system]
        if system not in stats:
            lines.append(f"| {ABLATION_NAMES[system]} | not run | | | | | {th[0]} / {th[1]} / {th[2]} |")
            continue
        s = stats[system]
        lines.append(f"| {ABLATION_NAMES[system]} | {spread(s['score'], s['seeds'])} | {spread(s['sigma'], s['seeds'])} | "
                     f"{spread(s['used'], s['seeds'], 1)} | {s['seeds']} | {s['minutes']:.1f} | {th[0]} / {th[1]} / {th[2]} |")
    if single:
        seeds_single = min(stats[f"single-{t}"]["seeds"] for t in single)
        lines.append(f"| single-task baselines (one model per task, the backbone without conditional modules) | "
                     f"{statistics.mean(single.values()):.2f} over {len(single)} of {len(names)} tasks | | | "
                     f"{seeds_single} | | ST 79.6 (GLUE test, Table 3.2) |")
    lines += ["", "Trivial baseline (the training split's majority label; the mean target for the regression): "
              f"average {trivial_avg:.2f}.", ""]
    if single:
        lines += [f"The single-task baselines are not matched in compute: each trains the same {steps:,} steps of 32 on "
                  f"its one task, so together they take {len(names)} times the steps of a multi-task run, and each "
                  f"task sees about {len(names)} times the examples it sees there (a small task many epochs). The "
                  "thesis's single-task models train each task as many epochs as its multi-task model does.", ""]

    # Per task.
    shown = [s for s in systems + ["single-task"] if s in per_task]
    if shown:
        lines += ["## Per task (test, mean over seeds)", "",
                  "| task | metric | majority | " + " | ".join(shown) + " |",
                  "|---|---|---|" + "---|" * len(shown)]
        for t in names:
            row = [t, tasks[t].get("metric", "accuracy"), f"{100 * trivial[t]:.1f}"]
            for s in shown:
                row.append(f"{per_task[s][t]:.1f}" if t in per_task[s] else "")
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")

    # Other systems.
    if others:
        lines += ["## Samplers, FBA, the hard block mask and a longer run", "",
                  "Each changes one thing of `cond-align-cln` (the full model under π_rand): *size* samples tasks in "
                  "proportion to their training sets, *temperature* ∝ size^0.5, *ca-mtl-weighted* is MT-Uncertainty as "
                  "the public code scores candidates (each one's normalised entropy times its task's mean over the max "
                  "task mean), *fba* one full L × L bias block instead of N block-diagonal ones, *hard* the blocks as "
                  "a mask (off-block pairs hidden), *cond-align-cln-long* 3,000 steps instead of 1,000.", "",
                  "| system | average | task σ | % data | seeds | minutes/run |", "|---|---|---|---|---|---|"]
        for system in ["cond-align-cln", "ca-mtl"] + others:
            if system in stats:
                s = stats[system]
                lines.append(f"| {system} | {spread(s['score'], s['seeds'])} | {spread(s['sigma'], s['seeds'])} | "
                             f"{spread(s['used'], s['seeds'], 1)} | {s['seeds']} | {s['minutes']:.1f} |")
        lines.append("")

    lines += ["## Paired bootstraps over test examples", "",
              f"Each task's test examples resampled with replacement ({RESAMPLES} times), both systems scored on the "
              "same resample (each system's metric averaged over its seeds), the difference of the averages x 100 "
              "with its 95 % percentile interval; two-sided p-value; and how many seeds (seed i against seed i, on "
              "the whole test set) agree.", ""]
    lines += comparison_lines(list(verdicts.values())) + [""]

    # Fig. 3.6: the smallest task over training; Fig. 3.4: sampling shares.
    smallest = min(names, key=lambda t: tasks[t]["examples"]["train"])
    curves = {}
    for system in ("mtl-rand", "cond-align-cln", "ca-mtl", "ca-mtl-weighted"):
        runs = runs_of(out, system, seeds)
        if runs:
            curves[system] = [(r["step"], 100 * r.get(f"task/{smallest}", float("nan"))) for r in valid_rows(runs[0])]
    if curves:
        lines += [f"## The smallest task ({smallest}, {tasks[smallest]['examples']['train']} training examples) over "
                  "training", "", "Validation score x 100 at each evaluation (first seed), the thesis's Fig. 3.6 "
                  "question: does π_rand forget the small task once it has seen it, and does MT-U hold it?", ""]
        steps_seen = sorted({s for c in curves.values() for s, _ in c})
        lines += ["| step | " + " | ".join(curves) + " |", "|---|" + "---|" * len(curves)]
        series = [(system, [dict(c).get(step) for step in steps_seen]) for system, c in curves.items()]
        for k, step in enumerate(steps_seen):
            lines.append(f"| {step} | " + " | ".join("" if ys[k] is None else f"{ys[k]:.1f}" for _, ys in series) + " |")
        lines += ["", figure(figures, args.report, "smallest-task.svg", f"Fig. 3.6: {smallest} over training",
                             line_chart_svg(f"{smallest} (validation) over training, first seed", series, steps_seen,
                                            "step", "validation score x 100")), ""]
    for system in ("ca-mtl", "ca-mtl-weighted"):
        runs = runs_of(out, system, seeds)
        if not runs:
            continue
        rows = valid_rows(runs[0])
        lines += [f"## What {system} trained on (Fig. 3.4)", "",
                  "Share of the examples trained on so far that came from each task (first seed), beside the task's "
                  "share of the training data:", "",
                  "| task | share of data | " + " | ".join(f"step {r['step']}" for r in rows) + " |",
                  "|---|---|" + "---|" * len(rows)]
        total = sum(tasks[t]["examples"]["train"] for t in names)
        for t in names:
            lines.append(f"| {t} | {100 * tasks[t]['examples']['train'] / total:.1f} | " +
                         " | ".join(f"{100 * r.get('share/' + t, float('nan')):.1f}" for r in rows) + " |")
        series = [(t, [100 * r["share/" + t] if "share/" + t in r else None for r in rows]) for t in names]
        lines += ["", figure(figures, args.report, f"shares-{system}.svg", f"Fig. 3.4: what {system} trained on",
                             line_chart_svg(f"{system}: share of the examples so far, by task (first seed)", series,
                                            [r["step"] for r in rows], "step", "% of examples trained on")), ""]

    # CovSim (Fig. 3.7): the first layer's inputs, with and without the conditional alignment.
    covsim = {}
    for system in systems:
        values = []
        for r in runs_of(out, system, seeds):
            path = os.path.join(r, "covsim.json")
            if os.path.exists(path):
                with open(path) as f:
                    values.append(json.load(f)["mean"])
        if values:
            covsim[system] = (mean_std(values), len(values))
    if covsim:
        lines += ["## CovSim (Eq. 3.7) of the first layer's inputs", "",
                  "Mean over tasks of CovSim_i on 200 validation examples per task, after training (mean ± std over "
                  "seeds). The embeddings are frozen, so a system without the conditional alignment keeps the "
                  "pretrained backbone's value; the thesis (Fig. 3.7) sees CovSim rise for all 9 GLUE tasks as CA-MTL "
                  "trains.", "", "| system | CovSim |", "|---|---|"]
        for system, (ms, n) in covsim.items():
            lines.append(f"| {system} | {spread(ms, n, 4)} |")
        lines.append("")

    adapt_lines, adapt = adaptation_section(out, suite_tasks, seeds, held_out, "cond-align-cln")
    lines += adapt_lines

    # Findings.
    def finding(text, a, b):
        if (a, b) not in verdicts:
            return f"- {text}: not run."
        r = verdicts[(a, b)]
        return (f"- {text}: {100 * r['diff']:+.2f} points [{100 * r['lo']:+.2f}, {100 * r['hi']:+.2f}], p = {r['p']:.3f}, "
                f"{r['above']} of {r['n']} seeds: {r['verdict']}.")

    lines += ["## The thesis's findings, checked", ""]
    lines.append(finding("Conditional attention improves on π_rand MTL (+1.8 in the thesis)", "cond-attn", "mtl-rand"))
    lines.append(finding("The conditional bottleneck adds to it (+0.5)", "cond-bottleneck", "cond-attn"))
    lines.append(finding("Conditional alignment and CLN add to it (+0.2)", "cond-align-cln", "cond-bottleneck"))
    lines.append(finding("MT-Uncertainty adds to it (+0.9)", "ca-mtl", "cond-align-cln"))
    lines.append(finding("CA-MTL beats π_rand MTL overall (+3.4)", "ca-mtl", "mtl-rand"))
    if "ca-mtl" in stats and "mtl-rand" in stats:
        a, b = stats["ca-mtl"]["sigma"][0], stats["mtl-rand"]["sigma"][0]
        lines.append(f"- CA-MTL's spread across tasks is smaller (10.0 against 14.4): "
                     f"{spread(stats['ca-mtl']['sigma'], stats['ca-mtl']['seeds'])} against "
                     f"{spread(stats['mtl-rand']['sigma'], stats['mtl-rand']['seeds'])}: "
                     f"{'**holds**' if a < b else '**does not hold**'} (on the means over seeds; no test).")
        lines.append(f"- MT-U trains on less of the data (66.3 % after 5 epochs): here every run takes the same 1,000 "
                     f"steps of 32, so each trains on about the same share of distinct examples "
                     f"({spread(stats['ca-mtl']['used'], stats['ca-mtl']['seeds'], 1)} % against "
                     f"{spread(stats['mtl-rand']['used'], stats['mtl-rand']['seeds'], 1)} %); MT-U drew b candidates "
                     "from every task per step and trained on 1 in T of them. Not comparable at this scale.")
    lines.append(finding("The size-proportional sampler against π_rand (the thesis's Fig. 3.5 puts MT-U above both)",
                         "size", "cond-align-cln"))
    lines.append(finding("Temperature sampling against π_rand", "temperature", "cond-align-cln"))
    lines.append(finding("The public code's task-weighted MT-U against Algorithm 1 as written", "ca-mtl-weighted", "ca-mtl"))
    lines.append(finding("Full-block attention (FBA) against the block-diagonal bias (Table B.4: FBA 81.8, the thesis's "
                         "point being that it is worse)", "fba", "cond-align-cln"))
    lines.append(finding("The blocks as a hard mask against the soft bias (the public code's choice)", "hard",
                         "cond-align-cln"))
    lines.append(finding("Three times the steps (the page's own question)", "cond-align-cln-long", "cond-align-cln"))
    lines.append(finding("Multi-task training under π_rand beats a model per task (Table 3.2: MTL 79.9 against ST 79.6)",
                         "mtl-rand", "single-task"))
    lines.append(finding("The full conditional model under π_rand beats a model per task", "cond-align-cln",
                         "single-task"))
    lines.append(finding("CA-MTL beats a model per task (Table 3.2: 80.9 against ST 79.6)", "ca-mtl", "single-task"))
    if "single-task" in stats:  # every task's single-task model ran
        for system in ("cond-align-cln", "ca-mtl"):
            if system in per_task:
                at_least = sum(per_task[system][t] >= per_task["single-task"][t] for t in names)
                lines.append(f"- {system} at or above the single-task model on {at_least} of {len(names)} tasks "
                             "(Table 3.4: CA-MTL ≥ ST on 17 of 24 with BERT-large), on the means over seeds.")
    for task in held_out:
        for p in ("0.1", "1"):
            r = adapt.get((task, "random", "bert", p))
            if r:
                lines.append(f"- A new task learns faster on the multi-task model than on the backbone alone (Table 3.3, "
                             f"{task} at {p} %): {100 * r['diff']:+.2f} points [{100 * r['lo']:+.2f}, "
                             f"{100 * r['hi']:+.2f}], p = {r['p']:.3f}, {r['above']} of {r['n']} seeds: {r['verdict']}.")
    if "b2" in adapt:
        r = adapt["b2"]
        lines.append(f"- The new task's score depends on which embedding it starts from (Table B.2): best against worst "
                     f"{100 * r['diff']:+.2f} points, p = {r['p']:.3f} (a maximum over starts, so only a large gap "
                     "counts).")
    if covsim and "mtl-rand" in covsim:
        aligned = [s for s in ("cond-align-cln", "ca-mtl") if s in covsim]
        moved = max((abs(covsim[s][0][0] - covsim["mtl-rand"][0][0]) for s in aligned), default=0.0)
        lines.append("- CovSim rises as CA-MTL trains (Fig. 3.7): " + ", ".join(
            f"{s} {spread(*covsim[s], 4)}" for s in aligned) + f" against {spread(*covsim['mtl-rand'], 4)} without the "
            "alignment: " + ("**not observed**: the zero-initialised alignment FiLM stayed near the identity in "
                             "1,000 steps" if moved < 1e-3 else "it moves (see the table)") + ".")
    lines += ["", "## Not run", "",
              "- Tables 3.2, 3.4-3.6 and Fig. 3.8 (GLUE, SuperGLUE, MRQA, WNUT; BERT-large and RoBERTa): the loaders "
              "take GLUE-style TSV files (`docs/multi-task.md`), but none ship here and no network is used at run time.",
              "- Fig. 3.5's 200k-iteration sampler race and the Counterfactual sampler.",
              "- Table B.4's unfreezing sweep."]
    if "header-section" in suite_tasks and "header-section" not in held_out:
        labels = Counter(r["label"] for r in read_jsonl(os.path.join(suite, "tasks", "header-section", "test.jsonl")))
        lines.append("- New-task adaptation to the suite's own transfer task, `header-section`: its test split here is "
                     + ", ".join(f"{n} × {label}" for label, n in labels.most_common()) +
                     " — " + ("one class, which no score can tell apart." if len(labels) == 1 else "not run."))
    lines.append("")
    write_atomic(args.report, lines)


if __name__ == "__main__":
    main()
