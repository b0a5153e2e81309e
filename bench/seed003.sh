#!/usr/bin/env bash
# Seed 003 (patterns) in miniature: small encoders trained from scratch for extractive
# summarisation of man pages and for topic segmentation of man pages (boundaries = section
# breaks), vanilla against patterns injected in 4 of 8 and 8 of 8 heads (4, 8 and 12 of 12),
# the ablations over pattern combinations for both tasks (Tables 2 and 7), and the PAL study
# (Tables 3 and 6) on a masked-LM-pretrained encoder; 3 seeds each. Every extractive run is
# scored on its top sentence, and on its top 3 without and with trigram blocking (Tables 4-6);
# every segmentation run at 0.5 and at a threshold tuned on validation. Then the pipeline's analyses (head importance, pattern
# relevance, top-3 heads, attention agreement across seeds) and docs/results/seed003.md.
# Resumable: a run with scores is not trained again. Each finished run's outputs, each analysis
# and the PAL study's encoder (with its weights) are kept under KEEP in the repository
# (bench/kept_runs.sh), so that the experiment spans sessions and machines: a later run restores
# them and trains the rest. The analyses need their runs' weights, which are not kept: they run
# as soon as their runs finish, and the queue trains the runs they need first. The page is
# written once every planned run has finished.
#
# Usage: bench/seed003.sh [BUILD_DIR] [OUT_DIR]
#   SEEDS="1 2 3"   seeds per system       JOBS=2        runs side by side (one thread each)
#   SYSTEMS="..."   system names (default all, see below)   REPORT=docs/results/seed003.md
#   PRETRAIN_STEPS=1500  masked-LM steps of the PAL study's encoder (one thread, beside the other runs)
#   EXTRA="k=v ..." more overrides for every run (e.g. a shorter train.max_steps for a smoke test)
#   KEEP=docs/results/seed003-outputs   where finished runs, analyses and the encoder are kept
set -euo pipefail
build=${1:-build}
out=${2:-runs/seed003}
strata="$build/strata"
seeds=${SEEDS:-"1 2 3"}
jobs=${JOBS:-2}
report=${REPORT:-docs/results/seed003.md}
keep=$(realpath -m "${KEEP:-docs/results/seed003-outputs}")
config=configs/seed003.toml
wide="model.heads=12 model.d_model=96"
# The PAL study starts from the masked-LM encoder (its head is new) and, as the seed's PALs
# are added "along with the parameters of the original model", trains all of it.
bert="--base $out/bert train.base_exclude=[\"classifier.*\"] train.train_only=[]"

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
ext-6x12-p8|extractive-patterns|$wide model.inject_heads=8
ext-6x12-p12|extractive-patterns-all|$wide
seg-6x8|segmentation|
seg-6x8-p4|segmentation-patterns|
seg-6x8-p8|segmentation-patterns-all|
seg-6x8-m|segmentation-m|
seg-6x8-i|segmentation-i|
seg-6x8-p|segmentation-p|
seg-6x8-mi|segmentation-mi|
seg-6x8-mp|segmentation-mp|
seg-6x8-ip|segmentation-ip|
bert-ext|extractive|$bert
bert-pal|pal|$bert
bert-pal-p|pal-patterns|$bert
"
systems=${SYSTEMS:-$(echo "$all_systems" | cut -d'|' -f1 | xargs)}
mkdir -p "$out/runs" "$out/analysis"
started=$(date +%s)

source bench/corpus_and_tokenizer.sh
source bench/kept_runs.sh
keep_inputs "$keep" "$out/corpus/"{train,validation,test}.jsonl "$out/tokenizer/strata-tokenizer.json"
for kept in "$keep"/analysis/*/; do
  [[ -d $kept && ! -f "$out/analysis/$(basename "$kept")/done" ]] || continue
  restore_files "$kept" "$out/analysis/$(basename "$kept")"
done
# The PAL study's encoder, pretrained on one thread while the systems from scratch train on the
# others (one thread does more per core than two on this model).
pretrain_bert() {
  local steps=${PRETRAIN_STEPS:-1500} t0
  echo "== masked-LM pretraining of the PAL study's encoder ($steps steps, 1 thread, beside the other runs)"
  rm -rf "$out/bert"
  t0=$(date +%s)
  OMP_NUM_THREADS=1 "$strata" pretrain --config "$config" --out "$out/bert" --quiet model.head=token \
    data.tokenizer="$out/tokenizer" data.train="$out/corpus/train.jsonl" data.valid="$out/corpus/validation.jsonl" \
    train.max_steps="$steps" train.warmup_steps=$((steps / 10)) train.eval_every=$((steps / 4)) \
    train.metric=valid_loss train.threads=1 ${EXTRA:-} > "$out/bert.log" 2>&1 || { echo "FAILED: pretraining (see $out/bert.log)"; return 1; }
  echo "$(( $(date +%s) - t0 ))" > "$out/bert/done"
  keep_base "$out/bert" "$keep/bert" config.toml metrics.jsonl "done"
  keep_commit "$keep" bert
}
pretraining=""
if [[ ! -f "$out/bert/done" && -f "$keep/bert/done" ]]; then
  restore_files "$keep/bert" "$out/bert"
  echo "== the PAL study's encoder: restored from $keep/bert"
fi
if [[ ! -f "$out/bert/done" ]] && echo " $systems " | grep -q " bert-"; then
  pretrain_bert &
  pretraining=$!
fi

# The pipeline of §3.1 (kind, run, flags): head importance, pattern relevance or attention
# agreement across seeds, into OUT_DIR/analysis/KIND-RUN and kept; the report reads the JSON.
analyze() {
  local kind=$1 name=$2 dir="$out/analysis/$1-$2"
  shift 2
  [[ ! -f "$dir/done" ]] || return 0
  mkdir -p "$dir"
  if "$strata" analyze "$kind" --data "$out/corpus/validation.jsonl" --out "$dir" --quiet "$@" > "$dir.log" 2>&1; then
    touch "$dir/done"
    keep_files "$dir" "$keep/analysis/$kind-$name" .
  else
    echo "FAILED: analyze $kind $name (see $dir.log)"
  fi
}
all_patterns=matching_token,intra_sentence,intra_context,previous_token,next_token,special_token,punctuation
# The analyses of seed 1's models, run while the weights exist: head importance of vanilla and
# patterned models (and of the PAL models' PAL heads, Fig. 4, unnormalised: it compares two
# models) and the global relevance of every pattern in the vanilla ones.
analyses_of() {  # analyses_of RUN_NAME RUN_DIR
  case $1 in
    ext-6x8-s1|seg-6x8-s1) analyze heads "$1" --model "$2/run"
                           analyze patterns "$1" --model "$2/run" --patterns "$all_patterns" ;;
    ext-6x8-p4-s1|seg-6x8-p4-s1) analyze heads "$1" --model "$2/run" ;;
    bert-pal-s1|bert-pal-p-s1) analyze heads "$1" --model "$2/run" --normalize none ;;
  esac
}

# One system and seed: train, then score the test split; result.json holds what the report reads.
run_one() {
  local system=$1 seed=$2 dir="$out/runs/$1-s$2" kept="$keep/runs/$1-s$2"
  local line recipe overrides
  line=$(echo "$all_systems" | grep "^$system|")
  recipe=$(echo "$line" | cut -d'|' -f2)
  overrides=$(echo "$line" | cut -d'|' -f3)
  restore_run "$dir" "$kept" "$system seed $seed" && return 0
  rm -rf "$dir" && mkdir -p "$dir"
  local t0 t1 t2
  t0=$(date +%s%N)
  set -f  # the overrides hold globs (train.base_exclude) for strata, not for the shell
  # shellcheck disable=SC2086
  OMP_NUM_THREADS=1 "$strata" train --config "$config" --recipe "$recipe" --out "$dir/run" --quiet \
    train.seed="$seed" data.train="$out/corpus/train.jsonl" data.valid="$out/corpus/validation.jsonl" \
    data.tokenizer="$out/tokenizer" $overrides ${EXTRA:-} > "$dir/train.log" 2>&1 ||
    { echo "FAILED: $system seed $seed (see $dir/train.log)"; return 1; }
  t1=$(date +%s%N)
  if [[ $recipe == segmentation* ]]; then
    # At 0.5 and at the threshold that maximises validation F1; one line per candidate.
    OMP_NUM_THREADS=1 "$strata" segment --model "$dir/run" --data "$out/corpus/test.jsonl" --json "$dir/test.json" \
      --tune-on "$out/corpus/validation.jsonl" --out "$dir/candidates.jsonl" --quiet > "$dir/eval.log" 2>&1 ||
      { echo "FAILED: segment $system seed $seed (see $dir/eval.log)"; return 1; }
  else
    # The top sentence (the reference is one line), then the top 3 without and with trigram
    # blocking (Tables 4-6: blocking cannot change a one-sentence extract); per-document ROUGE
    # of each for the paired bootstraps.
    local setting tag
    for setting in "top1 --top-k 1 --no-trigram-blocking" "top3 --top-k 3 --no-trigram-blocking" \
                   "top3-trigram --top-k 3 --trigram-blocking"; do
      tag=${setting%% *}
      # shellcheck disable=SC2086
      OMP_NUM_THREADS=1 "$strata" extract --model "$dir/run" --data "$out/corpus/test.jsonl" ${setting#* } \
        --json "$dir/test-$tag.json" --out "$dir/extracts-$tag.jsonl" --quiet > "$dir/eval-$tag.log" 2>&1 ||
        { echo "FAILED: extract $system seed $seed (see $dir/eval-$tag.log)"; return 1; }
      "$strata" eval rouge --pairs "$dir/extracts-$tag.jsonl" --stem --per-example "$dir/rouge-$tag.jsonl" > /dev/null ||
        { echo "FAILED: rouge $system seed $seed"; return 1; }
    done
  fi
  t2=$(date +%s%N)
  local params rho
  params=$(grep -o 'all params: [0-9,]*' "$dir/train.log" | tr -dc '0-9')
  rho=$(grep -o 'rho = [0-9.]*' "$dir/train.log" | grep -o '[0-9.]*$' || echo 0)
  printf '{"system": "%s", "recipe": "%s", "seed": %s, "parameters": %s, "rho": %s, "train_seconds": %s, "eval_seconds": %s}\n' \
    "$system" "$recipe" "$seed" "$params" "${rho:-0}" "$(( (t1 - t0) / 1000000 ))e-3" "$(( (t2 - t1) / 1000000 ))e-3" > "$dir/result.json.tmp"
  mv "$dir/result.json.tmp" "$dir/result.json"
  # shellcheck disable=SC2046  # the run's output files, one word each
  keep_files "$dir" "$kept" $(cd "$dir" && find . -maxdepth 1 -type f ! -name '*.log' -printf '%P\n') run/metrics.jsonl
  keep_commit "$keep" "$system-s$seed"
  OMP_NUM_THREADS=1 analyses_of "$system-s$seed" "$dir"
  echo "done: $system seed $seed ($(( (t2 - t0) / 1000000000 )) s)"
}
export -f run_one analyze analyses_of keep_files restore_files restore_run keep_commit
export out strata config all_systems keep all_patterns

# The systems from scratch, then (its encoder pretrained) the PAL study. First the runs the
# analyses need together (the vanilla models' every seed, for their agreement, and seed 1 of
# the patterned ones), then seed by seed, so that a queue stopped early has every system's
# first seeds.
queue() {  # queue pal|scratch
  local seed system kind first
  first=$(for system in ext-6x8 seg-6x8; do for seed in $seeds; do echo "$system $seed"; done; done
          echo "ext-6x8-p4 1"; echo "seg-6x8-p4 1")
  for seed in $seeds; do for system in $systems; do
    case $system in bert-*) kind=pal ;; *) kind=scratch ;; esac
    [[ $kind == "$1" ]] || continue
    if grep -qx "$system $seed" <<< "$first"; then echo "0 $system $seed"; else echo "1 $system $seed"; fi
  done; done | sort -s -k1,1n | cut -d' ' -f2-
}
echo "== $(( $(queue scratch | wc -l) + $(queue pal | wc -l) )) runs, $jobs at a time (one thread each)"
queue scratch | xargs -P "$jobs" -n 2 bash -c 'run_one "$@"' _
if [[ -n $pretraining ]]; then wait "$pretraining" || exit 1; fi
queue pal | xargs -P "$jobs" -n 2 bash -c 'run_one "$@"' _

# How much the vanilla models' attention agrees across seeds (§3.1.2's JSD), once every seed's
# weights are here (runs restored from KEEP have none: their agreement was kept when it ran).
for system in ext-6x8 seg-6x8; do
  [[ " $systems " == *" $system "* && ! -f "$out/analysis/agreement-$system/done" ]] || continue
  models=()
  for seed in $seeds; do
    # A restored run has no weights.
    if [[ -d "$out/runs/$system-s$seed/run/checkpoints" ]]; then models+=(--model "$out/runs/$system-s$seed/run"); fi
  done
  if (( ${#models[@]} / 2 == $(wc -w <<< "$seeds") && ${#models[@]} >= 4 )); then
    OMP_NUM_THREADS=2 analyze agreement "$system" "${models[@]}" --max-examples 200
  else
    echo "== agreement of $system across seeds: not run (its seeds' weights are not all in $out/runs)"
  fi
done

# shellcheck disable=SC2046  # run folders, one word each
require_finished "$report" $(for seed in $seeds; do for system in $systems; do echo "$out/runs/$system-s$seed"; done; done)
python3 bench/seed003_report.py --runs "$out/runs" --analysis "$out/analysis" --config "$config" \
  --systems "$systems" --strata "$strata" --bert "$out/bert" --minutes "$(( ($(date +%s) - started) / 60 ))" \
  --out "$report"
echo "== wrote $report"
