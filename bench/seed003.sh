#!/usr/bin/env bash
# Seed 003 (patterns) in miniature, Tables 1 and 2: small encoders trained from scratch for
# extractive summarisation of man pages and for topic segmentation of man pages (boundaries =
# section breaks), vanilla against patterns injected in 4 of 8 and 8 of 8 heads (and 4 / 12 of
# 12), the ablation over pattern combinations, 3 seeds each; then docs/results/seed003.md.
# Resumable: a run with scores is not trained again.
#
# Usage: bench/seed003.sh [BUILD_DIR] [OUT_DIR]
#   SEEDS="1 2 3"   seeds per system       JOBS=2        runs side by side (one thread each)
#   SYSTEMS="..."   system names (default all, see below)   REPORT=docs/results/seed003.md
#   EXTRA="k=v ..." more overrides for every run (e.g. a shorter train.max_steps for a smoke test)
set -euo pipefail
build=${1:-build}
out=${2:-runs/seed003}
strata="$build/strata"
seeds=${SEEDS:-"1 2 3"}
jobs=${JOBS:-2}
report=${REPORT:-docs/results/seed003.md}
config=configs/seed003.toml
wide="model.heads=12 model.d_model=96"

# system|recipe|overrides: every system of the experiment.
all_systems="
ext-6x8|extractive|
ext-6x8-p4|extractive-patterns|
ext-6x8-p8|extractive-patterns-all|
ext-6x8-m|extractive-m|
ext-6x8-i|extractive-i|
ext-6x8-p|extractive-p|
ext-6x8-mi|extractive-mi|
ext-6x8-mp|extractive-mp|
ext-6x8-ip|extractive-ip|
ext-6x12|extractive|$wide
ext-6x12-p4|extractive-patterns|$wide
ext-6x12-p12|extractive-patterns-all|$wide
seg-6x8|segmentation|
seg-6x8-p4|segmentation-patterns|
seg-6x8-p8|segmentation-patterns-all|
"
systems=${SYSTEMS:-$(echo "$all_systems" | cut -d'|' -f1 | xargs)}
mkdir -p "$out/runs"
started=$(date +%s)

source bench/corpus_and_tokenizer.sh

# One system and seed: train, then score the test split; result.json holds what the report reads.
run_one() {
  local system=$1 seed=$2 dir="$out/runs/$1-s$2"
  local line recipe overrides
  line=$(echo "$all_systems" | grep "^$system|")
  recipe=$(echo "$line" | cut -d'|' -f2)
  overrides=$(echo "$line" | cut -d'|' -f3)
  if [[ -f "$dir/result.json" ]]; then return 0; fi
  rm -rf "$dir" && mkdir -p "$dir"
  local t0 t1 t2 task
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  OMP_NUM_THREADS=1 "$strata" train --config "$config" --recipe "$recipe" --out "$dir/run" --quiet \
    train.seed="$seed" data.train="$out/corpus/train.jsonl" data.valid="$out/corpus/validation.jsonl" \
    data.tokenizer="$out/tokenizer" $overrides ${EXTRA:-} > "$dir/train.log" 2>&1 ||
    { echo "FAILED: $system seed $seed (see $dir/train.log)"; return 1; }
  t1=$(date +%s%N)
  task=extract
  [[ $recipe == segmentation* ]] && task=segment
  OMP_NUM_THREADS=1 "$strata" "$task" --model "$dir/run" --data "$out/corpus/test.jsonl" --json "$dir/test.json" \
    --quiet > "$dir/eval.log" 2>&1 || { echo "FAILED: $task $system seed $seed (see $dir/eval.log)"; return 1; }
  t2=$(date +%s%N)
  local params rho
  params=$(grep -o 'all params: [0-9,]*' "$dir/train.log" | tr -dc '0-9')
  rho=$(grep -o 'rho = [0-9.]*' "$dir/train.log" | grep -o '[0-9.]*$' || echo 0)
  printf '{"system": "%s", "recipe": "%s", "seed": %s, "parameters": %s, "rho": %s, "train_seconds": %s, "eval_seconds": %s}\n' \
    "$system" "$recipe" "$seed" "$params" "${rho:-0}" "$(( (t1 - t0) / 1000000 ))e-3" "$(( (t2 - t1) / 1000000 ))e-3" > "$dir/result.json"
  echo "done: $system seed $seed ($(( (t2 - t0) / 1000000000 )) s)"
}
export -f run_one
export out strata config all_systems

total=0
for system in $systems; do for seed in $seeds; do total=$((total + 1)); done; done
echo "== $total runs, $jobs at a time (one thread each)"
for seed in $seeds; do for system in $systems; do echo "$system $seed"; done; done |
  xargs -P "$jobs" -n 2 bash -c 'run_one "$@"' _

# The pipeline of §3.1 on seed 1's models: head importance of vanilla and patterned models,
# and the global relevance of the patterns in the vanilla ones; the report reads the JSON.
analyze() {
  local kind=$1 run=$2 dir="$out/analysis/$1-$2"
  shift 2
  [[ -f "$out/runs/$run/result.json" && ! -f "$dir/done" ]] || return 0
  OMP_NUM_THREADS=2 "$strata" analyze "$kind" --model "$out/runs/$run/run" --data "$out/corpus/validation.jsonl" \
    --out "$dir" --quiet "$@" > "$dir.log" 2>&1 && touch "$dir/done" || echo "FAILED: analyze $kind $run (see $dir.log)"
}
mkdir -p "$out/analysis"
for run in ext-6x8-s1 ext-6x8-p4-s1 seg-6x8-s1 seg-6x8-p4-s1; do analyze heads "$run"; done
all_patterns=matching_token,intra_sentence,intra_context,previous_token,next_token,special_token,punctuation
for run in ext-6x8-s1 seg-6x8-s1; do analyze patterns "$run" --patterns "$all_patterns"; done

python3 bench/seed003_report.py --runs "$out/runs" --analysis "$out/analysis" --config "$config" \
  --systems "$systems" --strata "$strata" --minutes "$(( ($(date +%s) - started) / 60 ))" --out "$report"
echo "== wrote $report"
