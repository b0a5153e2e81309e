#!/usr/bin/env bash
# Thesis ch. 5 (Block-State Transformer) in miniature, Table 5.1 and Fig. 5.3: small language
# models trained from scratch on a long real corpus built from this machine (code: /usr/include
# files concatenated along their paths; markup: raw roff man pages; books: rendered man pages
# and /usr/share/doc text per package), SLIDE, Transformer-XL and the Block-Recurrent
# Transformer against BST:SH/MH/MF with the S4D or unstructured kernel; test perplexity beside a unigram model's, per-token scores for
# paired bootstraps, and the loss when the test text is read in windows of L/8, L, 4L and 16L
# tokens (trained at L); then docs/results/thesis-ch5.md. Resumable: a run with result.json is not trained again.
# The experiment is longer than a session (more than 6 hours of one core), so each finished run's
# results are kept in the repository under KEEP (bench/kept_runs.sh; its per-token scores summed in
# chunks of 256 tokens, all the report reads of them), as are the benchmarks' and generation's
# outputs: a later invocation, on this machine or another with the same corpora, restores them
# and runs only what is missing.
#
# Usage: bench/thesis-ch5.sh [BUILD_DIR] [OUT_DIR]
#   CORPORA="code markup books"  the corpora   SEEDS="1 2 3"   seeds per system
#   SYSTEMS="..."    system names (default all, see below)         JOBS=2  runs side by side
#   ABLATIONS=0      1: also Tables 5.2-5.4 in miniature on the first corpus (27 more runs, below)
#   EXTRA="k=v ..."  more overrides for every run (e.g. train.max_steps=50 for a smoke test)
#   TRAIN_BYTES=8000000, EVAL_BYTES=500000: the text of each split used (documents in order,
#                    the last one cut): the corpora hold 100-250 MB, far more than a run reads
#   TEST_BYTES=60000 the test text scored token by token (the first test documents, concatenated)
#   BENCH=1          also run `strata bench bst` and `bst-long` (0: not)       REPORT=docs/results/thesis-ch5.md
#   GENERATE=1       also time cached generation against rerunning, after the runs (0: not)
#   KEEP=docs/results/thesis-ch5-outputs   where finished runs and measurements are kept
set -euo pipefail
build=${1:-build}
out=${2:-runs/thesis-ch5}
strata="$build/strata"
corpora=${CORPORA:-"code markup books"}
seeds=${SEEDS:-"1 2 3"}
jobs=${JOBS:-2}
test_bytes=${TEST_BYTES:-60000}
train_bytes=${TRAIN_BYTES:-8000000}
eval_bytes=${EVAL_BYTES:-500000}
report=${REPORT:-docs/results/thesis-ch5.md}
keep=$(realpath -m "${KEEP:-docs/results/thesis-ch5-outputs}")
first=$(echo "$corpora" | cut -d' ' -f1)  # the ablations' and cached generation's corpus
config=configs/thesis-ch5.toml
vocab=2000  # the byte-level BPE tokenizer's, per corpus
windows="64 512 2048 8192"

# system|overrides: every system of the experiment. XL, as the thesis's TRSF-XL:2048 beside
# SLIDE:512, has a window 4x SLIDE's and no gradient through the previous window. BRecT
# (fixed gates, skip) has one recurrent layer with W state vectors, at layer 2 of 4 (Meliad:
# layer 10 of 12), SLIDE layers elsewhere; its state is not carried across training sequences.
all_systems='
slide|model.bst_layers=""
xl|model.bst_layers="" model.bst_memory=xl model.bst_window=256
brect|model.bst_layers="2" model.bst_context=recurrent model.bst_filters=64
sh-s4d|model.bst_context=sh model.bst_kernel=s4d
mh-s4d|model.bst_context=mh model.bst_kernel=s4d
mf-s4d|model.bst_context=mf model.bst_kernel=s4d
sh-unstruct|model.bst_context=sh model.bst_kernel=unstructured
mf-unstruct|model.bst_context=mf model.bst_kernel=unstructured
'
# Tables 5.2-5.4 in miniature, each a BST:SH:S4D model that differs from sh-s4d (BST layers at
# {1, 3} of 0-3, N = 16) in one setting: a single BST layer at each depth (5.2), three and four
# BST layers (5.3; one is t52-at1, two is sh-s4d), and N = 8, 32, 64 states (5.4).
ablation_systems='
t52-at0|model.bst_layers="0"
t52-at1|model.bst_layers="1"
t52-at2|model.bst_layers="2"
t52-at3|model.bst_layers="3"
t53-3layers|model.bst_layers="1,2,3"
t53-4layers|model.bst_layers="0,1,2,3"
t54-n8|model.bst_states=8
t54-n32|model.bst_states=32
t54-n64|model.bst_states=64
'
systems=${SYSTEMS:-$(echo "$all_systems" | cut -d'|' -f1 | xargs)}
ablations=""
[[ ${ABLATIONS:-0} == 1 ]] && ablations=$(echo "$ablation_systems" | cut -d'|' -f1 | xargs)
all_systems+=$ablation_systems
started=$(date +%s)
source bench/kept_runs.sh

# A corpus, its tokenizer (byte-level BPE, $vocab) and its test text, made once.
prepare() {
  local corpus=$1 dir="$out/$1" split
  if [[ ! -f "$dir/data/test.jsonl" ]]; then
    echo "== corpus $corpus"
    "$strata" data "$corpus" --out "$dir/data"
  fi
  mkdir -p "$dir/use"
  for split in train validation test; do
    [[ -f "$dir/use/$split.jsonl" ]] ||
      python3 bench/thesis_ch5_text.py cap "$dir/data/$split.jsonl" "$dir/use/$split.jsonl" \
        "$([[ $split == train ]] && echo "$train_bytes" || echo "$eval_bytes")"
  done
  if [[ ! -f "$dir/tokenizer/strata-tokenizer.json" ]]; then
    echo "== tokenizer for $corpus: byte-level BPE, $vocab"
    "$strata" tokenizer train --input "$dir/use/train.jsonl" --out "$dir/tokenizer" --vocab-size "$vocab" --type byte-bpe
  fi
  [[ -f "$dir/test.txt" ]] || python3 bench/thesis_ch5_text.py join "$dir/use/test.jsonl" "$dir/test.txt" "$test_bytes"
  # Kept runs are only reused on the same texts and tokenizer.
  keep_inputs "$keep/$corpus" "$dir/use/"{train,validation,test}.jsonl "$dir/tokenizer/strata-tokenizer.json" "$dir/test.txt"
}

# Cached generation, timed after the queue (the machine otherwise quiet) on the first corpus's seed-1
# models of slide, sh-s4d and mf-unstruct (kept runs have no weights: those are trained again): after
# prompts of 2, 16 and 60 kB of the test text, with the cache (S4D: its recurrence; the
# unstructured filter: re-convolved) and without (the whole sequence again every step). lm generate
# times the prompt's step apart from the later steps; the cached ones are cheap, so they run 128
# steps to be timed steadily, the reruns 8 (at 60 kB each takes seconds). One JSON row each, to stdout.
generate() {
  local dir=$1 system=$2 text=$3 kb cache steps line
  for kb in 2 16 60; do
    head -c $((kb * 1000)) "$text" > "$dir/prompt.txt"
    for cache in "" "--no-cache"; do
      steps=$([[ -z $cache ]] && echo 128 || echo 8)
      # shellcheck disable=SC2086  # $cache: no flag or one
      line=$(OMP_NUM_THREADS=1 "$strata" lm generate --json --max-length $steps --min-length $steps --model "$dir/run" \
        --prompt-file "$dir/prompt.txt" $cache 2> /dev/null) || { echo "FAILED: lm generate $system $kb kB $cache" >&2; continue; }
      python3 -c 'import json,sys; j=json.loads(sys.argv[1]); j.pop("text"); j.pop("tokens");
j.update(system=sys.argv[2], prompt_kb=int(sys.argv[3]), machine=sys.argv[4]); print(json.dumps(j))' \
        "$line" "$system" "$kb" "$(machine_name)"
    done
  done
  rm -f "$dir/prompt.txt"
}

# The folder of SYSTEM's seed-1 model on the first corpus that generation is timed on: the run's
# own while its weights are here, else one of its own (kept runs have no weights).
timed_model() {
  local dir="$out/$first/runs/$1-s1"
  [[ -d "$dir/run/checkpoints" ]] && echo "$dir" || echo "$out/$first/generate/$1-s1"
}

# One model trained into DIR/run (its log DIR/train.log), one thread.
train_model() {
  local dir=$1 corpus=$2 system=$3 seed=$4 overrides
  overrides=$(echo "$all_systems" | grep "^$system|" | cut -d'|' -f2)
  # shellcheck disable=SC2086
  OMP_NUM_THREADS=1 "$strata" train --config "$config" --out "$dir/run" --quiet train.seed="$seed" \
    data.train="$out/$corpus/use/train.jsonl" data.valid="$out/$corpus/use/validation.jsonl" \
    data.tokenizer="$out/$corpus/tokenizer" $overrides ${EXTRA:-} > "$dir/train.log" 2>&1 ||
    { echo "FAILED: $corpus $system seed $seed (see $dir/train.log)"; return 1; }
}

# One system and seed on one corpus: train, test perplexity, per-token scores in one pass and
# in fixed windows (summed in chunks: chunks.json); result.json marks it finished, and the run is
# kept.
run_one() {
  local corpus=$1 system=$2 seed=$3 dir="$out/$1/runs/$2-s$3" kept="$keep/$1/runs/$2-s$3"
  restore_run "$dir" "$kept" "$corpus $system seed $seed" && return 0
  rm -rf "$dir" && mkdir -p "$dir"
  local t0 t1 window
  t0=$(date +%s)
  train_model "$dir" "$corpus" "$system" "$seed" || return 1
  t1=$(date +%s)
  OMP_NUM_THREADS=1 "$strata" lm eval --json --model "$dir/run" --data "$out/$corpus/use/test.jsonl" \
    > "$dir/test.json" 2> "$dir/eval.log" || { echo "FAILED: lm eval $system (see $dir/eval.log)"; return 1; }
  OMP_NUM_THREADS=1 "$strata" lm score --model "$dir/run" --text "$out/$corpus/test.txt" --out "$dir/scores.jsonl" \
    2> "$dir/score.log" || { echo "FAILED: lm score $system (see $dir/score.log)"; return 1; }
  for window in $windows; do
    OMP_NUM_THREADS=1 "$strata" lm score --window "$window" --model "$dir/run" --text "$out/$corpus/test.txt" \
      --out "$dir/scores-w$window.jsonl" 2>> "$dir/score.log" || { echo "FAILED: lm score --window $window"; return 1; }
  done
  python3 bench/thesis_ch5_text.py chunks "$dir" || { echo "FAILED: chunks of $dir's scores"; return 1; }
  local params
  params=$(grep -o 'all params: [0-9,]*' "$dir/train.log" | tr -dc '0-9')
  printf '{"corpus": "%s", "system": "%s", "seed": %s, "parameters": %s, "train_seconds": %s, "machine": "%s"}\n' \
    "$corpus" "$system" "$seed" "${params:-0}" "$((t1 - t0))" "$(machine_name)" > "$dir/result.json"
  keep_files "$dir" "$kept" result.json test.json chunks.json run/metrics.jsonl
  keep_commit "$keep" "$corpus/$system-s$seed"
  echo "done: $corpus $system seed $seed ($(( $(date +%s) - t0 )) s)"
}
export -f run_one train_model machine_name keep_files restore_files restore_run keep_commit
export out strata config all_systems windows keep first

for corpus in $corpora; do prepare "$corpus"; done
jobs_list() {  # "corpus system seed", a seed at a time so that a cut-short run still has whole tables
  local seed corpus system
  for seed in $seeds; do
    for corpus in $corpora; do for system in $systems; do echo "$corpus $system $seed"; done; done
    for system in $ablations; do echo "$first $system $seed"; done
  done
}
echo "== $(jobs_list | wc -l) runs, $jobs at a time (one thread each)"
jobs_list | xargs -P "$jobs" -n 3 bash -c 'run_one "$@"' _

# Fig. 5.4: one layer's forward time, SLIDE against BST, in one run (two threads); and the
# long-context headline: one training step of a BST stack at 1,048,576 tokens beside SLIDE's.
# Measured once, after the runs (the machine otherwise quiet), and kept.
for bench in bst bst-long; do
  [[ ${BENCH:-1} == 1 && ! -f "$out/bench-$bench.json" ]] || continue
  if [[ -f "$keep/bench-$bench.json" ]]; then
    cp "$keep/bench-$bench.json" "$out/" && echo "restored: bench $bench (from $keep)" && continue
  fi
  if "$strata" bench "$bench" --json "$out/bench-$bench.json" > "$out/bench-$bench.log" 2>&1; then
    cp "$out/bench-$bench.json" "$keep/"
  else
    echo "FAILED: bench $bench (see $out/bench-$bench.log)"
  fi
done

# Cached generation (above), once, after the runs, and kept.
if [[ ${GENERATE:-1} == 1 && ! -f "$out/generate.jsonl" ]]; then
  if [[ -f "$keep/generate.jsonl" ]]; then
    cp "$keep/generate.jsonl" "$out/" && echo "restored: cached generation (from $keep)"
  else
    # A kept run has no weights: its model is trained again (same seed) for the timing alone.
    models=""
    for system in slide sh-s4d mf-unstruct; do models+="$(timed_model $system) $system "; done
    # shellcheck disable=SC2016  # expanded by the inner bash
    echo "$models" | xargs -P "$jobs" -n 2 bash -c '[[ -d "$1/run/checkpoints" ]] && exit 0
      echo "== training $first $2 seed 1 again for the generation timing (its kept run has no weights)"
      rm -rf "$1" && mkdir -p "$1" && train_model "$1" "$first" "$2" 1' _ || true
    rows=""
    for system in slide sh-s4d mf-unstruct; do
      dir=$(timed_model $system)
      if [[ -d "$dir/run/checkpoints" ]]; then
        rows+=$(generate "$dir" "$system" "$out/$first/test.txt")$'\n'
      else
        echo "cached generation: no weights for $first $system seed 1: not timed"
      fi
    done
    if [[ -n ${rows//$'\n'/} ]]; then
      printf '%s' "$rows" > "$out/generate.jsonl.tmp" && mv "$out/generate.jsonl.tmp" "$out/generate.jsonl"
      cp "$out/generate.jsonl" "$keep/"
    fi
  fi
fi

python3 bench/thesis_ch5_report.py --out-dir "$out" --corpora "$corpora" --systems "$systems" --config "$config" \
  --ablations "$ablations" --vocab "$vocab" --train-bytes "$train_bytes" \
  --windows "$windows" --minutes "$(( ($(date +%s) - started) / 60 ))" --report "$report"
echo "== wrote $report"
