#!/usr/bin/env bash
# Load on `strata serve` over loopback: rounds of REQUESTS greedy completions at each
# concurrency, sent by OpenAI's Node client (tests/serve/openai-client/load.mjs), with the
# server's resident memory read before and after every round (flat memory: no growth per
# request). Prints a table and writes OUT/serve-load.jsonl.
#
# Usage: bench/serve-load.sh [BUILD_DIR] [MODEL_RUN] [OUT_DIR]
#   MODEL_RUN: a causal_lm or bst_lm run directory; without one, a small causal LM is trained on
#   the installed man pages first (a few minutes).
#   REQUESTS=64 CONCURRENCY="1 2 4 8" MAX_TOKENS=32 WORKERS=2 QUEUE=16
set -euo pipefail
build=${1:-build}
model=${2:-}
out=${3:-runs/serve-load}
strata="$(realpath "$build")/strata"
client_dir="$(dirname "$0")/../tests/serve/openai-client"
requests=${REQUESTS:-64}
levels=${CONCURRENCY:-"1 2 4 8"}
max_tokens=${MAX_TOKENS:-32}
workers=${WORKERS:-2}
queue=${QUEUE:-16}
mkdir -p "$out"
[ -d "$client_dir/node_modules/openai" ] || { echo "serve-load: run scripts/install-deps first (the openai npm package)" >&2; exit 1; }

if [ -z "$model" ]; then
  model="$out/lm"
  if [ ! -d "$model" ]; then
    echo "serve-load: training a small causal LM on the installed man pages into $model"
    "$strata" data manpages --out "$out/man" --exclude 'gcloud*' --quiet
    "$strata" tokenizer train --input "$out/man/train.jsonl" --out "$out/tok" --vocab-size 2000 --type byte-bpe
    printf '[model]\narchitecture = "causal_lm"\npre_norm = true\nd_model = 128\nheads = 4\nd_ff = 512\ndecoder_layers = 2\nmax_positions = 512\n[data]\ntrain = "%s"\nvalid = "%s"\ntokenizer = "%s"\nblock_size = 128\n[train]\nmax_steps = 200\neval_docs = 0\n' \
      "$out/man/train.jsonl" "$out/man/validation.jsonl" "$out/tok" > "$out/lm.toml"
    "$strata" lm train --quiet --config "$out/lm.toml" --out "$model"
  fi
fi

"$strata" serve --model "$model" --name load --port 0 --workers "$workers" --queue "$queue" --quiet \
  > "$out/serve.out" 2> "$out/serve.err" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 600); do grep -q "listening on" "$out/serve.out" && break; sleep 0.1; done
port=$(sed -n 's/.*listening on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$out/serve.out")
[ -n "$port" ] || { echo "serve-load: the server did not start:" >&2; cat "$out/serve.err" >&2; exit 1; }
rss() { awk '/VmRSS/ {print $2}' "/proc/$server/status"; }

echo "strata serve (workers $workers, queue $queue) on port $port; $requests requests per round, $max_tokens tokens each"
echo "BLAS: OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
: > "$out/serve-load.jsonl"
node "$client_dir/load.mjs" "http://127.0.0.1:$port/v1" load 8 2 "$max_tokens" > /dev/null  # warm-up
printf '%-11s %9s %9s %9s %9s %9s %9s %12s\n' concurrency answered refused req/s tok/s p50_ms p99_ms rss_kb
for c in $levels; do
  before=$(rss)
  line=$(node "$client_dir/load.mjs" "http://127.0.0.1:$port/v1" load "$requests" "$c" "$max_tokens")
  after=$(rss)
  echo "$line" | python3 -c "
import json, sys
r = json.loads(sys.stdin.read()); r['rss_kb_before'] = $before; r['rss_kb_after'] = $after
print('%-11d %9d %9d %9.2f %9.1f %9.0f %9.0f %5d->%d' % (r['concurrency'], r['answered'], r['refused'], r['requests_per_second'],
      r['tokens_per_second'], r['p50_ms'] or 0, r['p99_ms'] or 0, r['rss_kb_before'], r['rss_kb_after']))
open('$out/serve-load.jsonl', 'a').write(json.dumps(r) + '\n')"
done
kill -TERM $server
wait $server
trap - EXIT
grep -q "shut down cleanly" "$out/serve.err" && echo "server stopped cleanly on SIGTERM"
