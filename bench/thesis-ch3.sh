#!/usr/bin/env bash
# Thesis ch. 3 (CA-MTL) in miniature on the Debian suite: a small BERT pretrained with masked
# LM on the package descriptions, then Table 3.1's cumulative ablation (pi_rand MTL -> +
# conditional attention -> + bottleneck -> + alignment and CLN -> + MT-Uncertainty), the
# samplers against each other, FBA and the hard block mask, single-task baselines, new-task
# adaptation (Tables 3.3 and B.2) and a longer run; each run scored on the suite's test split
# with every prediction kept and its CovSim measured, then docs/results/thesis-ch3.md.
# Resumable: a run with result.json is not trained again. Runs go in order of what the page
# needs most: Table 3.1 for every seed first, the longer run last.
#
# Usage: bench/thesis-ch3.sh [BUILD_DIR] [OUT_DIR]
#   SEEDS="1 2 3"    seeds per system           JOBS=2  runs side by side (one thread each)
#   SYSTEMS="..."    system names (default all, see below)
#   SINGLE=1         also the single-task baselines (0: not)
#   ADAPT=1          also new-task adaptation (0: not)
#   HELD_OUT=man-section   tasks left out of multi-task training, the new tasks of the
#                    adaptation runs: man-section (a man page's opening words -> its section) is a
#                    domain apart from the package descriptions and large enough to score, as
#                    SciTail is for GLUE. The suite's own transfer task, header-section, is left
#                    out too but not adapted to: its test split is one class (libdevel).
#   LISTS=DIR        apt lists already fetched (Debian's Packages and Translation-en); default:
#                    fetched into OUT_DIR/suite/apt-lists with apt's own client
#   PRETRAIN_STEPS=4000   masked-LM steps of the shared backbone
#   ADAPT_STEPS=300  steps of each adaptation run
#   EXTRA="k=v ..."  more overrides for every multi-task run (e.g. train.max_steps=50 for a smoke test)
#   REPORT=docs/results/thesis-ch3.md
#   LIST=1           print the runs ("name seed base overrides") and stop
set -euo pipefail
build=${1:-build}
out=${2:-runs/thesis-ch3}
strata="$build/strata"
seeds=${SEEDS:-"1 2 3"}
jobs=${JOBS:-2}
report=${REPORT:-docs/results/thesis-ch3.md}
config=configs/thesis-ch3.toml
pretrain_steps=${PRETRAIN_STEPS:-4000}
adapt_steps=${ADAPT_STEPS:-300}
held_out=${HELD_OUT:-man-section}

# system|overrides. The first five are Table 3.1's rows, each adding to the one before. The
# other samplers, FBA and the hard mask change one thing of cond-align-cln (the full model under
# pi_rand): FBA and the hard mask run under pi_rand so that the attention's effect is not mixed
# with MT-Uncertainty's (which starves the other tasks here; the page shows it). The long row is
# cond-align-cln trained three times as long.
all_systems='
mtl-rand|model.camtl_attention=none model.camtl_bottleneck=false model.camtl_alignment=false model.camtl_cln=false mtl.sampler=uniform
cond-attn|model.camtl_bottleneck=false model.camtl_alignment=false model.camtl_cln=false mtl.sampler=uniform
cond-bottleneck|model.camtl_alignment=false model.camtl_cln=false mtl.sampler=uniform
cond-align-cln|mtl.sampler=uniform
ca-mtl|mtl.sampler=mt-uncertainty
size|mtl.sampler=size
temperature|mtl.sampler=temperature
fba|model.camtl_attention=full mtl.sampler=uniform
hard|model.camtl_attention=hard mtl.sampler=uniform
ca-mtl-weighted|mtl.sampler=mt-uncertainty-weighted
cond-align-cln-long|mtl.sampler=uniform train.max_steps=3000 train.warmup_steps=300 train.eval_every=750
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

# The tasks of the multi-task runs: the suite's, less the transfer tasks held out.
mtl_tasks=$(python3 -c 'import json, sys
held = set(sys.argv[2].split())
print(",".join(n for n, t in json.load(open(sys.argv[1])).items() if not t.get("transfer") and n not in held))' \
  "$out/suite/tasks.json" "$held_out")
plain="model.camtl_attention=none model.camtl_bottleneck=false model.camtl_alignment=false model.camtl_cln=false mtl.sampler=uniform"

# One run: train from BASE (bert: the masked-LM backbone; otherwise the named run of the same
# seed, waited for), then score the test split; CovSim for runs of more than one task.
run_one() {
  local name=$1 seed=$2 base=$3 overrides=$4 dir="$out/runs/$1-s$2" base_dir
  if [[ -f "$dir/result.json" ]]; then return 0; fi
  if [[ $base == bert ]]; then
    base_dir="$out/bert"
  else
    base_dir="$out/runs/$base-s$seed/run"
    while [[ ! -f "$out/runs/$base-s$seed/result.json" ]]; do
      [[ -f "$out/runs/$base-s$seed/failed" ]] && { echo "FAILED: $name seed $seed (its base $base failed)"; return 1; }
      sleep 30
    done
  fi
  rm -rf "$dir" && mkdir -p "$dir"
  local t0 t1
  t0=$(date +%s)
  # shellcheck disable=SC2086
  OMP_NUM_THREADS=1 "$strata" train --config "$config" --out "$dir/run" --quiet train.seed="$seed" \
    data.train="$out/suite" data.valid="$out/suite" data.tokenizer="$out/tokenizer" \
    train.base_model="$base_dir" $overrides ${EXTRA:-} > "$dir/train.log" 2>&1 ||
    { touch "$dir/failed"; echo "FAILED: $name seed $seed (see $dir/train.log)"; return 1; }
  t1=$(date +%s)
  OMP_NUM_THREADS=1 "$strata" mtl eval --model "$dir/run" --split test --predictions "$dir/predictions.jsonl" \
    --json "$dir/test.json" > "$dir/eval.log" 2>&1 ||
    { touch "$dir/failed"; echo "FAILED: mtl eval $name (see $dir/eval.log)"; return 1; }
  if [[ $name != single-* && $name != adapt-* ]]; then
    OMP_NUM_THREADS=1 "$strata" mtl covsim --model "$dir/run" --examples 200 --json "$dir/covsim.json" \
      > "$dir/covsim.log" 2>&1 || { touch "$dir/failed"; echo "FAILED: mtl covsim $name (see $dir/covsim.log)"; return 1; }
  fi
  printf '{"system": "%s", "seed": %s, "train_seconds": %s}\n' "$name" "$seed" "$((t1 - t0))" > "$dir/result.json"
  echo "done: $name seed $seed ($(( $(date +%s) - t0 )) s)"
}
export -f run_one
export out strata config

# Runs as "name seed base overrides", in the order the page needs them.
jobs_list() {
  local seed system task init pct
  local first="mtl-rand cond-attn cond-bottleneck cond-align-cln ca-mtl" last="ca-mtl-weighted cond-align-cln-long"
  system_runs() {
    for seed in $seeds; do
      for system in "$@"; do
        [[ " $systems " == *" $system "* ]] || continue
        echo "$system $seed bert mtl.tasks=$mtl_tasks $(echo "$all_systems" | grep "^$system|" | cut -d'|' -f2)"
      done
    done
  }
  system_runs $first
  system_runs $(for s in $systems; do [[ " $first $last " == *" $s "* ]] || echo "$s"; done)
  if [[ ${ADAPT:-1} == 1 && " $systems " == *" cond-align-cln "* ]]; then
    # New-task adaptation (Table 3.3): a new head on the trained cond-align-cln, the task
    # embedding fresh (random) or copied from section (the nearest task), beside the backbone
    # fine-tuned alone (bert), on 0.1-100 % of the transfer task; Table B.2: every trained
    # task's embedding at 0.1 %, the nearest this setup has to the thesis's zero-shot (a new
    # head has to learn something).
    for seed in $seeds; do
      for task in $held_out; do
        for pct in 0.1 1 10 100; do
          local adapt="mtl.tasks=$task data.train_fraction=$(python3 -c "print($pct / 100)") mtl.sampler=uniform train.max_steps=$adapt_steps train.warmup_steps=$((adapt_steps / 10)) train.eval_every=$((adapt_steps / 3))"
          echo "adapt-$task-random-$pct $seed cond-align-cln $adapt mtl.new_task_embedding=random"
          echo "adapt-$task-section-$pct $seed cond-align-cln $adapt mtl.new_task_embedding=section"
          echo "adapt-$task-bert-$pct $seed bert $adapt $plain"
        done
      done
      task=${held_out%% *}
      for init in ${mtl_tasks//,/ }; do
        [[ $init == section ]] && continue
        echo "adapt-$task-$init-0.1 $seed cond-align-cln mtl.tasks=$task data.train_fraction=0.001 mtl.sampler=uniform train.max_steps=$adapt_steps train.warmup_steps=$((adapt_steps / 10)) train.eval_every=$((adapt_steps / 3)) mtl.new_task_embedding=$init"
      done
    done
  fi
  if [[ ${SINGLE:-1} == 1 ]]; then
    # Single-task baselines: the plain encoder and one head (no conditional modules), the
    # same steps on one task.
    for seed in $seeds; do
      for task in ${mtl_tasks//,/ }; do echo "single-$task $seed bert mtl.tasks=$task $plain"; done
    done
  fi
  system_runs $last
}
if [[ ${LIST:-0} == 1 ]]; then jobs_list; exit 0; fi
echo "== $(jobs_list | wc -l) runs, $jobs at a time (one thread each)"
jobs_list | while read -r name seed base overrides; do printf '%s\0%s\0%s\0%s\0' "$name" "$seed" "$base" "$overrides"; done |
  xargs -0 -P "$jobs" -n 4 bash -c 'run_one "$@"' _

python3 bench/thesis_ch3_report.py --out-dir "$out" --systems "$systems" --held-out "$held_out" --seeds "$seeds" --config "$config" \
  --minutes "$(( ($(date +%s) - started) / 60 ))" --report "$report"
echo "== wrote $report"
