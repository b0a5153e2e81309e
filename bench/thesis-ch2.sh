#!/usr/bin/env bash
# Thesis ch. 2 (extract-then-abstract) in miniature on two corpora built from what Debian
# ships: man pages (intro = SYNOPSIS + DESCRIPTION, summary = the NAME line, rest = the other
# sections: the arXiv/PubMed analogue, documents longer than the context) and package
# descriptions (long -> short, split by source package: the Newsroom/BigPatent analogue,
# documents that fit). Per corpus: the unsupervised baselines and the Gold-Ext bound, Sent-CLF
# and Sent-PTR, and the TLM without extracts, with gold extracts tested on Sent-PTR's (G,M) and
# on gold (G,G, a bound), and trained and tested on Sent-PTR's (M,M); on the man pages also the
# TLM+E that reads 1,024-token windows with structure-aware sparse attention
# (configs/thesis-ch2-tlm-long.toml); every system's test pairs scored with ROUGE-1/2/3/L per
# example and their copy rates, then docs/results/thesis-ch2.md. Resumable: a system with
# pairs.jsonl and its scores is not redone.
# Resumable on another machine too: the whole experiment takes about 15 CPU-core hours, so
# each finished part of a (corpus, seed) keeps its outputs under KEEP (in the repository: the
# pairs without the texts they were made from, the copy rates, the validation losses), and a
# later run restores them instead of training again. They are kept with the corpus's
# fingerprint, and a run on a corpus that came out different (a newer Debian archive) stops
# rather than mix the two.
#
# Usage: bench/thesis-ch2.sh [BUILD_DIR] [OUT_DIR]
#   CORPORA="descriptions man"   SEEDS="1 2 3"
#   LISTS=DIR          apt lists (Packages, Translation-en) for the descriptions corpus
#   TRAIN_DOCS=...     training documents kept per corpus (descriptions 50000: all, man 4000)
#   TEST_DOCS=...      test documents scored (descriptions 500, man 300)
#   EXTRACTOR_STEPS=500 TLM_STEPS=8000   EXTRA="k=v ..." overrides for every training run
#   JOBS=2             parts of seeds trained side by side, one thread each
#   PARTS="extractors tlm tlm-e tlm-e-long"   the parts queued (default all): e.g. PARTS=tlm
#                      to train only the part that fits in the time left (a TLM+E part waits
#                      for its seed's extractors: queue them too unless they are kept)
#   VOCAB=4000         tokenizer vocabulary (the TLM's output layer is most of its cost)
#   REPORT=docs/results/thesis-ch2.md   written after each finished seed, from the kept ones
#   KEEP=docs/results/thesis-ch2/outputs   finished parts' outputs (commit them)
#   BASELINES_ONLY=1   the corpora, tokenizers and baselines, then the page: nothing is trained
set -euo pipefail
build=${1:-build}
out=${2:-runs/thesis-ch2}
strata="$(realpath "$build")/strata"
corpora=${CORPORA:-"descriptions man"}
seeds=${SEEDS:-"1 2 3"}
report=${REPORT:-docs/results/thesis-ch2.md}
keep=$(realpath -m "${KEEP:-docs/results/thesis-ch2/outputs}")
extractor_steps=${EXTRACTOR_STEPS:-500}
tlm_steps=${TLM_STEPS:-8000}
jobs=${JOBS:-2}
vocab=${VOCAB:-4000}
# One thread per run when seeds run side by side (more work done than one run on two threads).
threads=$(( jobs > 1 ? 1 : 2 ))
export OMP_NUM_THREADS=$threads
for part in ${PARTS:-}; do
  [[ " extractors tlm tlm-e tlm-e-long " == *" $part "* ]] ||
    { echo "PARTS: no part named '$part' (extractors, tlm, tlm-e, tlm-e-long)"; exit 1; }
done
# The checkout the runs are made from, kept beside their outputs: seeds kept on other machines
# may come from other commits, and the page says which.
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- src include CMakeLists.txt configs 2>/dev/null || commit="$commit+changes"

# The corpus's data, cut to its training and test sizes, and its tokenizer with the markers.
prepare() {
  local corpus=$1 dir="$out/$1" train_docs test_docs
  mkdir -p "$dir"
  if [[ ! -f "$dir/data/test.jsonl" ]]; then
    echo "== $corpus: building the corpus"
    if [[ $corpus == descriptions ]]; then
      "$strata" data descriptions --out "$dir/data" ${LISTS:+--lists "$LISTS" --no-fetch} --quiet
    else
      # gcloud's 16k generated pages repeat their NAME line in DESCRIPTION: they would be most of
      # the corpus and make lead-1 look like a summariser.
      "$strata" data manpages --out "$dir/data" --exclude 'gcloud*' --quiet
    fi
  fi
  if [[ $corpus == descriptions ]]; then train_docs=${TRAIN_DOCS:-50000} test_docs=${TEST_DOCS:-500}
  else train_docs=${TRAIN_DOCS:-4000} test_docs=${TEST_DOCS:-300}; fi
  head -n "$train_docs" "$dir/data/train.jsonl" > "$dir/train.jsonl"
  head -n 300 "$dir/data/validation.jsonl" > "$dir/valid.jsonl"
  head -n "$test_docs" "$dir/data/test.jsonl" > "$dir/test.jsonl"
  if [[ ! -f "$dir/tokenizer/strata-tokenizer.json" ]]; then
    echo "== $corpus: tokenizer (sentencepiece unigram, $vocab, with the TLM markers)"
    "$strata" tokenizer train --input "$dir/train.jsonl" --jsonl-field all --out "$dir/tokenizer" --vocab-size "$vocab" \
      --sample 300000 --special '[INTRO],[EXTRACT],[SUMMARY],[REST]' > "$dir/tokenizer.log" 2>&1 ||
      { echo "FAILED: the $corpus tokenizer (see $dir/tokenizer.log)"; exit 1; }
  fi
}

# ROUGE-1/2/3/L per example and the copy rates of a system's pairs (with the extract block's
# share when the pairs carry one).
score() {
  local pairs=$1 dir
  dir=$(dirname "$pairs")
  [[ -f "$dir/rouge.json" ]] || "$strata" eval rouge --pairs "$pairs" --stem --types rouge1,rouge2,rouge3,rougeL \
    --per-example "$dir/rouge-per-example.jsonl" --json > "$dir/rouge.json"
  local attribute=""
  if grep -q '"extract":"[^"]' "$pairs"; then attribute="--attribute"; fi
  [[ -f "$dir/copy.json" ]] || "$strata" eval copy --pairs "$pairs" $attribute --json > "$dir/copy.json" 2> /dev/null
}

# A baseline's pairs (seed-free).
baseline() {
  local corpus=$1 dir="$out/$1/systems/$2"; shift 2
  mkdir -p "$dir"
  [[ -f "$dir/pairs.jsonl" ]] || "$strata" baseline "$@" --data "$out/$corpus/test.jsonl" --out "$dir/pairs.jsonl" > /dev/null
  score "$dir/pairs.jsonl"
}

# A trained model: train once, keep the run.
train() {
  local run=$1 config=$2 steps=$3 corpus=$4; shift 4
  [[ -f "$run/done" ]] && return 0
  rm -rf "$run" && mkdir -p "$(dirname "$run")"
  # shellcheck disable=SC2086
  "$strata" train --config "$config" --out "$run" --quiet data.train="$out/$corpus/train.jsonl" \
    data.valid="$out/$corpus/valid.jsonl" data.tokenizer="$out/$corpus/tokenizer" train.max_steps="$steps" \
    train.threads="$threads" "$@" \
    ${EXTRA:-} > "$run.log" 2>&1 || { echo "FAILED: training $run (see $run.log)"; exit 1; }
  touch "$run/done"
}

# An extractor's pairs on a split.
extract() {
  local run=$1 data=$2 pairs=$3
  mkdir -p "$(dirname "$pairs")"
  [[ -f "$pairs" ]] || "$strata" extract --quiet --model "$run" --data "$data" --out "$pairs" > "$pairs.log" 2>&1 ||
    { echo "FAILED: extracting with $run (see $pairs.log)"; exit 1; }
}

# A TLM's summaries of the test split from one extract source.
summarize() {
  local run=$1 extracts=$2 corpus=$3 seed=$4 dir=$5
  mkdir -p "$dir"
  [[ -f "$dir/pairs.jsonl" ]] || "$strata" lm summarize --quiet --model "$run" --data "$out/$corpus/test.jsonl" \
    --extracts "$extracts" --seed "$seed" --out "$dir/pairs.jsonl" > "$dir/summarize.log" 2>&1 ||
    { echo "FAILED: summarising with $run (see $dir/summarize.log)"; exit 1; }
  score "$dir/pairs.jsonl"
}

# A seed trains in parts, each kept when it finishes, so that a session that stops mid-seed
# loses only the parts in flight: the extractors (with the (M,M) TLM, which trains on their
# picks), the TLM without extracts, TLM+E, and on the man pages the TLM+E that reads 1,024-token
# windows with sparse attention. The parts of a seed run side by side like seeds.
seed_parts() {
  echo "extractors tlm tlm-e"
  [[ $1 == man ]] && echo "tlm-e-long"
  return 0
}
# The runs whose validation losses a part keeps (corpus, seed, part), and the systems whose
# outputs it keeps.
part_runs() {
  case $3 in
    extractors) echo "sent_clf-s$2 sent_ptr-s$2 tlm-mm-s$2" ;;
    *) echo "$3-s$2" ;;
  esac
}
part_outputs() {
  case $3 in
    extractors) echo "sent_clf-s$2 sent_ptr-s$2 tlm-e-mm-s$2" ;;
    tlm) echo "tlm-s$2" ;;
    *) echo "$3-gm-s$2 $3-gg-s$2" ;;
  esac
}

# A finished part's outputs into KEEP: each system's pairs without the texts it read (the
# scores are computed again from them) and its copy rates (which need those texts), each run's
# validation losses; its done marker holds the seconds it took, and `commits` the checkout it
# ran from. The part that completes its seed marks the seed done with the seconds of all its
# parts.
keep_part() {
  local corpus=$1 seed=$2 part=$3 seconds=$4 c="$out/$1" k="$keep/$1" name total=0
  mkdir -p "$k/runs"
  for name in $(part_outputs "$corpus" "$seed" "$part"); do
    mkdir -p "$k/$name"
    python3 -c 'import json, sys
for line in sys.stdin:
    row = json.loads(line); print(json.dumps({k: row[k] for k in ("id", "prediction", "reference")}, ensure_ascii=False))' \
      < "$c/systems/$name/pairs.jsonl" > "$k/$name/pairs.jsonl"
    cp "$c/systems/$name/copy.json" "$k/$name/copy.json"
  done
  for name in $(part_runs "$corpus" "$seed" "$part"); do
    grep '"split":"valid"' "$c/runs/$name/metrics.jsonl" > "$k/runs/$name.valid.jsonl" || true
  done
  echo "$seconds" > "$k/s$seed.$part.done"
  echo "$seed $part $commit" >> "$k/commits"
  for part in $(seed_parts "$corpus"); do
    [[ -f "$k/s$seed.$part.done" ]] || return 0
    total=$(( total + $(cat "$k/s$seed.$part.done") ))
  done
  echo "$total" > "$k/s$seed.done"
  for part in $(seed_parts "$corpus"); do rm -f "$k/s$seed.$part.done"; done
}

# A kept part back into OUT_DIR, scored again: nothing is trained.
restore_part() {
  local corpus=$1 seed=$2 part=$3 c="$out/$1" k="$keep/$1" name
  for name in $(part_outputs "$corpus" "$seed" "$part"); do
    mkdir -p "$c/systems/$name"
    cp "$k/$name/pairs.jsonl" "$k/$name/copy.json" "$c/systems/$name/"
    score "$c/systems/$name/pairs.jsonl"
  done
  for name in $(part_runs "$corpus" "$seed" "$part"); do
    mkdir -p "$c/runs/$name" && cp "$k/runs/$name.valid.jsonl" "$c/runs/$name/metrics.jsonl"
  done
}

# The corpus as this experiment cut it, by content: kept seeds are only reused on the same one.
fingerprint() { (cd "$out/$1" && sha256sum train.jsonl valid.jsonl test.jsonl); }

# The extractors part: Sent-CLF and Sent-PTR and their picks of the test documents, then the
# (M,M) TLM trained on Sent-PTR's picks of the training and validation documents. Its ready
# marker says Sent-PTR's test picks are there for the TLM+E parts.
extractors_part() {
  local corpus=$1 seed=$2 c="$out/$1" extracts extractor
  for extractor in sent_clf sent_ptr; do
    train "$c/runs/$extractor-s$seed" configs/thesis-ch2-extractor.toml "$extractor_steps" "$corpus" \
      model.architecture="$extractor" train.seed="$seed"
    extract "$c/runs/$extractor-s$seed" "$c/test.jsonl" "$c/systems/$extractor-s$seed/pairs.jsonl"
    score "$c/systems/$extractor-s$seed/pairs.jsonl"
  done
  touch "$c/runs/extractors-s$seed.ready"
  extracts="$c/runs/sent_ptr-s$seed-extracts.jsonl"
  if [[ ! -f "$extracts" ]]; then
    extract "$c/runs/sent_ptr-s$seed" "$c/train.jsonl" "$c/runs/sent_ptr-s$seed-train-extracts.jsonl"
    extract "$c/runs/sent_ptr-s$seed" "$c/valid.jsonl" "$c/runs/sent_ptr-s$seed-valid-extracts.jsonl"
    cat "$c/runs/sent_ptr-s$seed-train-extracts.jsonl" "$c/runs/sent_ptr-s$seed-valid-extracts.jsonl" > "$extracts.tmp"
    mv "$extracts.tmp" "$extracts"
  fi
  train "$c/runs/tlm-mm-s$seed" configs/thesis-ch2-tlm.toml "$tlm_steps" "$corpus" \
    tlm.extracts="$extracts" train.seed="$seed"
  summarize "$c/runs/tlm-mm-s$seed" "$c/systems/sent_ptr-s$seed/pairs.jsonl" "$corpus" "$seed" "$c/systems/tlm-e-mm-s$seed"
}

# A TLM+E part (config, corpus, seed, part): trained on gold extracts, tested on gold (G,G) and,
# once the seed's extractors part has them, on Sent-PTR's picks (G,M).
tlm_e_part() {
  local config=$1 corpus=$2 seed=$3 part=$4 c="$out/$2"
  train "$c/runs/$part-s$seed" "$config" "$tlm_steps" "$corpus" tlm.extracts=gold train.seed="$seed"
  summarize "$c/runs/$part-s$seed" gold "$corpus" "$seed" "$c/systems/$part-gg-s$seed"
  until [[ -f "$c/runs/extractors-s$seed.ready" ]]; do
    [[ -f "$c/runs/extractors-s$seed.failed" ]] && { echo "FAILED: $part of $corpus seed $seed: its extractors failed"; exit 1; }
    sleep 20
  done
  summarize "$c/runs/$part-s$seed" "$c/systems/sent_ptr-s$seed/pairs.jsonl" "$corpus" "$seed" "$c/systems/$part-gm-s$seed"
}

# One part of one seed, trained, or restored when KEEP has it.
seed_part() {
  local corpus=$1 seed=$2 part=$3 c="$out/$1" k="$keep/$1" t0 seconds
  if [[ -f "$k/s$seed.done" || -f "$k/s$seed.$part.done" ]]; then
    restore_part "$corpus" "$seed" "$part"
    [[ $part == extractors ]] && touch "$c/runs/extractors-s$seed.ready"
    echo "restored: $corpus seed $seed, $part (from $k)"
    return 0
  fi
  t0=$(date +%s)
  case $part in
    extractors) extractors_part "$corpus" "$seed" ;;
    tlm) train "$c/runs/tlm-s$seed" configs/thesis-ch2-tlm.toml "$tlm_steps" "$corpus" tlm.extracts=none train.seed="$seed"
         summarize "$c/runs/tlm-s$seed" none "$corpus" "$seed" "$c/systems/tlm-s$seed" ;;
    tlm-e) tlm_e_part configs/thesis-ch2-tlm.toml "$corpus" "$seed" tlm-e ;;
    tlm-e-long) tlm_e_part configs/thesis-ch2-tlm-long.toml "$corpus" "$seed" tlm-e-long ;;
  esac
  seconds=$(( $(date +%s) - t0 ))
  flock "$out/.keep.lock" bash -c 'keep_part "$@"' _ "$corpus" "$seed" "$part" "$seconds"
  echo "done: $corpus seed $seed, $part ($seconds s)"
  if [[ -f "$k/s$seed.done" ]]; then
    echo "done: $corpus seed $seed"
    write_page
  fi
}

# The page from the seeds kept so far, after each one: a session that stops mid-queue leaves a
# page that says what it covers. Seeds finishing side by side take turns.
write_page() {
  flock "$out/.page.lock" python3 bench/thesis_ch2_report.py --out-dir "$out" --keep "$keep" --corpora "$corpora" \
    --planned "$corpora:$seeds" --tlm-steps "$tlm_steps" --extractor-steps "$extractor_steps" --report "$report"
  echo "== wrote $report"
}
export -f seed_part extractors_part tlm_e_part train extract summarize score seed_parts part_runs part_outputs \
  keep_part restore_part write_page
export out strata threads extractor_steps tlm_steps keep corpora seeds report commit EXTRA

for corpus in $corpora; do
  prepare "$corpus"
  c="$out/$corpus"
  if [[ -f "$keep/$corpus/fingerprint" ]]; then
    fingerprint "$corpus" | cmp -s - "$keep/$corpus/fingerprint" || {
      echo "FAILED: the $corpus corpus differs from the one its kept seeds were made on ($keep/$corpus/fingerprint;" \
        "the Debian archive or the installed man pages changed). Move $keep/$corpus away to start that corpus over."
      exit 1
    }
  else
    mkdir -p "$keep/$corpus" && fingerprint "$corpus" > "$keep/$corpus/fingerprint"
  fi
  section=""
  [[ $corpus == man ]] && section="--section DESCRIPTION"
  echo "== $corpus: baselines"
  # shellcheck disable=SC2086
  baseline "$corpus" lead lead --sentences 1 $section
  for method in lexrank textrank sumbasic; do
    # shellcheck disable=SC2086
    baseline "$corpus" "$method" "$method" --sentences 1 $section
  done
  baseline "$corpus" gold-ext evidence
  # The human summaries' own copy rate, from any baseline's pairs.
  [[ -f "$c/systems/lead/copy-reference.json" ]] || "$strata" eval copy --pairs "$c/systems/lead/pairs.jsonl" \
    --field reference --json > "$c/systems/lead/copy-reference.json"
done
if [[ -n ${BASELINES_ONLY:-} ]]; then
  write_page
  exit 0
fi
# Every corpus's seeds' parts in one queue, so no core waits while parts are left. A seed's
# extractors part comes before its TLM+E parts, which wait for its picks: it has started
# whenever they wait. It marks its failure so that they stop too.
rm -f "$out"/*/runs/extractors-s*.failed
for corpus in $corpora; do
  mkdir -p "$out/$corpus/runs"
  for seed in $seeds; do for part in $(seed_parts "$corpus"); do
    if [[ -z ${PARTS:-} || " $PARTS " == *" $part "* ]]; then printf '%s\0%s\0%s\0' "$corpus" "$seed" "$part"; fi
  done; done
done | xargs -0 -r -n 3 -P "$jobs" bash -c 'set -euo pipefail
  ( seed_part "$1" "$2" "$3" ) || { [[ $3 == extractors ]] && touch "$out/$1/runs/extractors-s$2.failed"; exit 1; }' _ ||
  { echo "FAILED: a seed's systems (its messages are above)"; exit 1; }

write_page
