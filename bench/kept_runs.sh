# shellcheck shell=bash
# Sourced by experiment scripts too long for one session: each finished run's outputs are kept
# in the repository (under a KEEP folder), so that a later session, on this machine or another,
# restores them instead of training again and runs only what is missing. A run is kept whole or
# not at all; JSON Lines files are kept gzipped and without their rows' "source" (the input text,
# which the corpus holds).
#
# keep_inputs KEEP FILE...   the inputs the kept runs were made from, by content: the first call
#                            writes KEEP/fingerprint, later ones stop the script when they differ
# keep_files SRC DEST PATH...  SRC/PATH (files or folders, relative) into DEST
# restore_files KEPT DEST      a kept folder back, unzipped
# restore_run DIR KEPT LABEL   succeeds when run DIR needs no training: it has its result.json,
#                            or KEPT has one and is restored into DIR
# keep_base SRC DEST FILE...   a pretrained run that later runs start from (--base): FILEs and
#                            its weights (the checkpoint --base loads, without optimizer state)
# keep_commit KEEP NAME        records in KEEP/commits the checkout NAME ran from
# machine_name               the CPU a run's timings were taken on ("AMD EPYC, family 25 model 17,
#                            2 cores"): kept runs may come from several machines
# require_finished PAGE DIR... stops the script, PAGE left as it was, unless every run DIR has
#                            its result.json

keep_inputs() {
  local keep=$1 now
  shift
  now=$(sha256sum "$@" | awk '{print $1}')
  if [[ -f "$keep/fingerprint" ]]; then
    [[ "$now" == "$(cat "$keep/fingerprint")" ]] || {
      echo "FAILED: the inputs ($*) differ from those the runs kept in $keep were made on" \
        "($keep/fingerprint: the Debian archive or the installed man pages changed). Move $keep away to start over." >&2
      exit 1
    }
  else
    mkdir -p "$keep" && echo "$now" > "$keep/fingerprint"
  fi
}

keep_files() {
  local src=$1 dest=$2 path
  shift 2
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  for path in "$@"; do
    mkdir -p "$(dirname "$dest.tmp/$path")"
    cp -r "$src/$path" "$dest.tmp/$path"
  done
  find "$dest.tmp" -name '*.jsonl' -print0 | while IFS= read -r -d '' file; do
    python3 -c 'import json, sys
for line in sys.stdin:
    row = json.loads(line)
    if isinstance(row, dict): row.pop("source", None)
    print(json.dumps(row, ensure_ascii=False))' < "$file" | gzip -n > "$file.gz"
    rm "$file"
  done
  rm -rf "$dest" && mv "$dest.tmp" "$dest"
}

restore_files() {
  local kept=$1 dest=$2
  mkdir -p "$dest"
  cp -r "$kept/." "$dest/"
  find "$dest" -name '*.jsonl.gz' -exec gunzip -f {} +
}

restore_run() {
  local dir=$1 kept=$2 label=$3
  [[ -f "$dir/result.json" ]] && return 0
  [[ -f "$kept/result.json" ]] || return 1
  rm -rf "$dir" && restore_files "$kept" "$dir"
  echo "restored: $label (from $kept)"
}

keep_base() {
  local src=$1 dest=$2 pointer=best checkpoint
  shift 2
  [[ -f "$src/checkpoints/best" ]] || pointer=latest
  checkpoint=$(cat "$src/checkpoints/$pointer")
  keep_files "$src" "$dest" "$@" "checkpoints/$pointer" \
    "checkpoints/$checkpoint/"{model.safetensors,config.json,trainer_state.json,tokenizer}
}

keep_commit() {
  local commit
  commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  git diff --quiet HEAD -- src include CMakeLists.txt configs 2>/dev/null || commit="$commit+changes"
  echo "$2 $commit" >> "$1/commits"
}

machine_name() {
  awk -F': ' '/^model name/ && !n {n = $2} /^cpu family/ && !f {f = $2} /^model\t/ && !m {m = $2}
    END {printf "%s, family %s model %s, ", n, f, m}' /proc/cpuinfo
  echo "$(nproc) cores"
}

require_finished() {
  local page=$1 dir missing=0
  shift
  for dir in "$@"; do [[ -f "$dir/result.json" ]] || missing=$((missing + 1)); done
  if (( missing > 0 )); then
    echo "== $missing of $# runs not finished (see FAILED above): $page left as it was; rerun to finish"
    exit 1
  fi
}
