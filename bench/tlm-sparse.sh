#!/usr/bin/env bash
# What structure-aware sparse attention buys thesis ch. 2's TLM on long man pages, in wall-clock:
# training steps of configs/thesis-ch2-tlm-long.toml (1,024-token windows; the summary reads
# everything before it, every other token the 64 tokens before it) against the same model with
# dense causal attention, timed in the same run, alternating ROUNDS times, each on THREADS
# threads. Prints the tokens per second of each (the median over the logged steps after the
# first 10) and their ratio.
#
# Usage: bench/tlm-sparse.sh [BUILD_DIR] [OUT_DIR]
#   DATA=runs/thesis-ch2/man   a corpus directory of bench/thesis-ch2.sh (train.jsonl, valid.jsonl,
#                              tokenizer/); made here from the installed man pages when missing
#   STEPS=60 ROUNDS=2 THREADS=2
set -euo pipefail
build=${1:-build}
out=${2:-runs/tlm-sparse}
strata="$(realpath "$build")/strata"
data=${DATA:-runs/thesis-ch2/man}
steps=${STEPS:-60}
rounds=${ROUNDS:-2}
threads=${THREADS:-2}
export OMP_NUM_THREADS=$threads
mkdir -p "$out"

if [[ ! -f "$data/tokenizer/strata-tokenizer.json" ]]; then
  data="$out/man"
  if [[ ! -f "$data/tokenizer/strata-tokenizer.json" ]]; then
    echo "== the man-page corpus and its tokenizer (once)"
    "$strata" data manpages --out "$data/data" --exclude 'gcloud*' --quiet
    head -n 4000 "$data/data/train.jsonl" > "$data/train.jsonl"
    head -n 300 "$data/data/validation.jsonl" > "$data/valid.jsonl"
    "$strata" tokenizer train --input "$data/train.jsonl" --jsonl-field all --out "$data/tokenizer" --vocab-size 4000 \
      --sample 300000 --special '[INTRO],[EXTRACT],[SUMMARY],[REST]' > "$data/tokenizer.log" 2>&1 ||
      { echo "FAILED: the tokenizer (see $data/tokenizer.log)"; exit 1; }
  fi
fi

# Tokens per second of one timed run: the median of the logged training rows after step 10.
time_run() {
  local name=$1; shift
  local run="$out/$name"
  rm -rf "$run"
  "$strata" train --config configs/thesis-ch2-tlm-long.toml --out "$run" --quiet data.train="$data/train.jsonl" \
    data.valid="$data/valid.jsonl" data.tokenizer="$data/tokenizer" train.max_steps="$steps" train.warmup_steps=10 \
    train.eval_every=100000 train.threads="$threads" train.seed=1 "$@" > "$run.log" 2>&1 ||
    { echo "FAILED: $name (see $run.log)"; exit 1; }
  python3 -c 'import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(round(statistics.median(r["tokens_per_s"] for r in rows if r.get("split") == "train" and r["step"] > 10)))' \
    "$run/metrics.jsonl"
}

echo "BLAS: OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}; threads: $threads; $steps steps per run; $rounds rounds"
dense=() sparse=()
for round in $(seq "$rounds"); do
  dense+=("$(time_run "dense-$round" model.decoder_attention="")")
  sparse+=("$(time_run "sparse-$round")")
  echo "round $round: dense ${dense[-1]} tokens/s, sparse ${sparse[-1]} tokens/s"
done
python3 - "${#dense[@]}" "${dense[@]}" "${sparse[@]}" <<'EOF'
import statistics, sys
n = int(sys.argv[1])
dense = [float(x) for x in sys.argv[2:2 + n]]
sparse = [float(x) for x in sys.argv[2 + n:]]
d, s = statistics.median(dense), statistics.median(sparse)
print(f"dense causal: {d:.0f} tokens/s; window(64) | query_segment(summary): {s:.0f} tokens/s; "
      f"sparse / dense = {s / d:.2f} (median of {n} rounds)")
EOF
