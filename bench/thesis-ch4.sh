#!/usr/bin/env bash
# Thesis ch. 4 (interactive chain prompting) in miniature on real ambiguity from what Debian
# ships: man-page names that live in several sections (`strata data ambig`: a sentence that
# mentions printf with its "(3)" removed, the paragraph around it as context, the section as the
# user's answer, the page's NAME line in the target language as the translation). Small causal
# LMs trained here play the roles (`strata chain text` makes their documents; each model learns
# its completions only, data.blocks = completion, and is decoded from the checkpoint of lowest
# validation loss on them):
#   NoExtra       one model, S -> A
#   WithContext   one model, S, C -> A
#   Chain         a translator (S -> Q and S, Q, U -> A) and a user (S, C, Q -> U)
# then `strata chain` runs the three with the user's answers corrupted at 0/10/30/50 %, and the
# chain once more with a perfect user, per seed,
# and bench/thesis_ch4_report.py writes docs/results/thesis-ch4.md. Resumable: finished runs and
# chain outputs are kept.
#
# The target language is English by default: every sense has an English NAME line, and a stock
# install translates only about a third of them (a French line for 63 of the 239 test mentions),
# so `en` gives the most test mentions; the target is then a gloss of the meant sense, which is
# what the information-flow question needs (the rendering depends on the sense).
#
# Usage: bench/thesis-ch4.sh [BUILD_DIR] [OUT_DIR]
#   SEEDS="1 2 3"  LANGUAGE=en  STEPS=1000 (per model)  TEST=1000 (test examples at most)
#   REPORT=docs/results/thesis-ch4.md
set -euo pipefail
build=${1:-build}
out=${2:-runs/thesis-ch4}
strata="$(realpath "$build")/strata"
seeds=${SEEDS:-"1 2 3"}
language=${LANGUAGE:-en}
steps=${STEPS:-1000}
test_examples=${TEST:-1000}
report=${REPORT:-docs/results/thesis-ch4.md}
config="$(realpath configs/thesis-ch4.toml)"
export OMP_NUM_THREADS=2
mkdir -p "$out"
out="$(realpath "$out")"
started=$(date +%s)

if [[ ! -f "$out/data/test.jsonl" ]]; then
  echo "== data: man-page names in several sections"
  "$strata" data ambig --out "$out/data" --quiet
fi
# The test examples that have the language's target, the first $test_examples of them (grep
# stops there itself: `| head` would end grep with SIGPIPE, which pipefail makes fatal).
grep -m "$test_examples" "\"$language\":" "$out/data/test.jsonl" > "$out/test.jsonl"

echo "== training documents per role"
mkdir -p "$out/docs"
roles="no_extra with_context translator user"
steps_of() {
  case $1 in translator) echo "ask,translate" ;; *) echo "$1" ;; esac
}
for role in $roles; do
  for split in train validation; do
    [[ -f "$out/docs/$role-$split.jsonl" ]] || "$strata" chain text --data "$out/data/$split.jsonl" \
      --language "$language" --steps "$(steps_of "$role")" --out "$out/docs/$role-$split.jsonl" 2> /dev/null
  done
done
if [[ ! -f "$out/tokenizer/strata-tokenizer.json" ]]; then
  echo "== tokenizer (byte-level BPE: it keeps the layout's newlines)"
  cat "$out"/docs/*-train.jsonl > "$out/docs/all-train.jsonl"
  "$strata" tokenizer train --input "$out/docs/all-train.jsonl" --out "$out/tokenizer" --vocab-size 2000 \
    --type byte-bpe > "$out/tokenizer.log" 2>&1
fi

train() {
  local role=$1 seed=$2 run="$out/runs/$1-s$2"
  [[ -f "$run/done" ]] && return 0
  echo "== training $role, seed $seed ($steps steps)"
  rm -rf "$run" && mkdir -p "$out/runs"
  "$strata" lm train --quiet --config "$config" --out "$run" data.train="$out/docs/$role-train.jsonl" \
    data.valid="$out/docs/$role-validation.jsonl" data.tokenizer="$out/tokenizer" train.seed="$seed" \
    train.max_steps="$steps" ${EXTRA:-} > "$run.log" 2>&1 || { echo "FAILED: training $run (see $run.log)"; exit 1; }
  touch "$run/done"
}

for seed in $seeds; do
  for role in $roles; do train "$role" "$seed"; done
  chain_dir="$out/chain-s$seed"
  if [[ ! -f "$chain_dir/scores.json" ]]; then
    echo "== chain, seed $seed"
    mkdir -p "$chain_dir"
    : > "$chain_dir/prompts.txt"  # no exemplars: the models were trained on the zero-shot layout
    cat > "$chain_dir/chain.toml" <<TOML
[chain]
prompts = "prompts.txt"
language = "$language"
systems = ["no_extra", "with_context", "chain"]
corrupt = [0.0, 0.1, 0.3, 0.5]
max_tokens = 48
seed = $seed
concurrency = 2
cache = "responses.jsonl"
[translator]
run = "$out/runs/translator-s$seed"
threads = 1
[user]
run = "$out/runs/user-s$seed"
threads = 1
[no_extra]
run = "$out/runs/no_extra-s$seed"
threads = 1
[with_context]
run = "$out/runs/with_context-s$seed"
threads = 1
TOML
    "$strata" chain --config "$chain_dir/chain.toml" --data "$out/test.jsonl" --out "$chain_dir" \
      > "$chain_dir/chain.log" 2>&1 || { echo "FAILED: the chain (see $chain_dir/chain.log)"; exit 1; }
  fi
  # The same chain with a perfect user (each mention's known section): what the translator
  # makes of the right answer, apart from how well the trained user answers.
  gold_dir="$out/chain-gold-s$seed"
  if [[ ! -f "$gold_dir/scores.json" ]]; then
    echo "== chain with a perfect user, seed $seed"
    mkdir -p "$gold_dir"
    "$strata" chain --config "$chain_dir/chain.toml" --data "$out/test.jsonl" --out "$gold_dir" \
      'chain.systems=["chain"]' 'chain.corrupt=[0.0]' user.run= user.gold=true \
      > "$gold_dir/chain.log" 2>&1 || { echo "FAILED: the chain with a perfect user (see $gold_dir/chain.log)"; exit 1; }
  fi
done

python3 bench/thesis_ch4_report.py --out-dir "$out" --seeds "$seeds" --language "$language" --steps "$steps" \
  --seconds $(( $(date +%s) - started )) --report "$report"
echo "== wrote $report"
