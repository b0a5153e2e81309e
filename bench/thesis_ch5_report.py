"""docs/results/thesis-ch5.md from the runs of bench/thesis-ch5.sh: Table 5.1 in miniature
(test perplexity by system and corpus, beside a unigram model's), paired bootstraps of the
per-token losses against SLIDE (over chunks of 256 tokens: each run's chunks.json, made by
bench/thesis_ch5_text.py), Fig. 5.3's length generalisation and Fig. 5.4's layer timing, with
the thesis's findings checked one by one."""
import argparse
import functools
import glob
import json
import math
import os
import statistics
import tomllib

from report_common import fmt_seeds, paired_bootstrap, write_atomic

THESIS_TABLE_5_1 = {  # perplexity on PG19 / arXiv / GitHub (thesis Table 5.1)
    "slide": (12.12, 2.69, 2.28), "xl": (11.96, 2.48, 2.01), "brect": (11.55, 2.36, 2.04), "sh-s4d": (11.57, 2.51, 2.14), "mh-s4d": (11.60, 2.52, 2.15),
    "mf-s4d": (11.63, 2.48, 2.07), "sh-unstruct": (11.52, 2.49, 2.09), "mf-unstruct": (11.56, 2.44, 2.03),
}
CORPUS_COLUMN = {"books": 0, "markup": 1, "code": 2}  # which thesis corpus each stands in for
# Pairs of Table 5.1's rows whose order the thesis discusses: MF against SH (SH wins on PG19, MF
# on arXiv and GitHub), the unstructured kernel against S4D, MH against SH, BRecT against XL.
# The direction each finding expects is read from THESIS_TABLE_5_1's column for the corpus.
# Tables 5.2-5.4 (PG19 perplexity; thesis 12 layers, ours 4): what each miniature row stands for.
ABLATIONS = {
    "t52-at0": ("5.2", "one BST layer, at 0 (of 0-3)"), "t52-at1": ("5.2", "one BST layer, at 1"),
    "t52-at2": ("5.2", "one BST layer, at 2"), "t52-at3": ("5.2", "one BST layer, at 3"),
    "t53-3layers": ("5.3", "three BST layers, at 1, 2, 3"), "t53-4layers": ("5.3", "four BST layers, at 0-3"),
    "t54-n8": ("5.4", "N = 8 states"), "t54-n32": ("5.4", "N = 32 states"), "t54-n64": ("5.4", "N = 64 states"),
}
THESIS_ABLATIONS = {
    "5.2": "a single BST layer at 3/7/9/12 of 12: 12.41/11.92/11.88/12.03 (the lowest is the worst)",
    "5.3": "2/3/4/5 BST layers: 11.69/11.57/11.21/11.20 (more layers help, then level off), +3.5 % step time a layer",
    "5.4": "N = 8/16/32/64: 11.95/11.57/11.55/11.54 (8 is worse, past 16 flat), step time ×0.7/1.0/1.8/3.2",
}
# Each checked ablation finding: (lower, higher, the thesis's claim).
ABLATION_FINDINGS = [
    ("t52-at2", "t52-at0", "Table 5.2: a single BST layer near 2/3 depth beats one at the bottom"),
    ("t53-4layers", "t52-at1", "Table 5.3: four BST layers beat one"),
    ("sh-s4d", "t54-n8", "Table 5.4: N = 16 beats N = 8"),
]
PAIRS = [("mf-s4d", "sh-s4d"), ("mf-unstruct", "sh-unstruct"), ("sh-unstruct", "sh-s4d"),
         ("mf-unstruct", "mf-s4d"), ("mh-s4d", "sh-s4d"), ("brect", "xl")]


@functools.lru_cache(maxsize=None)
def chunks_of(run):
    """A run's chunks.json, read once: every comparison of the page reads the same runs again."""
    with open(os.path.join(run, "chunks.json")) as f:
        return json.load(f)


def scored(runs, name):
    """The chunks.json of those runs that have `name` scores."""
    return [chunks_of(r) for r in runs if name in chunks_of(r)["logprob_sums"]]


def chunk_losses(runs, name):
    """Per chunk of the test text, the mean loss (nats/token) of a system's seeds' summed
    log-probabilities in its `name` scores (the seeds score the same text); None when no run
    has them."""
    kept = scored(runs, name)
    if not kept:
        return None
    size, tokens = kept[0]["chunk"], kept[0]["tokens"]
    sums = [statistics.mean(k["logprob_sums"][name][c] for k in kept) for c in range(len(kept[0]["logprob_sums"][name]))]
    return [-total / min(size, tokens - c * size) for c, total in enumerate(sums)]


def mean_loss(runs, name):
    """A system's loss (nats/token) on the whole test text in its `name` scores, its seeds'
    log-probabilities averaged; nan when no run has them."""
    kept = scored(runs, name)
    if not kept:
        return float("nan")
    return -statistics.mean(sum(k["logprob_sums"][name]) for k in kept) / kept[0]["tokens"]


def seed_differences(runs, reference_runs, name="scores.jsonl", reference_name="scores.jsonl"):
    """Each seed's mean per-token loss (in its `name` scores) minus the reference's at the same seed."""
    by_seed = {os.path.basename(r).rsplit("-s", 1)[1]: r for r in reference_runs}
    return [mean_loss([r], name) - mean_loss([by_seed[seed]], reference_name)
            for r in runs for seed in [os.path.basename(r).rsplit("-s", 1)[1]] if seed in by_seed]


def compare(runs, reference_runs, name="scores.jsonl", reference_name="scores.jsonl"):
    """(Δ mean loss, its 95 % interval, p, chunks, Δ per seed) of `runs` against `reference_runs`:
    the paired bootstrap over chunks of the seeds' mean losses, and each seed against the same
    seed."""
    mine, theirs = chunk_losses(runs, name), chunk_losses(reference_runs, reference_name)
    diff, interval, pval = paired_bootstrap(mine, theirs)
    return diff, interval, pval, len(mine), seed_differences(runs, reference_runs, name, reference_name)


def effect(diff, interval, pval):
    """"+0.0016 [-0.0091, +0.0124], p = 0.773": a loss difference, its 95 % interval and p."""
    # 2,000 resamples put p's floor at 2 / 2,001: below 0.001, which "= 0.001" would misstate.
    p = "p < 0.001" if pval < 0.001 else f"p = {pval:.3f}"
    return f"{diff:+.4f} [{interval[0]:+.4f}, {interval[1]:+.4f}], {p}"


def best_at_longest(corpus, runs, long_losses, longest):
    """Fig. 5.3's "SH:S4 is best at the longest length": sh-s4d against the best other system
    in windows of `longest` tokens, paired."""
    others = {s: v for s, v in long_losses.items() if s != "sh-s4d" and not math.isnan(v)}
    if "sh-s4d" not in long_losses or not others:
        return []
    rival = min(others, key=others.get)
    name = f"scores-w{longest}.jsonl"
    diff, interval, pval, _, per_seed = compare(runs["sh-s4d"], runs[rival], name, name)
    return [f"- {corpus}: sh-s4d has the lowest loss in windows of {longest} (Fig. 5.3: SH:S4-L is best at 65k on "
            f"every corpus); against the best other system there, {rival}: Δ loss (nats/token) "
            f"{effect(diff, interval, pval)}: **{verdict(diff, pval, per_seed)}**"]


def verdict(diff, pval, per_seed):
    """Holds when the seeds' mean is lower (diff < 0) at p < 0.05 and every seed agrees; one
    seed takes no verdict."""
    if len(per_seed) < 2:
        return "one seed: no verdict"
    if pval >= 0.05:
        return "not established (p >= 0.05)"
    if len({d < 0 for d in per_seed}) != 1:
        return "not established (the seeds disagree)"
    return "holds" if diff < 0 else "does not hold"


def finished_runs(base, system):
    return [r for r in sorted(glob.glob(os.path.join(base, "runs", f"{system}-s*")))
            if os.path.exists(os.path.join(r, "result.json"))]


def seed_of(run):
    return json.load(open(os.path.join(run, "result.json")))["seed"]


def train_seconds(run):
    return json.load(open(os.path.join(run, "result.json")))["train_seconds"]


def fmt_ratios(ratios):
    return f"{statistics.mean(ratios):.2f}" if ratios else "-"


def machines(rows, what="runs"):
    """How many of the rows (runs, timings) each machine made: timings compare rows of one machine only."""
    count = {}
    for r in rows:
        count[r["machine"]] = count.get(r["machine"], 0) + 1
    return "; ".join(f"{n} {what} on {m}" for m, n in sorted(count.items(), key=lambda x: -x[1]))


def ablation_section(out_dir, corpus, names, findings_out):
    """Tables 5.2-5.4 in miniature on the first corpus, each row against sh-s4d, with the thesis's
    numbers beside them; appends the checked findings to findings_out."""
    base = os.path.join(out_dir, corpus)
    reference = finished_runs(base, "sh-s4d")
    runs = {n: finished_runs(base, n) for n in names}
    if not reference or not any(runs.values()):
        return []
    ref_seconds = {seed_of(r): train_seconds(r) for r in reference}
    out = ["## Ablations (Tables 5.2-5.4)", "",
           f"On {corpus}, BST:SH:S4D changed in one setting against sh-s4d (BST layers at 1 and 3, N = 16); the "
           "training time is a run's wall time over sh-s4d's of the same seed (trained on the same machine; two "
           "runs at a time, one thread each: a rough step-time ratio), the mean over seeds.", "",
           "| table | model | seeds | test perplexity | vs sh-s4d: Δ loss [95 % interval], p | training time / sh-s4d's |",
           "|---|---|---|---|---|---|"]
    for n in names:
        if not runs[n]:
            continue
        ppl = [json.load(open(os.path.join(r, "test.json")))["perplexity"] for r in runs[n]]
        diff, interval, pval, _, _ = compare(runs[n], reference)
        # Per seed, so that both runs of a ratio come from one machine (seeds may be kept from others).
        ratios = [train_seconds(r) / ref_seconds[seed_of(r)] for r in runs[n] if seed_of(r) in ref_seconds]
        table, what = ABLATIONS[n]
        out.append(f"| {table} | {n}: {what} | {len(ppl)} | {fmt_seeds(ppl)} | {effect(diff, interval, pval)} | "
                   f"{fmt_ratios(ratios)} |")
    out += [""] + [f"- Thesis Table {t}: {text}." for t, text in THESIS_ABLATIONS.items()] + [""]
    every = dict(runs, **{"sh-s4d": reference})
    for lower, higher, claim in ABLATION_FINDINGS:
        if every.get(lower) and every.get(higher):
            diff, interval, pval, _, per_seed = compare(every[lower], every[higher])
            findings_out.append(f"- {corpus}: {claim} ({lower} against {higher}): Δ loss (nats/token) "
                                f"{effect(diff, interval, pval)}: **{verdict(diff, pval, per_seed)}**")
    return out


def convergence(out_dir):
    """The range of the runs' last training loss beside the range of their test loss, per corpus."""
    parts = []
    for corpus in CORPUS_COLUMN:
        train, test = [], []
        for run in glob.glob(os.path.join(out_dir, corpus, "runs", "*", "result.json")):
            run = os.path.dirname(run)
            with open(os.path.join(run, "run", "metrics.jsonl")) as f:
                rows = [json.loads(x) for x in f if x.strip()]
            logged = [r["loss"] for r in rows if r.get("split") == "train"]
            if not logged:  # a run shorter than the logging interval (a smoke test)
                continue
            train.append(logged[-1])
            test.append(json.load(open(os.path.join(run, "test.json")))["loss"])
        if train:
            parts.append(f"{corpus}: {min(train):.1f}-{max(train):.1f} at the last step against "
                         f"{min(test):.1f}-{max(test):.1f} on the test text")
    return "; ".join(parts)


def not_run(out_dir):
    """The thesis's experiments this page lacks: what the runs on disk leave out, then what was never built."""
    out = []
    for corpus in CORPUS_COLUMN:
        base = os.path.join(out_dir, corpus)
        done = {s: len(finished_runs(base, s)) for s in THESIS_TABLE_5_1}
        if not any(done.values()):
            out.append(f"- The *{corpus}* corpus: no runs.")
            continue
        missing = [s for s, n in done.items() if n == 0]
        short = [f"{s} ({n})" for s, n in done.items() if 0 < n < 3]
        if missing:
            out.append(f"- {corpus}: Table 5.1 rows not run: {', '.join(missing)}.")
        if short:
            out.append(f"- {corpus}: rows with fewer than 3 seeds: {', '.join(short)}.")
    ablation_seeds = {(c, n): len(finished_runs(os.path.join(out_dir, c), n)) for c in CORPUS_COLUMN for n in ABLATIONS}
    if not any(ablation_seeds.values()):
        out.append("- Tables 5.2-5.4's ablations (`ABLATIONS=1` runs them: 27 runs on the first corpus).")
    short_ablations = [f"{c} {n} ({k})" for (c, n), k in ablation_seeds.items() if 0 < k < 3]
    if short_ablations:
        out.append("- Ablation rows with fewer than 3 seeds (`ABLATIONS=1` adds the rest): "
                   f"{', '.join(short_ablations)}.")
    out += ["- GSS-HYBRID and the large (-L) models of Table 5.1: no GSS layer is built; the large models are "
            "out of this machine's reach.",
            "- Table 5.5 (LRA) and its miniature, Fig. 5.4 right (perplexity against the training window) and "
            "Fig. 5.5 (scaling from 80M to 1.3B parameters).",
            "- BRecT's recurrent state carried from one training sequence to the next (the thesis's "
            "non-differentiable cache across segments): here it starts afresh in each sequence."]
    return out


def bst_cost_reading(cases):
    """What the layer timing says about BST's cost beyond its flops, from the numbers."""
    bst = [c for c in cases.values() if c["layer"].startswith("bst")]
    if not bst:
        return "No BST layer was timed."
    flops = [c["flops_ratio"] for c in bst]
    slower = sum(c["ratio"] > c["flops_ratio"] for c in bst)
    text = (f"BST's flops ratio to SLIDE is {min(flops):.2f}-{max(flops):.2f}; its time ratio exceeds it in {slower} "
            f"of {len(bst)} (layer, length) cases")
    if slower * 2 > len(bst):
        text += (": the SSM's FFTs, its complex kernel and the reads of its outputs run below the matrix "
                 "products' rate on this CPU, most of all for MH and MF, which run 8 and 32 filters over the whole "
                 "sequence (MF reads them at one position a block: the S4D state carried block to block would cost "
                 "O(L C N) instead; not done)")
    return text + "."


def generation_section(rows):
    """Cached generation against rerunning the sequence: the prompt's cost (read once either way) apart
    from the later steps', each a token of every beam, which is where a cache pays."""
    steps = {cache: sorted({r["steps"] for r in rows if r["cache"] == cache}) for cache in (True, False)}
    out = ["## Cached generation", "",
           f"`strata lm generate` (one thread, the run's decoding settings; {'/'.join(map(str, steps[True]))} steps "
           f"with the cache, {'/'.join(map(str, steps[False]))} without; {machines(rows, 'timings')}) after a prompt of the test text, with the "
           "model's cache and with `--no-cache` (the whole sequence again every step), timed after the runs with "
           "the machine otherwise quiet. The first step reads the prompt; the later steps' rate is what a cache "
           "changes. With the cache a SLIDE layer keeps the keys its next block reads; S4D carries its state by its "
           "recurrence (O(C N) a token); the unstructured filter has no recurrence and convolves every input again "
           "(O(L log L) a token).", "",
           "| system | prompt tokens | prompt and first step, s (cached / rerun) | later steps/s, cached | "
           "later steps/s, rerun | cache speed-up of the later steps |", "|---|---|---|---|---|---|"]
    by = {}
    for r in rows:
        by.setdefault(r["system"], {}).setdefault(r["prompt_tokens"], {})[r["cache"]] = r
    cached_rate = {}
    for system, lengths in sorted(by.items()):
        for tokens, v in sorted(lengths.items()):
            if True not in v or False not in v:
                continue
            c, r = v[True], v[False]
            cached_rate.setdefault(system, {})[tokens] = c["later_steps_per_second"]
            out.append(f"| {system} | {tokens} | {c['first_step_seconds']:.2f} / {r['first_step_seconds']:.2f} | "
                       f"{c['later_steps_per_second']:.1f} | {r['later_steps_per_second']:.2f} | "
                       f"{c['later_steps_per_second'] / r['later_steps_per_second']:.1f}× |")
    falls = []
    for system, rates in sorted(cached_rate.items()):
        if len(rates) > 1:
            short, long = min(rates), max(rates)
            falls.append(f"{system} {rates[long] / rates[short]:.2f}")
    if falls:
        out += ["", "A cached step's cost should not grow with what was read before (SLIDE: the last block's keys; "
                "S4D: a state of fixed size), where re-convolution's does. The cached later-step rate after the "
                "longest prompt over the rate after the shortest: " + ", ".join(falls) + ". The SSM rows are "
                "different models (SH with S4D, MF with the unstructured filter and 32 filters), so a gap between "
                "them mixes the context states' cost with the SSM's; S4D decoded by re-convolution was not timed."]
    return out + [""]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out-dir", required=True)
    p.add_argument("--corpora", required=True)
    p.add_argument("--systems", required=True)
    p.add_argument("--config", required=True)
    p.add_argument("--windows", required=True)
    p.add_argument("--ablations", default="")
    p.add_argument("--minutes", type=int, default=0)
    p.add_argument("--report", required=True)
    p.add_argument("--vocab", type=int, required=True, help="the tokenizer's vocabulary")
    p.add_argument("--train-bytes", type=int, required=True, help="the training text of each corpus, bytes")
    a = p.parse_args()
    with open(a.config, "rb") as f:
        config = tomllib.load(f)
    model, trained = config["model"], config["data"]["block_size"]  # every system trains at L = trained
    steps, batch = config["train"]["max_steps"], config["train"]["max_tokens"]
    systems, windows = a.systems.split(), [int(w) for w in a.windows.split()]
    results = [json.load(open(f)) for f in glob.glob(os.path.join(a.out_dir, "*", "runs", "*", "result.json"))]
    train_minutes = sum(r["train_seconds"] for r in results) / 60
    command = (f"CORPORA=\"{a.corpora}\" " + ("ABLATIONS=1 " if a.ablations else "")
               + "bench/thesis-ch5.sh")
    lines = ["# Thesis ch. 5: Block-State Transformer language models, in miniature", "",
             f"Made by `{command}` from `{a.config}` (two runs at a time, one thread each): {len(results)} runs "
             f"whose training took {train_minutes:.0f} minutes of one core in all; the script's last invocation "
             f"took {a.minutes} minutes. The same command regenerates it; runs are resumed. Runs kept from earlier "
             f"invocations may come from other machines: {machines(results)}.", "",
             "**Scale.** The thesis: 12 layers, D = 1024, trained at L = 4096 with W = 512 on PG19, arXiv and "
             f"GitHub (billions of tokens), BST layers at {{1, 7, 9}}. Here: {model['decoder_layers']} layers, "
             f"D = {model['d_model']}, L = {trained}, W = {model['bst_window']}, BST layers at "
             f"{{{model['bst_layers'].replace(',', ', ')}}}, byte-level BPE of {a.vocab:,} tokens, {steps} steps of "
             f"{batch:,} tokens ({steps * batch / 1e6:.1f}M tokens; {a.train_bytes / 1e6:.0f} MB of training text) "
             "on corpora built from this machine: *code* (`/usr/include` files concatenated along their paths, the thesis's own "
             "GitHub construction), *markup* (raw roff man pages, for arXiv) and *books* (rendered man pages and "
             "package docs, for PG19). XL is SLIDE's layer with a window of 4 W = 256 and no gradient through the "
             "previous window (the thesis's TRSF-XL:2048 beside SLIDE:512). BRecT (fixed gates, skip) has one "
             "recurrent layer of W = 64 state vectors at layer 2, updated block by block within a training "
             "sequence; unlike the thesis's, its state is not carried from one training sequence to the next. "
             "The unstructured filter (UNSTRUCT, the thesis's HYENA) is divided by the L1 norm of its taps over "
             "the training length (Hyena's normalisation; without it BST:SH trained far worse than SLIDE, "
             "docs/block-state.md); past the training length its MLP is read at t > 1 under a decay already at "
             "0.05 (slowest channel) to 2e-7 (fastest) of its start at t = 1, and is not renormalised.", ""]
    findings, length_findings, timing_findings, pair_findings, ablation_findings = [], [], [], [], []
    for corpus in a.corpora.split():
        base = os.path.join(a.out_dir, corpus)
        runs = {s: finished_runs(base, s) for s in systems}
        if not any(runs.values()):
            continue
        lines += [f"## {corpus}", ""]
        text = chunks_of(next(r for rs in runs.values() for r in rs))  # every run scores the same text
        uni = text["unigram_loss"]
        lines += [f"Test text: {text['tokens']} scored tokens. Unigram (fit on them): loss {uni:.3f}, perplexity "
                  f"{math.exp(uni):.1f}.", "",
                  "| system | seeds | parameters | test perplexity (mean ± std over seeds) | thesis (its corpus) | "
                  f"vs SLIDE: Δ loss of the seeds' mean log-probabilities [95 % interval], p (paired bootstrap over "
                  f"chunks of {text['chunk']} tokens, 2,000 resamples); Δ loss of each seed against SLIDE's same seed |",
                  "|---|---|---|---|---|---|"]
        stats = {}
        for s in systems:
            if not runs[s]:
                continue
            ppl = [json.load(open(os.path.join(r, "test.json")))["perplexity"] for r in runs[s]]
            params = json.load(open(os.path.join(runs[s][0], "result.json")))["parameters"]
            stats[s] = statistics.mean(ppl)
            versus = "-"
            if s != "slide" and runs.get("slide"):  # a finished run has its scores
                diff, interval, pval, n, per_seed = compare(runs[s], runs["slide"])
                versus = f"{effect(diff, interval, pval)} ({n} chunks); per seed " + \
                    ", ".join(f"{d:+.3f}" for d in per_seed)
                findings.append((corpus, s, diff, interval, pval, per_seed))
            thesis = THESIS_TABLE_5_1.get(s, ("-",) * 3)[CORPUS_COLUMN.get(corpus, 0)]
            lines.append(f"| {s} | {len(ppl)} | {params:,} | {fmt_seeds(ppl)} | {thesis} | {versus} |")
        for a_name, b_name in PAIRS:
            if runs.get(a_name) and runs.get(b_name):
                column = CORPUS_COLUMN.get(corpus, 0)
                ta, tb = THESIS_TABLE_5_1[a_name][column], THESIS_TABLE_5_1[b_name][column]
                lower, higher = (a_name, b_name) if ta < tb else (b_name, a_name)
                diff, interval, pval, _, per_seed = compare(runs[lower], runs[higher])
                pair_findings.append(
                    f"- {corpus}: {lower} has a lower test loss than {higher} (thesis {min(ta, tb)} against "
                    f"{max(ta, tb)}): Δ loss (nats/token) {effect(diff, interval, pval)}: "
                    f"**{verdict(diff, pval, per_seed)}**")
        learned = [s for s in stats if stats[s] < math.exp(uni)]
        lines += ["", f"Every system below the unigram's perplexity {math.exp(uni):.1f}: "
                  f"{'yes' if len(learned) == len(stats) else 'no: ' + ', '.join(s for s in stats if s not in learned)}.", ""]
        lines += ["### Length generalisation (Fig. 5.3)", "",
                  "Loss (nats/token) on the test text read in windows of w tokens, each starting afresh; trained "
                  f"at L = {trained}. One pass reads the whole text (the SSM's kernel generated at its length).", "",
                  "| system | " + " | ".join(f"w = {w}" for w in windows) + " | one pass |",
                  "|---|" + "---|" * (len(windows) + 1)]
        long_losses = {}
        for s in systems:
            if not runs[s]:
                continue
            cells, losses = [], {}
            for w, name in [(w, f"scores-w{w}.jsonl") for w in windows] + [(0, "scores.jsonl")]:
                losses[w] = mean_loss(runs[s], name)
                cells.append("-" if math.isnan(losses[w]) else f"{losses[w]:.3f}")
            lines.append(f"| {s} | " + " | ".join(cells) + " |")
            if trained in windows:
                long_name, trained_name = f"scores-w{max(windows)}.jsonl", f"scores-w{trained}.jsonl"
                rise, interval, pval, _, per_seed = compare(runs[s], runs[s], long_name, trained_name)
                rises = pval < 0.05 and rise > 0 and all(d > 0 for d in per_seed)
                length_findings.append(
                    f"- {corpus}: {s} read at {max(windows) // trained}× its training length (windows of "
                    f"{max(windows)}) against its own length: Δ loss (nats/token) {effect(rise, interval, pval)}: **"
                    + ("one seed: no verdict" if len(per_seed) < 2 else
                       "does not hold (the loss rises)" if rises else "holds (no significant rise)") + "**")
            long_losses[s] = losses.get(max(windows), float("nan"))
        length_findings += best_at_longest(corpus, runs, long_losses, max(windows))
        lines.append("")
    bench = os.path.join(a.out_dir, "bench-bst.json")
    if os.path.exists(bench):
        j = json.load(open(bench))
        lines += ["## Layer timing (Fig. 5.4, left)", "",
                  f"`strata bench bst`: one layer (d_model {j['d_model']}, {j['heads']} heads, W = {j['window']}, "
                  f"SSM {j['kernel']} N = {j['states']}), forward only, {j['threads']} threads on {j['cpu']}, median "
                  f"of {j['rounds']} rounds; ratio to SLIDE at the same length, measured in the same run.", "",
                  "| length | layer | ms | ratio to SLIDE | flops ratio |", "|---|---|---|---|---|"]
        for name, c in j["cases"].items():
            lines.append(f"| {name.split('@')[1]} | {c['layer']} | {c['median_ms']:.2f} | {c['ratio']:.3f} | "
                         f"{c['flops_ratio']:.3f} |")
            if name.endswith("@4096") and c["layer"] == "brect":
                timing_findings.append(
                    f"- BRecT at 4k tokens 15× slower than SLIDE (Fig. 5.4, on a GPU, where its block-by-block "
                    f"loop cannot run in parallel): {c['ratio']:.2f}× here: **does not hold** on 2 CPU cores, "
                    "where SLIDE's blocks do not run in parallel either and the loop's cost is its flops "
                    f"({c['flops_ratio']:.2f}× SLIDE's)")
            elif name.endswith("@4096") and c["layer"] != "slide":
                timing_findings.append(
                    f"- {c['layer']} at 4k tokens within 2× of SLIDE's forward time (Fig. 5.4: \"BST stays within "
                    f"2×\"): {c['ratio']:.2f}×: **" + ("holds" if c["ratio"] <= 2 else "does not hold") + "**")
        lines += ["", bst_cost_reading(j["cases"]), ""]
    lines += ablation_section(a.out_dir, a.corpora.split()[0], a.ablations.split(), findings_out=ablation_findings)
    long_bench = os.path.join(a.out_dir, "bench-bst-long.json")
    if os.path.exists(long_bench):
        j = json.load(open(long_bench))
        lines += ["## A million tokens", "",
                  f"`strata bench bst-long`: one training step (forward + backward, a fixed random output gradient) "
                  f"of {j['layers']} layers (d_model {j['d_model']}, {j['heads']} heads, W = {j['window']}; BST:SH with "
                  f"S4D at the odd layers) at L = {j['length']:,} tokens, batch 1, fp32, {j['threads']} threads on {j['cpu']}, "
                  f"median of {j['rounds']} rounds, attention and feed-forward recomputed in spans of {j['span']} "
                  "tokens; beside a stack of SLIDE layers alone, in the same run. Peak memory is the whole process's.",
                  "", "| stack | s | tokens/s | ratio to SLIDE | peak MB | under 2 GB |", "|---|---|---|---|---|---|"]
        for name, c in j["cases"].items():
            lines.append(f"| {name} | {c['median_ms'] / 1000:.1f} | {c['tokens_per_s']:,.0f} | {c['ratio']:.3f} | "
                         f"{c['peak_rss_mb']:,.0f} | {'yes' if c['under_2_gb'] else 'no'} |")
        c = j["cases"].get("bst")
        if c:
            timing_findings.append(
                f"- A BST stack trains at {j['length']:,} tokens in under 2 GB (the issue's headline): peak "
                f"{c['peak_rss_mb']:,.0f} MB: **" + ("holds" if c["under_2_gb"] else "does not hold") + "**")
        lines.append("")
    generated = os.path.join(a.out_dir, "generate.jsonl")
    if os.path.exists(generated):
        lines += generation_section([json.loads(x) for x in open(generated) if x.strip()])
    lines += ["## The thesis's findings, checked", "",
              "Read these at their scale: 1.2M training tokens leave every model far from converged (training "
              f"loss {convergence(a.out_dir)}), where the thesis compares converged models trained "
              "on billions of tokens; a verdict here is about small models early in training.", ""]
    for corpus, s, diff, interval, pval, per_seed in findings:
        lines.append(f"- {corpus}: {s} has a lower test loss than SLIDE (Table 5.1): Δ loss (nats/token) "
                     f"{effect(diff, interval, pval)}: **{verdict(diff, pval, per_seed)}**")
    if pair_findings:
        lines += ["", "Between Table 5.1's other rows (the thesis's order on the corpus this one stands in for):"]
        lines += pair_findings
    if ablation_findings:
        lines += ["", "Tables 5.2-5.4:"] + ablation_findings
    if timing_findings:
        lines += [""] + timing_findings
    if length_findings:
        lines += ["", "Fig. 5.3 (a BST model keeps its perplexity far past its training length; SLIDE reads "
                  "only 2W tokens back, so longer windows cannot hurt it):"] + length_findings
    lines += ["", "## Not run here", ""] + not_run(a.out_dir)
    write_atomic(a.report, lines + [""])


if __name__ == "__main__":
    main()
