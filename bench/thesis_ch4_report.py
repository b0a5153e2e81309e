"""docs/results/thesis-ch4.md from the runs of bench/thesis-ch4.sh: NoExtra, WithContext and the
chain (with the user's answers corrupted at 0/10/30/50 %) on man-page section ambiguity, mean ±
std over seeds, paired bootstraps per seed (the difference, its 95 % interval and p), the most-frequent-sense baseline the systems
must beat, and the thesis's claims checked one by one."""
import argparse
import glob
import json
import math
import os
import random
import re
from collections import Counter, defaultdict

from report_common import fmt_seeds, mean_std, read_jsonl, write_atomic

SYSTEMS = ["no_extra", "with_context", "chain", "chain-corrupt10", "chain-corrupt30", "chain-corrupt50", "chain-gold"]
NAMES = {"no_extra": "NoExtra (S → A)", "with_context": "WithContext (S, C → A)", "chain": "Chain (S → Q; S, C, Q → U; S, Q, U → A)",
         "chain-corrupt10": "Chain, 10 % of answers wrong", "chain-corrupt30": "Chain, 30 % wrong",
         "chain-corrupt50": "Chain, 50 % wrong", "chain-gold": "Chain, perfect user (the known section)"}
ROLES = ["no_extra", "with_context", "translator", "user"]  # the models bench/thesis-ch4.sh trains
METRICS = [("exact_match", "exact match (the right NAME line)"), ("chrf", "chrF"), ("bleu", "BLEU")]


def most_frequent_sense(out_dir, language):
    """Per name, the section most often meant in training; per test mention (by id) whether
    that section is the meant one and whether its NAME line is the reference: what a system
    that ignores the context can reach."""
    counts = defaultdict(Counter)
    targets = {}
    for r in read_jsonl(os.path.join(out_dir, "data", "train.jsonl")):
        counts[r["name"]][r["section"]] += 1
        if language in r.get("targets", {}):
            targets[(r["name"], r["section"])] = r["targets"][language]
    right = {}
    for r in read_jsonl(os.path.join(out_dir, "test.jsonl")):
        guess = counts[r["name"]].most_common(1)[0][0] if counts[r["name"]] else None
        right[r["id"]] = (guess == r["section"], targets.get((r["name"], guess)) == r["targets"][language])
    return right


def run_scale(out_dir, seeds):
    """What the role models were, from their runs: layers, d_model, vocabulary, parameters, the batch budget, and
    per role the training examples (a block each) and the epoch (from 1) its last step was in (the first seed's)."""
    runs = os.path.join(out_dir, "runs")
    checkpoint = sorted(glob.glob(os.path.join(runs, f"no_extra-s{seeds[0]}", "checkpoints", "*", "config.json")))[0]
    with open(checkpoint) as f:
        saved = json.load(f)
    model, run = saved["model"], saved["run"]
    params, blocks, epochs = set(), {}, {}
    for role in ROLES:
        with open(os.path.join(runs, f"{role}-s{seeds[0]}.log")) as f:
            log = f.read()
        params.add(int(re.search(r"all params: ([0-9,]+)", log).group(1).replace(",", "")))
        blocks[role] = int(re.search(r"data: (\d+) training", log).group(1))
        rows = read_jsonl(os.path.join(runs, f"{role}-s{seeds[0]}", "metrics.jsonl"))
        epochs[role] = max(r.get("epoch", 0) for r in rows) + 1
    return {"layers": model["decoder_layers"], "d_model": model["d_model"], "vocab": model["vocab_size"],
            "parameters": sorted(params), "tokens": run["train"]["max_tokens"],
            "block": run["data"]["block_size"], "blocks": blocks, "epochs": epochs}


def exact_by_id(chain_dir, system):
    """Per test id, 1 when the system's output is the reference exactly, else 0."""
    path = os.path.join(chain_dir, "outputs", f"{system}.jsonl")
    return {o["id"]: float(o["translation"].split() == o["reference"].split()) for o in read_jsonl(path)}


def paired_bootstrap(a, b, resamples=1000, seed=1):
    """Koehn's paired bootstrap over examples, as `strata chain` computes its comparisons:
    100 (mean(a) - mean(b)), the 95 % percentile interval of that difference over the resamples,
    and the share of resamples in which the full set's winner does not win (a tie counts as not
    winning)."""
    n = len(a)
    rng = random.Random(seed)
    diff = (sum(a) - sum(b)) / n
    lose = 0
    means = []
    for _ in range(resamples):
        idx = [rng.randrange(n) for _ in range(n)]
        d = sum(a[i] - b[i] for i in idx)
        lose += (d <= 0) if diff > 0 else (d >= 0)
        means.append(100 * d / n)
    return 100 * diff, (percentile(means, 0.025), percentile(means, 0.975)), lose / resamples


def percentile(values, q):
    """numpy.percentile(values, 100 q) with its default linear interpolation, as strata's
    intervals (eval/bootstrap.h)."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    below = int(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def fmt_p(p, resamples=1000):
    """p to three places; no resample against is "< 0.001" (below one in the resamples), not 0."""
    return f"< {1 / resamples:.3g}" if p == 0 else f"{p:.3f}"


def effect(d, interval, p):
    """"+11.30 [+5.02, +17.57] (0.001)": a difference, its interval and p."""
    return f"{d:+.2f} [{interval[0]:+.2f}, {interval[1]:+.2f}] ({fmt_p(p)})"


def sense_lines(out_dir, language):
    """(name, section) -> the NAME line in `language`, from every split: what each sense of a
    name renders as."""
    lines = {}
    for split in ["train", "validation", "test"]:
        for r in read_jsonl(os.path.join(out_dir, "data", f"{split}.jsonl")):
            if language in r.get("targets", {}):
                lines[(r["name"], r["section"])] = r["targets"][language]
    return lines


def sense_analysis(out_dir, chain_dir, system, language, lines):
    """How a system's outputs resolve the ambiguity: the share that is the NAME line of some
    sense of the mentioned name (well formed), of the meant sense (right sense), and of the
    meant sense among the well-formed ones."""
    test = {r["id"]: r for r in read_jsonl(os.path.join(out_dir, "test.jsonl"))}
    path = os.path.join(chain_dir, "outputs", f"{system}.jsonl")
    if not os.path.exists(path):
        return None
    formed = right = total = 0
    for o in read_jsonl(path):
        r = test[o["id"]]
        senses = {lines[(r["name"], k)]: k for k in r["sections"] if (r["name"], k) in lines}
        total += 1
        if o["translation"] in senses:
            formed += 1
            right += senses[o["translation"]] == r["section"]
    return 100 * formed / total, 100 * right / total, 100 * right / formed if formed else float("nan")


def relation(x, y):
    """How x compares with y, in points: within one point is level."""
    return "level with" if abs(x - y) < 1 else "above" if x > y else "below"


def user_overfits(out_dir, seeds):
    """Whether, in every seed, the user's validation loss was lowest before its last evaluation."""
    rises = []
    for s in seeds:
        path = os.path.join(out_dir, "runs", f"user-s{s}", "metrics.jsonl")
        valid = sorted((r["step"], r["loss"]) for r in read_jsonl(path) if r.get("split") == "valid") if os.path.exists(path) else []
        rises.append(len(valid) > 1 and min(valid, key=lambda x: x[1])[0] < valid[-1][0])
    return len(rises) > 1 and all(rises)


def reading(exact, sense_means, user_right, majority, overfits, against):
    """The page's reading of its own numbers: each sentence says what the numbers show, whichever
    way they fall."""
    def beats(key):  # better than the most-frequent sense in every seed, p < 0.05 in each
        pairs = against.get(key, [])
        return len(pairs) > 1 and all(d > 0 and p < 0.05 for d, p in pairs)

    weak_user = exact["chain-gold"] > exact["chain"] and user_right < majority
    out = [f"- **{'The user is the chain' + chr(39) + 's weak link' if weak_user else 'The user'}.** With a perfect user "
           f"the chain writes the right line for {exact['chain-gold']:.1f} % of the mentions; with the trained user, "
           f"{exact['chain']:.1f} %. The trained user's answers are right {user_right:.1f} % of the time, "
           f"{relation(user_right, majority)} the {majority:.1f} % that each name's majority section gets without "
           "reading anything" + (", and in every seed its validation loss rises after its best evaluation (Runs): it "
                                 "memorises the training contexts instead of learning to read them" if overfits else "")
           + "."]
    formed_context, formed_chain = sense_means["with_context"][0], sense_means["chain"][0]
    out.append(f"- **The answer bottleneck {'beats' if formed_chain > formed_context else 'does not beat'} the context "
               f"in the prompt** in well-formed NAME lines: WithContext writes one for {formed_context:.1f} % of the "
               f"mentions, the chain for {formed_chain:.1f} %" +
               (": the context in the prompt disturbs a small translator more than a one-digit answer does, which is "
                "the chapter's claim in the form it takes at this scale." if formed_chain > formed_context else "."))
    readers = [k for k in ["with_context", "chain"] if beats(k)]
    out.append(f"- **Context {'pays' if readers else 'does not pay'} for these models.** NoExtra "
               f"({exact['no_extra']:.1f} %) is {relation(exact['no_extra'], exact['chain'])} the chain and "
               f"{relation(exact['no_extra'], exact['with_context'])} WithContext ({exact['with_context']:.1f} %)"
               + (", as at the thesis's smallest scale (Fig. 4.3, 8B, where NoExtra was best)"
                  if exact["no_extra"] > max(exact["chain"], exact["with_context"]) - 1 else "") + "; "
               + (f"{' and '.join(NAMES[k] for k in readers)} beat{'s' if len(readers) == 1 else ''} the most-frequent "
                  "sense" if readers else "no system that reads the context beats the most-frequent sense")
               + f", and the perfect-user chain {'beats' if beats('chain-gold') else 'does not beat'} it. Whether the "
               "chain's advantage grows with scale, the thesis's emergence, cannot be tested here.")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--seeds", required=True)
    ap.add_argument("--language", required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--seconds", type=int, default=0)
    ap.add_argument("--report", required=True)
    a = ap.parse_args()
    seeds = a.seeds.split()
    scores = {s: json.load(open(os.path.join(a.out_dir, f"chain-s{s}", "scores.json"))) for s in seeds}
    # The chain with a perfect user, as the system "chain-gold".
    for s in seeds:
        gold = os.path.join(a.out_dir, f"chain-gold-s{s}", "scores.json")
        if os.path.exists(gold):
            scores[s]["systems"]["chain-gold"] = json.load(open(gold))["systems"]["chain"]
    stats = json.load(open(os.path.join(a.out_dir, "data", "stats.json")))
    scale = run_scale(a.out_dir, seeds)
    mfs = most_frequent_sense(a.out_dir, a.language)
    n_test = len(mfs)
    mfs_section = 100 * sum(r[0] for r in mfs.values()) / n_test
    mfs_line = 100 * sum(r[1] for r in mfs.values()) / n_test

    def per_seed(system, metric):
        return [scores[s]["systems"][system][metric] for s in seeds if metric in scores[s]["systems"].get(system, {})]

    L = ["# Thesis ch. 4 in miniature: does an answer bottleneck beat giving the translator the context?", ""]
    L += [f"Generated by `bench/thesis-ch4.sh` ({len(seeds)} seed{'s' if len(seeds) > 1 else ''}: {', '.join(seeds)}; "
          f"{a.seconds / 60:.0f} min on this machine). Target language: `{a.language}`.", ""]
    L += ["## Scale", "",
          "| | thesis | here |", "|---|---|---|",
          "| models | PaLM 8B / 62B / 540B, prompted 8-shot, no training | causal LMs of "
          f"{scale['layers']} layers, d = {scale['d_model']} ({' / '.join(f'{n:,}' for n in scale['parameters'])} "
          f"parameters, a {scale['vocab']:,}-token byte-level BPE), trained {a.steps} steps per role, each a batch of at "
          f"most {scale['tokens']:,} token positions (rows × the longest example; an example is one block of at "
          f"most {scale['block']:,}): "
          + ", ".join(f"{r} {scale['blocks'][r]:,} training examples (in epoch {scale['epochs'][r]} at the last step)"
                      for r in ROLES)
          + "; on two CPU cores on their completions only (data.blocks = completion), decoded greedily from the "
          "checkpoint of lowest validation loss |",
          f"| data | AmbigMT: 1,000 OpenSubtitles samples per ambiguity and pair | `strata data ambig`: {n_test} test "
          "mentions of man-page names that live in several sections (printf 1/3, kill 1/2, ...) |",
          "| ambiguity resolved by | formality, gender of \"it\", polysemy | the man-page section the sentence means |",
          "| translation | the sentence in es/fr/de/ja | the meant page's NAME line in the target language "
          "(manpages-fr/de/es), a gloss of the sense |",
          "| user | PaLM 540B, few-shot | a trained LM reading S, C, Q; its answers corrupted at 0/10/30/50 % |", "",
          "What cannot be tested here: few-shot prompting and the thesis's emergence with scale (Fig. 4.3). What is "
          "tested: the information-flow claim, that routing the context through a question and an answer helps the "
          "translator more than giving it the context.", ""]
    L += ["## Baseline the systems must beat", "",
          f"Most-frequent sense (per name, the section most often meant in training; it ignores the context): "
          f"section right for **{mfs_section:.1f} %** of the {n_test} test mentions, the right NAME line for "
          f"**{mfs_line:.1f} %**. The most frequent section overall is right for "
          f"{100 * stats['test_majority_share']:.1f} %. A system that reads the context has to beat the first "
          "figure to show it uses it.", ""]
    L += ["## Results (mean ± std over seeds)", "",
          "| system | " + " | ".join(m[1] for m in METRICS) + " | answer right |", "|---" * (len(METRICS) + 2) + "|"]
    for system in SYSTEMS:
        if not per_seed(system, "chrf"):
            continue
        cells = [fmt_seeds(per_seed(system, m)) for m, _ in METRICS]
        answer = per_seed(system, "answer_accuracy")
        L.append(f"| {NAMES[system]} | " + " | ".join(cells) + f" | {fmt_seeds(answer) if answer else '–'} |")
    L += ["", "Answer right: the share of chain examples where the answer the translator got was the meant "
          "section (after corruption).", ""]
    lines = sense_lines(a.out_dir, a.language)
    L += ["## How the outputs resolve the ambiguity (mean over seeds)", "",
          "Every sense of a name has its own NAME line, so an output can be read as a choice of sense: *well "
          "formed* when it is the NAME line of one of the mentioned name's senses, *right sense* when it is the "
          "meant one's (= exact match), and right among the well-formed outputs, which separates choosing the "
          "sense from writing its line. The most-frequent-sense baseline is well formed for every mention.", "",
          "| system | well formed % | right sense % | right among well formed % |", "|---|---|---|---|"]
    def outputs_of(system, sd):  # the directory and the system name its outputs have there
        if system == "chain-gold":
            return os.path.join(a.out_dir, f"chain-gold-s{sd}"), "chain"
        return os.path.join(a.out_dir, f"chain-s{sd}"), system

    sense_means = {}  # per system, the three shares' means over seeds
    for system in SYSTEMS:
        rows = [sense_analysis(a.out_dir, *outputs_of(system, sd), a.language, lines)
                for sd in seeds]
        rows = [r for r in rows if r]
        if rows:
            # A seed with no well-formed output has no "right among well formed" (nan): left out.
            shares = [[r[k] for r in rows if not math.isnan(r[k])] for k in range(3)]
            sense_means[system] = [mean_std(v)[0] if v else float("nan") for v in shares]
            L.append(f"| {NAMES[system]} | " + " | ".join(fmt_seeds(v, 1) if v else "–" for v in shares) + " |")
    L += [f"| most-frequent sense | 100.0 | {mfs_line:.1f} | {mfs_line:.1f} |", ""]
    L += ["## Paired bootstrap per seed (1,000 resamples over the test examples)", "",
          "Each cell: the difference Δ (first system minus second), its 95 % percentile interval over the resamples, "
          "and p, the share of resamples in which the system ahead on the whole test set is not ahead (Koehn 2004).", "",
          "| comparison | seed | exact match Δ [95 % interval] (p) | chrF Δ [interval] (p) | BLEU Δ [interval] (p) |",
          "|---|---|---|---|---|"]
    for pair in ["chain vs with_context", "chain vs no_extra", "with_context vs no_extra"]:
        for s in seeds:
            c = scores[s]["comparisons"].get(pair)
            if not c:
                continue
            cells = [effect(c[m]["a"] - c[m]["b"], (c[m]["difference_low"], c[m]["difference_high"]), c[m]["p_value"])
                     for m, _ in METRICS]
            L.append(f"| {pair} | {s} | " + " | ".join(cells) + " |")
    ids = sorted(mfs)
    L += ["", "Against the most-frequent-sense baseline, and the chain against itself with half the answers wrong "
          "(exact match, the same test in Python over each seed's outputs):", "",
          "| comparison | seed | exact match Δ [95 % interval] (p) |", "|---|---|---|"]
    against = {}
    for system in ["no_extra", "with_context", "chain", "chain-gold"]:
        for sd in seeds:
            if not os.path.exists(os.path.join(outputs_of(system, sd)[0], "scores.json")):
                continue
            mine = exact_by_id(*outputs_of(system, sd))
            d, interval, p = paired_bootstrap([mine[i] for i in ids], [float(mfs[i][1]) for i in ids])
            against.setdefault(system, []).append((d, p))
            L.append(f"| {system} vs most-frequent sense | {sd} | {effect(d, interval, p)} |")
    for sd in seeds:
        path = os.path.join(a.out_dir, f"chain-s{sd}", "outputs", "chain.jsonl")
        user = {o["id"]: float(o["user_answer"] == o["right_answer"]) for o in read_jsonl(path)}
        d, interval, p = paired_bootstrap([user[i] for i in ids], [float(mfs[i][0]) for i in ids])
        against.setdefault("user", []).append((d, p))
        L.append(f"| the user's answers vs each name's majority section (section right) | {sd} | {effect(d, interval, p)} |")
    for sd in seeds:
        clean = exact_by_id(os.path.join(a.out_dir, f"chain-s{sd}"), "chain")
        worst = exact_by_id(os.path.join(a.out_dir, f"chain-s{sd}"), "chain-corrupt50")
        d, interval, p = paired_bootstrap([clean[i] for i in ids], [worst[i] for i in ids])
        against.setdefault("corrupt", []).append((d, p))
        L.append(f"| chain vs chain, 50 % wrong | {sd} | {effect(d, interval, p)} |")

    def verdict_of(pairs):
        if len(pairs) < 2:
            return "one seed: no verdict"
        if all(d > 0 and p < 0.05 for d, p in pairs):
            return "**holds** (better in every seed, p < 0.05 in each)"
        if all(d < 0 and p < 0.05 for d, p in pairs):
            return "**does not hold: the reverse** (worse in every seed, p < 0.05 in each)"
        return "**not established** (the seeds disagree or p ≥ 0.05)"

    L += ["", "## The thesis's claims, checked", ""]

    def verdict(a_sys, b_sys, metric):
        """The claim a_sys > b_sys on metric from strata chain's own comparisons, seed by seed."""
        found = [c[metric] for c in (scores[s]["comparisons"].get(f"{a_sys} vs {b_sys}") for s in seeds) if c]
        if not found:
            return "not run"
        effects = [effect(c["a"] - c["b"], (c["difference_low"], c["difference_high"]), c["p_value"]) for c in found]
        pairs = [(c["a"] - c["b"], c["p_value"]) for c in found]
        if len(pairs) < 2:
            return f"Δ {effects[0]}; one seed: no verdict"
        return f"Δ [95 % interval] (p) per seed {', '.join(effects)}: " + verdict_of(pairs)

    L += [f"- *The chain beats WithContext* (Table 4.2, at 540B): exact match {verdict('chain', 'with_context', 'exact_match')}; "
          f"chrF {verdict('chain', 'with_context', 'chrf')}.",
          f"- *Context helps at all* (WithContext over NoExtra): exact match {verdict('with_context', 'no_extra', 'exact_match')}.",
          f"- *The chain beats NoExtra*: exact match {verdict('chain', 'no_extra', 'exact_match')}.",
          "- *A worse user hurts the chain* (Fig. 4.5's direction): exact match at 0/10/30/50 % corrupted answers "
          + ", ".join(fmt_seeds(per_seed(sys, 'exact_match')) for sys in SYSTEMS[2:6] if per_seed(sys, 'exact_match'))
          + f"; the clean chain over the 50 % one: {verdict_of(against['corrupt'])}. With a perfect user: "
          + fmt_seeds(per_seed('chain-gold', 'exact_match')) + " (against the most-frequent sense: "
          + verdict_of(against.get('chain-gold', [])) + ").",
          "- *The user reads the context* (its answers right more often than each name's majority section, which "
          f"needs no context): {verdict_of(against['user'])}.",
          "- *Beats the trivial baseline* (most-frequent sense, exact match; NoExtra never sees the context and "
          "can at best equal it, the others must beat it to show they use the context): " + "; ".join(f"{NAMES[k]} {verdict_of(against[k])}"
                                                   for k in ["no_extra", "with_context", "chain"]) + ".", ""]
    exact = {k: mean_std(per_seed(k, "exact_match"))[0] for k in ["no_extra", "with_context", "chain", "chain-gold"]}
    user_right = mean_std(per_seed("chain", "answer_accuracy"))[0]
    if all(k in sense_means for k in ["no_extra", "with_context", "chain", "chain-gold"]):
        L += ["## Reading", ""] + reading(exact, sense_means, user_right, 100 * stats["test_name_majority_accuracy"],
                                          user_overfits(a.out_dir, seeds), against) + [""]
    L += ["## Runs", "", "Validation loss on the completions (nats per token), at each evaluation.", "",
          "| role | seed | validation loss by step |", "|---|---|---|"]
    for role in ["no_extra", "with_context", "translator", "user"]:
        for s in seeds:
            metrics = os.path.join(a.out_dir, "runs", f"{role}-s{s}", "metrics.jsonl")
            if os.path.exists(metrics):
                valid = {r["step"]: r["loss"] for r in read_jsonl(metrics) if r.get("split") == "valid"}
                L.append(f"| {role} | {s} | " + ", ".join(f"{step}: {loss:.2f}" for step, loss in sorted(valid.items())) + " |")
    L += ["", "Data: " + ", ".join(f"{k} {v}" for k, v in stats.items() if isinstance(v, (int, float))), ""]
    write_atomic(a.report, L)


if __name__ == "__main__":
    main()
