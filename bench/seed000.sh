#!/usr/bin/env bash
# Seed 000 (discourse-aware prefix design) in miniature on man-page summarisation: pretrains
# a small BART-like base with `strata pretrain` (text infilling, sentence permutation), runs
# every system of the seed's Tables 2, 4 and 5 on top of it, Table 7's sweeps (SoftSA's τ,
# TruncSA's top-p), Table 3's prefix layers and Figure 3's single-layer prefixes, the
# low-resource curve of §6.6, scores the untuned base and lead-1 beside them, draws the
# attention and per-head spectrum figures, and writes docs/results/seed000.md with the seed's
# findings tested by paired bootstraps. Decoding is the seed's: beam 5. Resumable: a run with
# scores is not redone; a run's result.json deleted means it is scored again, not retrained.
#
# Usage: bench/seed000.sh [BUILD_DIR] [OUT_DIR]
#   SEEDS="1 2"          seeds of Tables 2-5 and 7           JOBS=2   runs side by side (one thread each)
#   FRACTIONS="5 10 25"  low-resource training shares below the seed's 50 % (seed 1)   REPORT=docs/results/seed000.md
#   PRETRAIN_STEPS=2000  steps of the base                  SYSTEMS="..." only these systems (default all)
#   EXTRA="k=v ..."      more overrides for every run (e.g. a shorter train.max_steps for a smoke test)
set -euo pipefail
build=${1:-build}
out=${2:-runs/seed000}
strata="$build/strata"
seeds=${SEEDS:-"1 2"}
fractions=${FRACTIONS:-"5 10 25"}
jobs=${JOBS:-2}
report=${REPORT:-docs/results/seed000.md}
config=configs/seed000.toml
figures=$(dirname "$report")/seed000
data="$out/corpus"
mkdir -p "$out/runs" "$figures"
started=$(date +%s)

# system|recipe|overrides. A sweep's system is its recipe with one setting changed.
main="finetune prefix uniblock hierblock truncsa softsa htruncsa hsoftsa hierblock-softsa finetune-truncsa finetune-softsa"
sweeps="softsa-tau0.1|softsa|model.sparse_tau=0.1
softsa-tau0.01|softsa|model.sparse_tau=0.01
truncsa-p0.8|truncsa|model.sparse_p=0.8
truncsa-p0.5|truncsa|model.sparse_p=0.5"
sweep_names=$(echo "$sweeps" | cut -d'|' -f1 | xargs)
layers="prefix-top prefix-low"
low="finetune prefix hierblock hierblock-softsa"
# Figure 3: prefixes in one layer (of the encoder and the decoder alike), for each layer.
depth=$(sed -n 's/^encoder_layers *= *\([0-9]*\).*/\1/p' "$config")
single=""
for ((i = 1; i <= depth; i++)); do single+="prefix-layer$i|prefix|model.prefix_layers=\"$((i - 1))\""$'\n'; done
all_systems="$(for r in $main $layers; do echo "$r|$r|"; done)
$sweeps
$single"
wanted=${SYSTEMS:-$(echo "$all_systems" | cut -d'|' -f1 | xargs)}
is_wanted() { [[ " $wanted " == *" $1 "* ]]; }

source bench/corpus_and_tokenizer.sh
lead_baseline "$data" "$out/lead1-description"

if [[ ! -f "$out/base/pretrained" ]]; then
  echo "== base: BART denoising on the training pages (${PRETRAIN_STEPS:-2000} steps, 2 threads)"
  rm -rf "$out/base"
  t0=$(date +%s)
  "$strata" pretrain --config "$config" --out "$out/base" --quiet train.threads=2 \
    train.max_steps="${PRETRAIN_STEPS:-2000}" train.eval_every=500 data.train="$data/train.jsonl" \
    data.valid="$data/validation.jsonl" data.tokenizer="$out/tokenizer" ${EXTRA:-} > "$out/base.log" 2>&1 ||
    { echo "FAILED: pretraining (see $out/base.log)"; exit 1; }
  echo "$(( $(date +%s) - t0 ))" > "$out/base/pretrained"
fi

# The seed's decoding (its Table 7): beam 5; given here so that runs trained under an older
# [decode] are scored the same way. Scores DIR/test with per-document ROUGE.
score() {
  local dir=$1
  shift
  rm -rf "$dir/test"
  OMP_NUM_THREADS=1 "$strata" eval summarize "$@" --data "$data/test.jsonl" --beam 5 --no-repeat-ngram 3 \
    --out "$dir/test" --show 0 > "$dir/eval.log" 2>&1 &&
  "$strata" eval rouge --pairs "$dir/test/predictions.jsonl" --stem \
    --per-example "$dir/test/rouge-per-example.jsonl" > /dev/null
}

# One system, seed and training share (%): train on the base unless trained.json says it was,
# then score the test split; result.json holds what the report reads.
run_one() {
  local system=$1 seed=$2 percent=$3 dir="$out/runs/$1-s$2-p$3"
  local line recipe overrides
  line=$(echo "$all_systems" | grep "^$system|")
  recipe=$(echo "$line" | cut -d'|' -f2)
  overrides=$(echo "$line" | cut -d'|' -f3)
  if [[ -f "$dir/result.json" ]]; then return 0; fi
  local t0 t1 t2
  if [[ ! -f "$dir/trained.json" ]]; then
    rm -rf "$dir" && mkdir -p "$dir"
    t0=$(date +%s%N)
    # shellcheck disable=SC2086
    OMP_NUM_THREADS=1 "$strata" train --config "$config" --recipe "$recipe" --base "$out/base" --out "$dir/run" --quiet \
      --train-fraction "$(awk "BEGIN {print $percent / 100}")" train.seed="$seed" $overrides \
      data.train="$data/train.jsonl" data.valid="$data/validation.jsonl" data.tokenizer="$out/tokenizer" \
      ${EXTRA:-} > "$dir/train.log" 2>&1 || { echo "FAILED: $system seed $seed $percent% (see $dir/train.log)"; return 1; }
    t1=$(date +%s%N)
    local prefix_bytes=0 trainable total
    [[ -f "$dir/run/adapter.safetensors" ]] && prefix_bytes=$(stat -c %s "$dir/run/adapter.safetensors")
    trainable=$(grep -o 'trainable params: [0-9,]*' "$dir/train.log" | tr -dc '0-9' || true)
    total=$(grep -o 'all params: [0-9,]*' "$dir/train.log" | tr -dc '0-9' || true)
    printf '{"trainable": %s, "parameters": %s, "prefix_bytes": %s, "train_seconds": %s}\n' "${trainable:-null}" \
      "${total:-null}" "$prefix_bytes" "$(( (t1 - t0) / 1000000 ))e-3" > "$dir/trained.json"
  fi
  t1=$(date +%s%N)
  score "$dir" --model "$dir/run" || { echo "FAILED: eval $system seed $seed $percent% (see $dir/eval.log)"; return 1; }
  t2=$(date +%s%N)
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); r.update(system=sys.argv[2], recipe=sys.argv[3], seed=int(sys.argv[4]), percent=int(sys.argv[5]), eval_seconds=float(sys.argv[6])); print(json.dumps(r))' \
    "$dir/trained.json" "$system" "$recipe" "$seed" "$percent" "$(( (t2 - t1) / 1000000 ))e-3" > "$dir/result.json.tmp" &&
    mv "$dir/result.json.tmp" "$dir/result.json"
  echo "done: $system seed $seed $percent% ($(( (t2 - t1) / 1000000000 )) s scoring)"
}
export -f run_one score
export out strata config all_systems data

# Every system's first seed (Figure 3's single layers have only that one), then the other
# seeds, then the low-resource curve: a run cut short still has one of everything.
queue() {
  local first=${seeds%% *} seed system
  for system in $(echo "$all_systems" | cut -d'|' -f1); do is_wanted "$system" && echo "$system $first 100"; done
  for seed in ${seeds#"$first"}; do
    for system in $main $sweep_names $layers; do is_wanted "$system" && echo "$system $seed 100"; done
  done
  for percent in $fractions; do for system in $low; do is_wanted "$system" && echo "$system $first $percent"; done; done
  return 0
}
echo "== $(queue | wc -l) runs, $jobs at a time (one thread each)"
queue | xargs -P "$jobs" -n 3 bash -c 'run_one "$@"' _

echo "== the untuned base, and the prefix file on its base (the same test scores as the run that tuned it)"
mkdir -p "$out/untuned"
[[ -f "$out/untuned/test/rouge-per-example.jsonl" ]] || score "$out/untuned" --model "$out/base" ||
  echo "FAILED: the untuned base (see $out/untuned/eval.log)"
check="$out/runs/prefix-s1-p100"
if [[ -f "$check/result.json" && ! -f "$check/prefix-file/test/rouge.json" ]]; then
  mkdir -p "$check/prefix-file"
  score "$check/prefix-file" --model "$out/base" --adapter "$check/run/adapter.safetensors" ||
    echo "FAILED: base + prefix file (see $check/prefix-file/eval.log)"
fi

echo "== analyses: attention maps with the prefix columns first, and the per-head spectrum of prefix attention"
for system in prefix hierblock; do
  [[ -f "$out/runs/$system-s1-p100/result.json" ]] || continue
  "$strata" analyze attention --model "$out/runs/$system-s1-p100/run" --data "$data/test.jsonl" \
    --examples 2 --out "$figures/attention-$system" > "$figures/attention-$system.txt" 2>&1 || echo "FAILED: attention maps of $system"
done
spectrum=()
for pair in "prefix|Prefix-tune (dense)" "softsa|SoftSA" "truncsa|TruncSA" "hsoftsa|HSoftSA" "htruncsa|HTruncSA"; do
  run="$out/runs/${pair%%|*}-s1-p100"
  [[ -f "$run/result.json" ]] && spectrum+=(--model "$run/run" --label "${pair#*|}")
done
if (( ${#spectrum[@]} > 0 )); then
  OMP_NUM_THREADS=2 "$strata" analyze spectrum "${spectrum[@]}" --per-head --data "$data/test.jsonl" --examples 64 \
    --out "$figures/spectrum" > "$figures/spectrum.txt" 2>&1 || echo "FAILED: spectrum"
fi

python3 bench/seed000_report.py --runs "$out/runs" --out-dir "$out" --config "$config" --main "$main" \
  --sweeps "$sweep_names" --layers "$layers" --single "$(echo "$single" | cut -d'|' -f1 | xargs)" --low "$low" \
  --fractions "$fractions" --strata "$strata" --figures "$figures" \
  --minutes "$(( ($(date +%s) - started) / 60 ))" --out "$report"
echo "== wrote $report"
