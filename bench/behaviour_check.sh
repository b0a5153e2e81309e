#!/usr/bin/env bash
# Behaviour kept while the house moves: a fixed-step run of each committed config (the demo,
# seed 000/001/003 recipes, a causal LM) with two strata binaries, before and after a change,
# on the same data and tokenizer; then each run's logged losses and test metrics side by side.
# The runs must agree exactly: same seed, same steps, same thread count. Resumable.
#
# Usage: bench/behaviour_check.sh BEFORE_BINARY AFTER_BINARY [OUT_DIR]
#   STEPS=200   optimizer steps per run      DOCS=60   test pages scored per summariser
#   CASES="demo lm ..."   only these cases (default: all)
#   SIDES=after           run one side only (default: "before after"); the comparison waits
#                         until both sides of a case are done
set -euo pipefail
before=$1
after=$2
out=${3:-runs/behaviour}
steps=${STEPS:-200}
docs=${DOCS:-60}
strata=$after
mkdir -p "$out"
source bench/corpus_and_tokenizer.sh
head -n "$docs" "$out/corpus/test.jsonl" > "$out/test-sample.jsonl"

# name | config | recipe | the command that scores the run on the test sample (or none)
cases=(
  "demo|configs/demo-summarizer.toml||summarize"
  "seed000-finetune-truncsa|configs/seed000.toml|finetune-truncsa|summarize"
  "seed000-finetune-softsa|configs/seed000.toml|finetune-softsa|summarize"
  "seed000-uniblock|configs/seed000.toml|uniblock|summarize"
  "seed001-hibrids-enc|configs/seed001.toml|hibrids-enc|summarize"
  "seed001-hibrids-dec|configs/seed001.toml|hibrids-dec|summarize"
  "seed003-extractive-patterns|configs/seed003.toml|extractive-patterns|extract"
  "seed003-segmentation-patterns|configs/seed003.toml|segmentation-patterns|none"
  "lm|configs/demo-summarizer.toml||none"
)

run_case() {
  local side=$1 binary=$2 name=$3 config=$4 recipe=$5 score=$6 dir="$out/$1/$3"
  [[ -f "$dir/done" ]] && return 0
  rm -rf "$dir" && mkdir -p "$dir"
  local extra=()
  [[ -n "$recipe" ]] && extra+=(--recipe "$recipe")
  [[ "$name" == lm ]] && extra+=(model.architecture=causal_lm model.pre_norm=true data.block_size=128)
  "$binary" train --config "$config" "${extra[@]}" --out "$dir/run" --quiet train.max_steps="$steps" \
    train.max_minutes=0 train.warmup_steps=$((steps / 4)) train.eval_every=$((steps / 2)) train.eval_docs=20 data.train="$out/corpus/train.jsonl" \
    data.valid="$out/corpus/validation.jsonl" data.tokenizer="$out/tokenizer" > "$dir/train.log" 2>&1
  case "$score" in
    summarize) "$binary" eval summarize --model "$dir/run" --data "$out/test-sample.jsonl" --out "$dir/test" --show 0 \
                 > "$dir/score.log" 2>&1 ;;
    extract) "$binary" extract --model "$dir/run" --data "$out/test-sample.jsonl" > "$dir/score.log" 2>&1 ;;
  esac
  touch "$dir/done"
}

for c in "${cases[@]}"; do
  IFS='|' read -r name config recipe score <<< "$c"
  [[ -n "${CASES:-}" && " $CASES " != *" $name "* ]] && continue
  echo "== $name"
  for side in ${SIDES:-before after}; do
    binary=$before
    [[ $side == after ]] && binary=$after
    run_case "$side" "$binary" "$name" "$config" "$recipe" "$score"
  done
done
[[ "${SIDES:-before after}" == "before after" ]] || exit 0

python3 - "$out" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
same = True
for case in sorted(p.name for p in (out / "before").iterdir() if (out / "after" / p.name / "done").exists()):
    def losses(side):
        rows = [json.loads(l) for l in open(out / side / case / "run" / "metrics.jsonl")]
        # Everything but the clock: losses, learning rates, ROUGE, gradient norms.
        clock = ("seconds", "elapsed", "per_s", "tokens_s", "time")
        return [{k: v for k, v in r.items() if not any(c in k for c in clock)} for r in rows]
    def score(side):
        f = out / side / case / "test" / "rouge.json"
        if f.exists():  # the checkpoint's path aside: it names the side
            return {k: v for k, v in json.load(open(f)).items() if k != "model"}
        log = out / side / case / "score.log"
        return log.read_text().strip().splitlines()[-3:] if log.exists() else None
    a, b = losses("before"), losses("after")
    sa, sb = score("before"), score("after")
    ok = a == b and sa == sb
    same &= ok
    last = {k: a[-1][k] for k in ("split", "step", "loss") if k in a[-1]} if a else None
    print(f"{case:32s} {'same' if ok else 'DIFFERENT'}: {len(a)} logged losses, last {last}")
    if not ok:
        print("  before:", a[-3:], sa)
        print("  after: ", b[-3:], sb)
print("every run identical" if same else "some runs differ")
sys.exit(0 if same else 1)
PY
