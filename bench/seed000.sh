#!/usr/bin/env bash
# Seed 000 (discourse-aware prefix design) in miniature on man-page summarisation: pretrains
# a small BART-like base with `strata pretrain` (text infilling, sentence permutation), runs
# every system of the seed's Tables 2, 4 and 5 on top of it with 3 seeds, the prefix-layer
# study of Table 3 and the low-resource curve of §6.6, draws the attention and spectrum
# figures, and writes docs/results/seed000.md. Resumable: a run with scores is not redone.
#
# Usage: bench/seed000.sh [BUILD_DIR] [OUT_DIR]
#   SEEDS="1 2 3"        seeds per system of Tables 2/4/5    JOBS=2   runs side by side (one thread each)
#   FRACTIONS="5 10 25 50"  low-resource training shares (%)  REPORT=docs/results/seed000.md
#   PRETRAIN_STEPS=800   steps of the base                  EXTRA="k=v ..." more overrides for every run
set -euo pipefail
build=${1:-build}
out=${2:-runs/seed000}
strata="$build/strata"
seeds=${SEEDS:-"1 2 3"}
fractions=${FRACTIONS:-"5 10 25 50"}
jobs=${JOBS:-2}
report=${REPORT:-docs/results/seed000.md}
main="finetune prefix uniblock hierblock truncsa softsa htruncsa hsoftsa hierblock-softsa finetune-truncsa finetune-softsa"
layers="prefix-top prefix-low"
low="finetune prefix hierblock hierblock-softsa"
config=configs/seed000.toml
figures=$(dirname "$report")/seed000
mkdir -p "$out/runs" "$figures"
started=$(date +%s)

source bench/corpus_and_tokenizer.sh

if [[ ! -f "$out/base/pretrained" ]]; then
  echo "== base: BART denoising on the training pages (${PRETRAIN_STEPS:-800} steps, 2 threads)"
  rm -rf "$out/base"
  t0=$(date +%s)
  "$strata" pretrain --config "$config" --out "$out/base" --quiet train.threads=2 \
    train.max_steps="${PRETRAIN_STEPS:-800}" train.eval_every=500 data.train="$out/corpus/train.jsonl" \
    data.valid="$out/corpus/validation.jsonl" data.tokenizer="$out/tokenizer" ${EXTRA:-} > "$out/base.log" 2>&1 ||
    { echo "FAILED: pretraining (see $out/base.log)"; exit 1; }
  echo "$(( $(date +%s) - t0 ))" > "$out/base/pretrained"
fi

# One system, seed and training share (%): train on the base, score the test split;
# result.json holds what the report reads.
run_one() {
  local recipe=$1 seed=$2 percent=$3 dir="$out/runs/$1-s$2-p$3"
  if [[ -f "$dir/result.json" ]]; then return 0; fi
  rm -rf "$dir" && mkdir -p "$dir"
  local t0 t1 t2
  t0=$(date +%s%N)
  OMP_NUM_THREADS=1 "$strata" train --config "$config" --recipe "$recipe" --base "$out/base" --out "$dir/run" --quiet \
    --train-fraction "$(awk "BEGIN {print $percent / 100}")" train.seed="$seed" \
    data.train="$out/corpus/train.jsonl" data.valid="$out/corpus/validation.jsonl" data.tokenizer="$out/tokenizer" \
    ${EXTRA:-} > "$dir/train.log" 2>&1 || { echo "FAILED: $recipe seed $seed $percent% (see $dir/train.log)"; return 1; }
  t1=$(date +%s%N)
  OMP_NUM_THREADS=1 "$strata" eval summarize --model "$dir/run" --data "$out/corpus/test.jsonl" \
    --out "$dir/test" --show 0 > "$dir/eval.log" 2>&1 || { echo "FAILED: eval $recipe seed $seed $percent%"; return 1; }
  t2=$(date +%s%N)
  local trainable total
  trainable=$(grep -o 'trainable params: [0-9,]*' "$dir/train.log" | tr -dc '0-9')
  total=$(grep -o 'all params: [0-9,]*' "$dir/train.log" | tr -dc '0-9')
  local prefix_bytes=0
  [[ -f "$dir/run/adapter.safetensors" ]] && prefix_bytes=$(stat -c %s "$dir/run/adapter.safetensors")
  printf '{"recipe": "%s", "seed": %s, "percent": %s, "trainable": %s, "parameters": %s, "prefix_bytes": %s, "train_seconds": %s, "eval_seconds": %s}\n' \
    "$recipe" "$seed" "$percent" "${trainable:-null}" "${total:-null}" "$prefix_bytes" "$(( (t1 - t0) / 1000000 ))e-3" \
    "$(( (t2 - t1) / 1000000 ))e-3" > "$dir/result.json"
  echo "done: $recipe seed $seed $percent% ($(( (t2 - t0) / 1000000000 )) s)"
}
export -f run_one
export out strata config

# Every system's first seed, then Table 3, the second seeds, the low-resource curve and the
# third seeds: a run cut short still has one of everything.
queue() {
  local first=${seeds%% *} rest=${seeds#* } second third
  second=${rest%% *}
  third=${rest#* }
  for recipe in $main; do echo "$recipe $first 100"; done
  for recipe in $layers; do echo "$recipe $first 100"; done
  if [[ "$rest" != "$seeds" ]]; then for recipe in $main; do echo "$recipe $second 100"; done; fi
  for percent in $fractions; do for recipe in $low; do echo "$recipe $first $percent"; done; done
  if [[ "$third" != "$rest" ]]; then for seed in $third; do for recipe in $main; do echo "$recipe $seed 100"; done; done; fi
}
echo "== $(queue | wc -l) runs, $jobs at a time (one thread each)"
queue | xargs -P "$jobs" -n 3 bash -c 'run_one "$@"' _

echo "== the prefix file on its base: the same test scores as the run that tuned it"
check="$out/runs/prefix-s1-p100"
if [[ -f "$check/result.json" && ! -f "$check/test-prefix-file/rouge.json" ]]; then
  OMP_NUM_THREADS=2 "$strata" eval summarize --model "$out/base" --adapter "$check/run/adapter.safetensors" \
    --data "$out/corpus/test.jsonl" --out "$check/test-prefix-file" --show 0 > "$check/eval-prefix-file.log" 2>&1
fi

echo "== analyses: attention maps with the prefix columns first, and the spectrum of prefix attention"
for system in prefix hierblock; do
  "$strata" analyze attention --model "$out/runs/$system-s1-p100/run" --data "$out/corpus/test.jsonl" \
    --examples 2 --out "$figures/attention-$system" > "$figures/attention-$system.txt" 2>&1 || echo "FAILED: attention maps of $system"
done
"$strata" analyze spectrum --model "$out/runs/prefix-s1-p100/run" --label "Prefix-tune (dense)" \
  --model "$out/runs/hsoftsa-s1-p100/run" --label "HSoftSA" --model "$out/runs/htruncsa-s1-p100/run" --label "HTruncSA" \
  --data "$out/corpus/test.jsonl" --examples 16 --out "$figures/spectrum" > "$figures/spectrum.txt" 2>&1 ||
  echo "FAILED: spectrum"

python3 bench/seed000_report.py --runs "$out/runs" --out-dir "$out" --config "$config" --main "$main" \
  --layers "$layers" --low "$low" --strata "$strata" --figures "$figures" \
  --minutes "$(( ($(date +%s) - started) / 60 ))" --out "$report"
echo "== wrote $report"
