#!/usr/bin/env bash
# Seed 001 (HIBRIDS) in miniature on man-page summarisation: every system of the seed's
# §5.2 comparisons and Table 4's ablations (`strata recipes list`), 3 seeds each, then
# docs/results/seed001.md from the runs. Resumable: a run with scores is not trained again.
#
# Usage: bench/seed001.sh [BUILD_DIR] [OUT_DIR]
#   SEEDS="1 2 3"   seeds per system       JOBS=2        runs side by side (one thread each)
#   RECIPES="..."   systems (default all)  REPORT=docs/results/seed001.md
#   EXTRA="k=v ..." more overrides for every run (e.g. a shorter train.max_steps for a smoke test)
set -euo pipefail
build=${1:-build}
out=${2:-runs/seed001}
strata="$build/strata"
seeds=${SEEDS:-"1 2 3"}
jobs=${JOBS:-2}
report=${REPORT:-docs/results/seed001.md}
recipes=${RECIPES:-"longformer sectok lvlsectok tokbias secbias hibrids-enc hibrids-s-enc hibrids-dec hibrids-s-dec hibrids-enc-no-level hibrids-enc-no-path hibrids-enc-symmetric"}
config=configs/seed001.toml
mkdir -p "$out/runs"
started=$(date +%s)

source bench/corpus_and_tokenizer.sh

# One system and seed: train, then score the test split; result.json holds what the report reads.
run_one() {
  local recipe=$1 seed=$2 dir="$out/runs/$1-s$2"
  if [[ -f "$dir/result.json" ]]; then return 0; fi
  rm -rf "$dir" && mkdir -p "$dir"
  local t0 t1 t2
  t0=$(date +%s%N)
  OMP_NUM_THREADS=1 "$strata" train --config "$config" --recipe "$recipe" --out "$dir/run" --quiet \
    train.seed="$seed" data.train="$out/corpus/train.jsonl" data.valid="$out/corpus/validation.jsonl" \
    data.tokenizer="$out/tokenizer" ${EXTRA:-} > "$dir/train.log" 2>&1 || { echo "FAILED: $recipe seed $seed (see $dir/train.log)"; return 1; }
  t1=$(date +%s%N)
  OMP_NUM_THREADS=1 "$strata" eval summarize --model "$dir/run" --data "$out/corpus/test.jsonl" \
    --out "$dir/test" --show 0 > "$dir/eval.log" 2>&1 || { echo "FAILED: eval $recipe seed $seed"; return 1; }
  t2=$(date +%s%N)
  local params
  params=$(grep -o 'all params: [0-9,]*' "$dir/train.log" | tr -dc '0-9')
  printf '{"recipe": "%s", "seed": %s, "parameters": %s, "train_seconds": %s, "eval_seconds": %s}\n' \
    "$recipe" "$seed" "$params" "$(( (t1 - t0) / 1000000 ))e-3" "$(( (t2 - t1) / 1000000 ))e-3" > "$dir/result.json"
  echo "done: $recipe seed $seed ($(( (t2 - t0) / 1000000000 )) s)"
}
export -f run_one
export out strata config

total=0
for recipe in $recipes; do for seed in $seeds; do total=$((total + 1)); done; done
echo "== $total runs, $jobs at a time (one thread each)"
for recipe in $recipes; do for seed in $seeds; do echo "$recipe $seed"; done; done |
  xargs -P "$jobs" -n 2 bash -c 'run_one "$@"' _

python3 bench/experiment_report.py --runs "$out/runs" --config "$config" --recipes "$recipes" \
  --strata "$strata" --minutes "$(( ($(date +%s) - started) / 60 ))" --out "$report"
echo "== wrote $report"
