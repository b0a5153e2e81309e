#!/usr/bin/env python3
"""Turns the runs of bench/seed003.sh into docs/results/seed003.md: Table 1 in miniature
(extractive ROUGE without and with trigram blocking, segmentation P/R/F1 at 0.5 and at a
validation-tuned threshold, vanilla against patterns in 4, 8 and all heads, with each model's
sparsity ρ), the ablations over pattern combinations (Tables 2 and 7), the PAL study on a
masked-LM encoder (Tables 3 and 6), the peers every run is scored beside, the seed's findings
tested by paired bootstraps over the test documents, and the pipeline's analyses (head
importance, pattern relevance, top-3 heads, attention agreement across seeds)."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tomllib

from report_common import (best_valid_loss, bootstrap_statistic, claim_lines, document_rouge, mean_std, read_jsonl,
                           run_minutes, spread, verdict, write_atomic)

ROUGE = ("rouge1", "rouge2", "rougeL")
BOUNDARY = ("precision", "recall", "f1")
# The extraction settings every extractive run is scored in (the files' tags): the top
# sentence, and the top 3 without and with trigram blocking.
SETTINGS = ("top1", "top3", "top3-trigram")


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def document_counts(candidates_path, field):
    """{document: [predicted, gold, correct]} of a segmentation run's candidates, the prediction
    read from `field` (prediction at 0.5, tuned_prediction at the tuned threshold)."""
    counts = {}
    for row in read_jsonl(candidates_path):
        doc = row["id"].rsplit(":", 1)[0]
        c = counts.setdefault(doc, [0, 0, 0])
        c[0] += row[field]
        c[1] += row["label"]
        c[2] += row[field] * row["label"]
    return counts


def f1_of(predicted, gold, correct):
    return 2 * correct / (predicted + gold) if predicted + gold else 0.0


def load(runs_dir, systems):
    rows = {s: [] for s in systems}
    peers = {}
    for name in sorted(os.listdir(runs_dir)):
        path = os.path.join(runs_dir, name)
        result = read_json(os.path.join(path, "result.json"))
        if result is None or result["system"] not in rows:
            continue
        if result["recipe"].startswith("segmentation"):
            test = read_json(os.path.join(path, "test.json"))
            scored = test["systems"]
            for m in BOUNDARY:
                result[m] = scored["model"][m]
                result["tuned_" + m] = scored["model_tuned"][m]
            result["threshold"] = test["tuned_threshold"]["threshold"]
            for field in ("prediction", "tuned_prediction"):
                result["docs_" + field] = document_counts(os.path.join(path, "candidates.jsonl"), field)
            for peer in ("all_boundaries", "random_base_rate"):
                peers[peer] = {m: scored[peer][m] for m in BOUNDARY}
            peers["candidates"] = {"candidates": test["candidates"], "boundaries": test["boundaries"]}
        else:
            for tag in SETTINGS:
                scored = read_json(os.path.join(path, f"test-{tag}.json"))["systems"]
                for m in ROUGE:
                    result[f"{tag}_{m}"] = 100 * scored["model"]["scores"][m]["fmeasure"]["mean"]
                for peer in ("lead", "oracle"):
                    peers[f"{tag}_{peer}"] = {m: 100 * scored[peer]["scores"][m]["fmeasure"]["mean"] for m in ROUGE}
                result[f"docs_{tag}"] = document_rouge(os.path.join(path, f"extracts-{tag}.jsonl"),
                                                       os.path.join(path, f"rouge-{tag}.jsonl"))
        result["valid_loss"] = best_valid_loss(os.path.join(path, "run", "metrics.jsonl"))
        rows[result["system"]].append(result)
    return {s: r for s, r in rows.items() if r}, peers


def column(runs, key, digits=2):
    return spread(mean_std([r[key] for r in runs]), len(runs), digits)


def heads_of(system):
    """'4/8' for ext-6x8-p4, '0/8' for the vanilla ext-6x8, '+m +i' for ablations; the PAL
    study's patterned PAL heads."""
    if system.startswith("bert-"):
        return "4/4 PAL" if system == "bert-pal-p" else "0"
    shape, _, variant = system.partition("-")[2].partition("-")
    total = shape.split("x")[1]
    if not variant:
        return f"0/{total}"
    if variant[0] == "p" and variant[1:].isdigit():
        return f"{variant[1:]}/{total}"
    return "+" + " +".join(variant)


# The seed's claims: (a, b, text). Extractive ones are tested on ROUGE, segmentation ones on F1.
EXTRACTIVE_CLAIMS = [
    ("ext-6x8-p4", "ext-6x8", "patterns in 4/8 heads beat vanilla (6 × 8, Table 1)"),
    ("ext-6x8-p8", "ext-6x8", "patterns in 8/8 heads beat vanilla (6 × 8, Table 1)"),
    ("ext-6x12-p4", "ext-6x12", "patterns in 4/12 heads beat vanilla (6 × 12, Table 1)"),
    ("ext-6x12-p8", "ext-6x12", "patterns in 8/12 heads beat vanilla (6 × 12, Table 1)"),
    ("ext-6x12-p12", "ext-6x12", "patterns in 12/12 heads beat vanilla (6 × 12, Table 1)"),
    ("ext-6x8-mi", "ext-6x8-m", "matching + intra-sentence beats matching alone (Table 2)"),
    ("ext-6x8-mi", "ext-6x8-i", "matching + intra-sentence beats intra-sentence alone (Table 2)"),
    ("ext-6x8", "ext-6x8-p", "positional patterns alone do not help (Table 2: −0.13 R-1)"),
    ("ext-6x8-p4", "ext-6x8-mi", "all patterns beat matching + intra-sentence (Table 2)"),
    ("bert-pal-p", "bert-pal", "patterns in the PAL heads beat plain PALs (Table 3)"),
    ("bert-pal-p", "bert-ext", "PALs with patterns beat the fine-tuned encoder alone (Table 3, BERTSum)"),
]
SEGMENTATION_CLAIMS = [
    ("seg-6x8-p4", "seg-6x8", "patterns in 4/8 heads beat vanilla (segmentation, Table 1)"),
    ("seg-6x8-p8", "seg-6x8", "patterns in 8/8 heads beat vanilla (segmentation, Table 1)"),
    ("seg-6x8-m", "seg-6x8", "matching token alone helps (Table 7: +0.051 F1)"),
    ("seg-6x8", "seg-6x8-i", "intra-context alone does not help (Table 7: +0.000)"),
    ("seg-6x8-p8", "seg-6x8-mi", "all patterns beat matching + intra-context (Table 7)"),
]


def segmentation_claim(rows, a, b, text):
    """Corpus F1 (each seed's, averaged over seeds) over documents resampled with their
    candidates, at 0.5 and at the tuned threshold."""
    if a not in rows or b not in rows:
        return [f"- {text}: not run"]
    lines = [f"- {text}"]
    for field, name in (("prediction", "F1 at 0.5"), ("tuned_prediction", "F1 at the tuned threshold")):
        docs = sorted(set.intersection(*(set(r["docs_" + field]) for r in rows[a] + rows[b])))
        counts_a = [[r["docs_" + field][d] for d in docs] for r in rows[a]]
        counts_b = [[r["docs_" + field][d] for d in docs] for r in rows[b]]

        def mean_f1(per_run, idx):
            return statistics.mean(f1_of(*(sum(run[i][k] for i in idx) for k in range(3))) for run in per_run)

        diff, (lo, hi), p = bootstrap_statistic(len(docs), lambda idx: mean_f1(counts_a, idx) - mean_f1(counts_b, idx))
        lines.append(f"  - {name}: Δ {diff:+.3f} [{lo:+.3f}, {hi:+.3f}], p = {p:.3f} over {len(docs)} documents: "
                     f"{verdict(diff, p, len(rows[a]), len(rows[b]))}")
    return lines


def copy_figures(analysis_dir, report_path):
    """The analyses' SVG heatmaps beside the report (REPORT_DIR/seed003/), as Markdown links."""
    figures_dir = os.path.join(os.path.dirname(report_path) or ".", "seed003")
    os.makedirs(figures_dir, exist_ok=True)
    links = []
    for name in sorted(os.listdir(analysis_dir)):
        source = os.path.join(analysis_dir, name)
        if not os.path.isdir(source):
            continue
        for svg in sorted(f for f in os.listdir(source) if f.endswith(".svg")):
            if name.startswith("patterns-ext") and svg.startswith("intra_context"):
                continue  # one segment per extractive input: nothing to see
            target = f"{name}-{svg}"
            shutil.copyfile(os.path.join(source, svg), os.path.join(figures_dir, target))
            links.append(f"[{name} {svg[:-4]}](seed003/{target})")
    return links


def top3_lines(analysis_dir):
    """§3.1.2: the top-3 heads of each layer by importance, and the share of them in which each
    pattern stands out (GR above its mean + 3 std over the heads, the seed's keeping rule)."""
    lines = []
    for run in ("ext-6x8-s1", "seg-6x8-s1"):
        importance = read_json(os.path.join(analysis_dir, f"heads-{run}", "importance.json"))
        relevance = read_json(os.path.join(analysis_dir, f"patterns-{run}", "relevance.json"))
        if not importance or not relevance:
            continue
        scores = dict(zip(importance["layers"], importance["scores"]))
        top = []  # (layer row in relevance, head)
        for row, layer in enumerate(relevance["layers"]):
            ranked = sorted(range(len(scores[layer])), key=lambda h: -scores[layer][h])[:3]
            top += [(row, h) for h in ranked]
        for p in relevance["patterns"]:
            if run.startswith("ext") and p["name"] == "intra_context":
                continue
            share = sum(1 for row, h in top if p["matrix"][row][h] > p["threshold"]) / len(top)
            lines.append(f"| {run} | {p['name']} | {100 * share:.0f} % | {'yes' if share > 0.5 else 'no'} |")
    if not lines:
        return []
    return ["", "Top-3 heads (§3.1.2): the three most important heads of each encoder layer, and the share of them in "
            "which a pattern stands out (its GR above the mean + 3 std over all heads). The seed keeps the patterns "
            "found in over half of the important heads.", "",
            "| model | pattern | top-3 heads showing it | over half |", "|---|---|---|---|"] + lines


def agreement_lines(analysis_dir):
    lines = []
    for system in ("ext-6x8", "seg-6x8"):
        d = read_json(os.path.join(analysis_dir, f"agreement-{system}", "agreement.json"))
        if d:
            per_pair = ", ".join(f"{p['mean']:.4f}" for p in d["pairs"])
            lines.append(f"| {system} | {len(d['models'])} | {d['mean']:.4f} | {per_pair} |")
    if not lines:
        return []
    return ["", "Agreement across seeds (§3.1.2; the seed reports a mean Jensen-Shannon divergence of 0.01 for "
            "BERTSum across 3 seeds): `strata analyze agreement` over the first 200 validation examples, per head and "
            "real query, in nats (0 = the same attention, ln 2 = 0.693 = disjoint). Attention that is nearly "
            "uniform agrees with any other nearly uniform attention: read a low JSD beside the relevance table's "
            "stds (a head whose GR barely varies has learned no pattern).", "",
            "| system | seeds | mean JSD | per pair |", "|---|---|---|---|"] + lines


def analysis_section(analysis_dir, report_path):
    """Steps 1-3 of the pipeline (§3.1) on seed 1's models."""
    lines = ["", "## The pipeline on the trained models (§3.1, seed 1)", ""]
    if not analysis_dir or not os.path.isdir(analysis_dir):
        return lines + ["Not run."]
    lines += ["Head importance: first-order Taylor on the validation loss, each layer's scores divided by their "
              "L2 norm (`strata analyze heads`). In the patterned models heads 1–4 carry matching token, "
              "intra-sentence (or -context), previous token and next token; heads 5–8 are plain. Appendix C of "
              "the seed finds the patterned heads the more important ones.", "",
              "| model | mean importance, heads 1–4 | mean importance, heads 5–8 | most important head per layer (1-based) |",
              "|---|---|---|---|"]
    for run in ("ext-6x8-s1", "ext-6x8-p4-s1", "seg-6x8-s1", "seg-6x8-p4-s1"):
        d = read_json(os.path.join(analysis_dir, f"heads-{run}", "importance.json"))
        if not d:
            continue
        rows = [row for name, row in zip(d["layers"], d["scores"]) if name.endswith(".self_attn")]
        first = statistics.mean(v for row in rows for v in row[:4])
        rest = statistics.mean(v for row in rows for v in row[4:])
        tops = ", ".join(str(max(range(len(row)), key=row.__getitem__) + 1) for row in rows)
        lines.append(f"| {run} | {first:.3f} | {rest:.3f} | {tops} |")
    pal_rows = []
    for run in ("bert-pal-s1", "bert-pal-p-s1"):
        d = read_json(os.path.join(analysis_dir, f"heads-{run}", "importance.json"))
        if not d:
            continue
        pal = [row for name, row in zip(d["layers"], d["scores"]) if ".pal." in name]
        if pal:
            pal_rows.append(f"| {run} | {statistics.mean(v for row in pal for v in row):.3g} | "
                            f"{max(v for row in pal for v in row):.3g} |")
    if pal_rows:
        lines += ["", "Fig. 4: the importance of the PAL heads (first-order Taylor, not normalised, so the two models "
                  "compare) without and with the patterns injected in them; the seed finds the patterned PAL heads two "
                  "orders of magnitude more important.", "",
                  "| model | mean PAL head importance | largest |", "|---|---|---|"] + pal_rows
    lines += ["", "Global relevance GR(P, h) (Eq. 1) of each pattern over every head of the vanilla models "
              "(`strata analyze patterns`): mean and std over the 48 heads, the best head, and whether a head "
              "lies more than 3 std above the mean (the seed's rule for keeping a pattern; where the std is "
              "tiny, as in attention that is nearly uniform, the rule fires on noise).", "",
              "| model | pattern | mean GR | std | best head (layer, head) | best GR | kept |", "|---|---|---|---|---|---|---|"]
    for run in ("ext-6x8-s1", "seg-6x8-s1"):
        d = read_json(os.path.join(analysis_dir, f"patterns-{run}", "relevance.json"))
        if not d:
            continue
        for p in d["patterns"]:
            if run.startswith("ext") and p["name"] == "intra_context":
                continue  # an extractive input is one segment: GR is 1 for every head
            best = p["top"][0] if p["top"] else {"layer": -1, "head": -1, "value": float("nan")}
            lines.append(f"| {run} | {p['name']} | {p['mean']:.4f} | {p['std']:.4f} | "
                         f"({best['layer'] + 1}, {best['head'] + 1}) | {best['value']:.4f} | "
                         f"{'yes' if p['kept'] else 'no'} |")
    lines += top3_lines(analysis_dir)
    lines += agreement_lines(analysis_dir)
    links = copy_figures(analysis_dir, report_path)
    if links:
        lines += ["", "Heatmaps (layers × heads, the first layer on top): " + ", ".join(links) + "."]
    return lines


def extractive_table(rows, peers, systems, tag, describe_rows=True):
    lines = ["| system | patterned heads | ρ | R-1 | R-2 | R-L | valid loss | parameters | train min | seeds |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for s in systems:
        if s not in rows:
            continue
        runs = rows[s]
        lines.append(f"| {s} | {heads_of(s)} | {statistics.mean(r['rho'] for r in runs):.2f} | "
                     + " | ".join(column(runs, f"{tag}_{m}") for m in ROUGE)
                     + f" | {column(runs, 'valid_loss', 3)} | {runs[0]['parameters']:,} | "
                     f"{statistics.mean(r['train_seconds'] for r in runs) / 60:.1f} | {len(runs)} |")
    k = 1 if tag == "top1" else 3
    for peer, what in (("lead", f"lead-{k} (the first {'sentence' if k == 1 else f'{k} sentences'})"),
                       ("oracle", "oracle (≤ 3 sentences)")):
        p = peers.get(f"{tag}_{peer}")
        if p:
            lines.append(f"| *{what}* | | | {p['rouge1']:.2f} | {p['rouge2']:.2f} | {p['rougeL']:.2f} | | | | |")
    return lines


def delta_table(rows, systems, base, keys, names, digits):
    lines = ["| patterns | ρ | " + " | ".join(f"Δ {n}" for n in names) + " | seeds |",
             "|" + "---|" * (len(names) + 3)]
    for s in systems:
        if s not in rows or base not in rows:
            continue
        d = [statistics.mean(r[k] for r in rows[s]) - statistics.mean(r[k] for r in rows[base]) for k in keys]
        lines.append(f"| {heads_of(s)} | {statistics.mean(r['rho'] for r in rows[s]):.2f} | "
                     + " | ".join(f"{v:+.{digits}f}" for v in d) + f" | {len(rows[s])} |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--analysis", help="the analyses' directory (bench/seed003.sh writes OUT/analysis)")
    ap.add_argument("--bert", help="the PAL study's masked-LM encoder (a run directory)")
    ap.add_argument("--systems", required=True)
    ap.add_argument("--strata", required=True)
    ap.add_argument("--minutes", type=int, default=0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    systems = args.systems.split()
    rows, peers = load(args.runs, systems)
    if not rows:
        sys.exit(f"{args.runs}: no finished runs")
    describe = {}
    for runs in rows.values():
        recipe = runs[0]["recipe"]
        line = subprocess.run([args.strata, "recipes", "show", recipe], capture_output=True, text=True).stdout
        describe[recipe] = line.splitlines()[0].split(": ", 1)[-1].replace("|", "\\|") if line else ""
    with open(args.config) as f:
        config = f.read()
    settings = tomllib.loads(config)
    train = settings["train"]

    main_ext = [s for s in systems if s.startswith("ext-") and heads_of(s)[0].isdigit()]
    ablation_ext = [s for s in systems if s.startswith("ext-6x8-") and not heads_of(s)[0].isdigit()]
    main_seg = [s for s in systems if s.startswith("seg-") and heads_of(s)[0].isdigit()]
    ablation_seg = [s for s in systems if s.startswith("seg-6x8-") and not heads_of(s)[0].isdigit()]
    pal = [s for s in systems if s.startswith("bert-")]
    any_run = next(iter(rows.values()))[0]

    lines = ["# Seed 003 (patterns) in miniature: extractive summarisation and topic segmentation of man pages", "",
             "Generated by `bench/seed003.sh` (do not edit by hand; rerun it). "
             f"This invocation: {args.minutes} minutes on this machine (runs already scored are not redone); the "
             f"runs on this page took {run_minutes(r for runs in rows.values() for r in runs):.0f} minutes of "
             "training and scoring, one thread each, two at a time.", "",
             "Every system but the PAL study's is a small encoder trained from scratch with the settings at the end; "
             "a recipe picks the task and the patterns injected into its heads (matching token and "
             "intra-sentence/context as masks, previous and next token as fixed heads, seed 003 §4.3.1). ρ = 1 − "
             "|M|/N² of the self-attention, mean over layers, heads and 200 training examples (§4.3.2). Mean ± sample "
             "std over seeds; one seed shows no spread and takes no verdict.", "",
             "## Scale, beside the seed's", "",
             "| | here | seed 003 |", "|---|---|---|",
             f"| models | 6 layers, d {settings['model']['d_model']} × {settings['model']['heads']} heads or d 96 × 12 "
             f"heads, from scratch (about {any_run['parameters'] / 1e6:.1f}M parameters) | 6 layers × 8 or 12 heads "
             "from scratch (and with BERT embeddings); BERT-base with PALs |",
             f"| extractive input | {settings['data']['max_source_tokens']} tokens of a man page; the reference is "
             "its NAME line | CNN/DM and NYT-50 articles (512 tokens); their highlights |",
             f"| segmentation input | {settings['segment']['context_tokens']} tokens each side of a candidate, "
             f"{settings['segment']['max_candidates']} candidates per page | 128 each side; WikiSection, Wiki-727K |",
             f"| training | {train['max_steps']} steps of at most {train['max_tokens']:,} tokens "
             f"(≤ {train['max_steps'] * train['max_tokens'] / 1e6:.1f}M tokens) | 50,000 steps (summaries), 5 epochs "
             "of WikiSection |", ""]

    lines += ["## Table 1 in miniature: extractive summarisation (top-1 sentence)", "",
              "The man page's one-line NAME description is the reference; sentences are labelled by a greedy ROUGE "
              "oracle (≤ 3 sentences). Test split, ROUGE F1 ×100 (stemmed) of the top sentence. Valid loss: the lowest validation cross-entropy per sentence.", ""]
    lines += extractive_table(rows, peers, main_ext, "top1")
    seg_runs = [s for s in main_seg + ablation_seg if s in rows]
    lines += ["", "## Table 1 in miniature: topic segmentation (Cross-Segment, boundaries = section breaks)", ""]
    if "candidates" in peers:
        c = peers["candidates"]
        lines += [f"Test split: {c['candidates']:,} candidate boundaries, {c['boundaries']:,} true "
                  f"({100 * c['boundaries'] / max(c['candidates'], 1):.1f} %). P/R/F1 at 0.5 (the two-class argmax), "
                  "and F1 at the threshold that maximises F1 on the validation split (`strata segment --tune-on`), "
                  "chosen per run.", ""]
    lines += ["| system | patterned heads | ρ | precision | recall | F1 | tuned threshold | F1, tuned | valid loss | "
              "train min | seeds |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in main_seg:
        if s not in rows:
            continue
        runs = rows[s]
        lines.append(f"| {s} | {heads_of(s)} | {statistics.mean(r['rho'] for r in runs):.2f} | "
                     + " | ".join(column(runs, m, 3) for m in BOUNDARY)
                     + f" | {column(runs, 'threshold', 3)} | {column(runs, 'tuned_f1', 3)} | "
                     f"{column(runs, 'valid_loss', 3)} | {statistics.mean(r['train_seconds'] for r in runs) / 60:.1f} | "
                     f"{len(runs)} |")
    for peer, what in (("all_boundaries", "every candidate a boundary"), ("random_base_rate", "random at the base rate")):
        if peer in peers:
            p = peers[peer]
            lines.append(f"| *{what}* | | | {p['precision']:.3f} | {p['recall']:.3f} | {p['f1']:.3f} | | | | | |")
    all_f1 = peers.get("all_boundaries", {}).get("f1", 0)
    below = [s for s in seg_runs if statistics.mean(r["tuned_f1"] for r in rows[s]) <= all_f1]
    if below:
        lines += ["", f"**Below the trivial baseline:** {', '.join(below)} score no higher F1, even at the tuned "
                  "threshold, than calling every candidate a boundary."]
    below_at_half = [s for s in seg_runs if s not in below and statistics.mean(r["f1"] for r in rows[s]) <= all_f1]
    if below_at_half:
        lines += ["", f"At 0.5, {', '.join(below_at_half)} score no higher F1 than calling every candidate a "
                  "boundary (the two-class argmax undercalls the rare class); at their validation-tuned thresholds "
                  "they are above it."]

    lines += ["", "## Table 2 in miniature: which patterns help (6 × 8, extractive), relative to vanilla", "",
              "One head per pattern (m = matching token, i = intra-sentence, p = previous + next token); the four "
              "patterns together are the 4/8 row above.", ""]
    lines += delta_table(rows, ablation_ext + ["ext-6x8-p4"], "ext-6x8", [f"top1_{m}" for m in ROUGE] + ["valid_loss"],
                         ["R-1", "R-2", "R-L", "valid loss"], 2)
    lines += ["", "## Table 7 in miniature: which patterns help (6 × 8, segmentation), relative to vanilla", "",
              "i = intra-context here.", ""]
    lines += delta_table(rows, ablation_seg + ["seg-6x8-p4"], "seg-6x8", ["precision", "recall", "f1", "tuned_f1"],
                         ["P", "R", "F1", "F1 tuned"], 3)

    lines += ["", "## Tables 4 and 5 in miniature: the top 3 sentences, without and with trigram blocking", "",
              "Blocking skips a sentence that shares a word trigram with one already selected, so it cannot change "
              "a one-sentence extract; as the seed's CNN/DM setting, these rows take the top 3 (which the one-line "
              "references penalise in precision).", "", "Without blocking:", ""]
    lines += extractive_table(rows, peers, main_ext + ablation_ext, "top3")
    lines += ["", "With trigram blocking:", ""]
    lines += extractive_table(rows, peers, main_ext + ablation_ext, "top3-trigram")

    if any(s in rows for s in pal):
        bert = read_json(os.path.join(args.bert, "done")) if args.bert else None
        base_text = ""
        if args.bert and os.path.isdir(args.bert):
            with open(os.path.join(args.bert, "config.toml"), "rb") as f:
                steps = tomllib.load(f)["train"]["max_steps"]
            base_text = (f" The encoder was pretrained here with a masked-LM objective ({steps:,} steps on the training "
                         f"pages, best valid loss {best_valid_loss(os.path.join(args.bert, 'metrics.jsonl')):.3f}"
                         + (f", {bert / 60:.0f} minutes" if isinstance(bert, (int, float)) else "") + ").")
        lines += ["", "## Tables 3 and 6 in miniature: PALs on a pretrained encoder", "",
                  "bert-ext fine-tunes the whole encoder (BERTSum's setting); bert-pal adds a PAL (256 dims, 4 heads) "
                  "beside every layer and trains it with the encoder, as the seed does; bert-pal-p injects the four "
                  "patterns into the PAL heads." + base_text, "",
                  "The top sentence (Table 3):", ""]
        lines += extractive_table(rows, peers, pal, "top1")
        lines += ["", "The top 3 with trigram blocking (Table 6):", ""]
        lines += extractive_table(rows, peers, pal, "top3-trigram")

    lines += ["", "## The seed's findings at this scale", "",
              "Each claim is a paired bootstrap over the test documents (2,000 resamples). Extractive: per document, "
              "a system's ROUGE F of its top sentence averaged over its seeds. Segmentation: the documents are "
              "resampled with their candidates and each seed's corpus F1 recomputed, then averaged over seeds. Δ is "
              "the difference with its 95 % interval and the two-sided p-value, uncorrected for the number of "
              "claims. A claim *holds* when Δ points its way with p < 0.05 and both sides ran at least two seeds.", ""]
    for a, b, text in EXTRACTIVE_CLAIMS:
        lines += claim_lines(rows, {}, a, b, text, metrics=("rouge1", "rougeL"), key="docs_top1")
    for a, b, text in SEGMENTATION_CLAIMS:
        lines += segmentation_claim(rows, a, b, text)
    lines += analysis_section(args.analysis, args.out)
    lines += ["", "## What was not run, and why", "",
              "- CNN/DM, NYT-50, WikiSection and Wiki-727K are not in Debian; man pages stand in for both tasks.",
              "- The 6 × 12 rows with BERT embeddings: no pretrained BERT here; the PAL study's encoder is pretrained "
              "on the man pages themselves, far smaller than BERT-base.",
              "- The top-3 checkpoints' average (the seed's reporting): each run reports its best checkpoint by "
              "validation loss."]
    short = [f"{s} ({len(rows[s])})" for s in systems if s in rows and len(rows[s]) < 3]
    if short:
        lines.append(f"- Fewer than 3 seeds: {', '.join(short)}.")
    lines += ["", "## Settings", "", "`configs/seed003.toml`, with `train.seed` = each seed and `threads = 1` "
              "(two runs side by side on 2 cores); the 6 × 12 systems add `model.heads=12 model.d_model=96`; the "
              "PAL study's runs start from the masked-LM encoder (`--base`, its classifier left out). Recipes:", ""]
    for recipe in sorted(describe):
        lines.append(f"- `{recipe}`: {describe[recipe]}")
    lines += ["", "```toml", config.strip(), "```", ""]
    write_atomic(args.out, lines)


if __name__ == "__main__":
    main()
