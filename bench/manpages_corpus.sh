#!/usr/bin/env bash
# `strata data manpages` over every installed English man page, against man-db's lexgrog over
# the same files in the same run. lexgrog is what mandb runs to index pages: it decompresses
# each page and parses only its NAME section, while strata parses every section, splits
# sentences and writes JSONL. Both use 2 processes/threads. Best of 3 runs each.
# Usage: bench/manpages_corpus.sh [STRATA_BINARY]
set -euo pipefail
strata=${1:-build/strata}
command -v lexgrog >/dev/null || { echo "lexgrog (man-db) not installed: no peer" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
find /usr/share/man/man[0-9]* -maxdepth 1 \( -type f -o -type l \) > "$work/pages"
pages=$(wc -l < "$work/pages")

seconds() { # best wall time of 3 runs of "$@"
  local best=""
  for _ in 1 2 3; do
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    best=$(awk -v a="$best" -v b="$(awk -v x="$t0" -v y="$t1" 'BEGIN{print y-x}')" \
      'BEGIN{print (a=="" || b<a) ? b : a}')
  done
  echo "$best"
}

run_strata() { rm -rf "$work/corpus"; "$strata" data manpages --quiet --out "$work/corpus"; }
run_lexgrog() { xargs -P 2 -n 400 lexgrog < "$work/pages" || true; }  # exits 1 on pages without NAME

t_strata=$(seconds run_strata)
t_lexgrog=$(seconds run_lexgrog)
awk -v n="$pages" -v s="$t_strata" -v l="$t_lexgrog" 'BEGIN{
  printf "pages: %d\n", n
  printf "strata data manpages (full parse + JSONL): %6.2f s  %8.0f pages/s\n", s, n/s
  printf "lexgrog, NAME section only (peer):         %6.2f s  %8.0f pages/s\n", l, n/l
  printf "ratio strata/lexgrog time: %.2f (below 1: strata is faster)\n", s/l
}'
