#!/usr/bin/env bash
# Thesis ch. 3 (CA-MTL) in miniature on the Debian suite: a small BERT pretrained with masked
# LM on the package descriptions, then Table 3.1's cumulative ablation (pi_rand MTL -> +
# conditional attention -> + bottleneck -> + alignment and CLN -> + MT-Uncertainty), the
# samplers against each other, FBA and the hard block mask, and single-task baselines; each
# run scored on the suite's test split with every prediction kept and its CovSim measured, then
# docs/results/thesis-ch3.md. Resumable: a run with result.json is not trained again.
#
# Usage: bench/thesis-ch3.sh [BUILD_DIR] [OUT_DIR]
#   SEEDS="1 2 3"    seeds per system           JOBS=2  runs side by side (one thread each)
#   SYSTEMS="..."    system names (default all, see below)
#   SINGLE=1         also the single-task baselines (0: not)
#   LISTS=DIR        apt lists already fetched (Debian's Packages and Translation-en); default:
#                    fetched into OUT_DIR/suite/apt-lists with apt's own client
#   PRETRAIN_STEPS=4000   masked-LM steps of the shared backbone
#   EXTRA="k=v ..."  more overrides for every multi-task run (e.g. train.max_steps=50 for a smoke test)
#   REPORT=docs/results/thesis-ch3.md
set -euo pipefail
build=${1:-build}
out=${2:-runs/thesis-ch3}
strata="$build/strata"
seeds=${SEEDS:-"1 2 3"}
jobs=${JOBS:-2}
report=${REPORT:-docs/results/thesis-ch3.md}
config=configs/thesis-ch3.toml
pretrain_steps=${PRETRAIN_STEPS:-4000}

# system|overrides. The first five are Table 3.1's rows, each adding to the one before.
all_systems='
mtl-rand|model.camtl_attention=none model.camtl_bottleneck=false model.camtl_alignment=false model.camtl_cln=false mtl.sampler=uniform
cond-attn|model.camtl_bottleneck=false model.camtl_alignment=false model.camtl_cln=false mtl.sampler=uniform
cond-bottleneck|model.camtl_alignment=false model.camtl_cln=false mtl.sampler=uniform
cond-align-cln|mtl.sampler=uniform
ca-mtl|mtl.sampler=mt-uncertainty
ca-mtl-weighted|mtl.sampler=mt-uncertainty-weighted
size|mtl.sampler=size
temperature|mtl.sampler=temperature
fba|model.camtl_attention=full mtl.sampler=mt-uncertainty
hard|model.camtl_attention=hard mtl.sampler=mt-uncertainty
'
systems=${SYSTEMS:-$(echo "$all_systems" | cut -d'|' -f1 | xargs)}
started=$(date +%s)
mkdir -p "$out"

# The suite, its tokenizer (trained on the training descriptions) and the pretrained backbone.
if [[ ! -f "$out/suite/tasks.json" ]]; then
  echo "== the Debian suite"
  "$strata" data debian --out "$out/suite" ${LISTS:+--lists "$LISTS" --no-fetch}
fi
if [[ ! -f "$out/tokenizer/strata-tokenizer.json" ]]; then
  echo "== tokenizer: sentencepiece unigram, 4000"
  "$strata" tokenizer train --input "$out/suite/summaries/train.jsonl" --out "$out/tokenizer" --vocab-size 4000
fi
if [[ ! -f "$out/bert/done" ]]; then
  echo "== masked-LM pretraining of the backbone ($pretrain_steps steps)"
  rm -rf "$out/bert"
  OMP_NUM_THREADS=$jobs "$strata" pretrain --config "$config" --out "$out/bert" --quiet \
    model.architecture=encoder model.head=token data.tokenizer="$out/tokenizer" \
    data.train="$out/suite/summaries/train.jsonl" data.valid="$out/suite/summaries/validation.jsonl" \
    train.max_steps="$pretrain_steps" train.max_tokens=4096 train.warmup_steps=$((pretrain_steps / 10)) train.freeze='[]' \
    train.metric=valid_loss train.eval_every=$((pretrain_steps / 4)) train.threads="$jobs" > "$out/pretrain.log" 2>&1 ||
    { echo "FAILED: pretraining (see $out/pretrain.log)"; exit 1; }
  touch "$out/bert/done"
fi

# One run: train on the suite from the backbone, then score the test split.
run_one() {
  local name=$1 seed=$2 overrides=$3 dir="$out/runs/$1-s$2"
  if [[ -f "$dir/result.json" ]]; then return 0; fi
  rm -rf "$dir" && mkdir -p "$dir"
  local t0 t1
  t0=$(date +%s)
  # shellcheck disable=SC2086
  OMP_NUM_THREADS=1 "$strata" train --config "$config" --out "$dir/run" --quiet train.seed="$seed" \
    data.train="$out/suite" data.valid="$out/suite" data.tokenizer="$out/tokenizer" \
    train.base_model="$out/bert" $overrides ${EXTRA:-} > "$dir/train.log" 2>&1 ||
    { echo "FAILED: $name seed $seed (see $dir/train.log)"; return 1; }
  t1=$(date +%s)
  OMP_NUM_THREADS=1 "$strata" mtl eval --model "$dir/run" --split test --predictions "$dir/predictions.jsonl" \
    --json "$dir/test.json" > "$dir/eval.log" 2>&1 || { echo "FAILED: mtl eval $name (see $dir/eval.log)"; return 1; }
  OMP_NUM_THREADS=1 "$strata" mtl covsim --model "$dir/run" --examples 200 --json "$dir/covsim.json" \
    > "$dir/covsim.log" 2>&1 || { echo "FAILED: mtl covsim $name (see $dir/covsim.log)"; return 1; }
  printf '{"system": "%s", "seed": %s, "train_seconds": %s}\n' "$name" "$seed" "$((t1 - t0))" > "$dir/result.json"
  echo "done: $name seed $seed ($(( $(date +%s) - t0 )) s)"
}
export -f run_one
export out strata config

jobs_list() {
  local seed system task
  for seed in $seeds; do
    for system in $systems; do
      echo "$system $seed $(echo "$all_systems" | grep "^$system|" | cut -d'|' -f2)"
    done
    if [[ ${SINGLE:-1} == 1 ]]; then
      # Single-task baselines: the plain encoder and one head (no conditional modules), the
      # same steps on one task.
      for task in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))))' "$out/suite/tasks.json"); do
        echo "single-$task $seed mtl.tasks=$task model.camtl_attention=none model.camtl_bottleneck=false model.camtl_alignment=false model.camtl_cln=false mtl.sampler=uniform"
      done
    fi
  done
}
echo "== $(jobs_list | wc -l) runs, $jobs at a time (one thread each)"
jobs_list | while read -r name seed overrides; do printf '%s\0%s\0%s\0' "$name" "$seed" "$overrides"; done |
  xargs -0 -P "$jobs" -n 3 bash -c 'run_one "$@"' _

python3 bench/thesis_ch3_report.py --out-dir "$out" --systems "$systems" --seeds "$seeds" --config "$config" \
  --minutes "$(( ($(date +%s) - started) / 60 ))" --report "$report"
echo "== wrote $report"
