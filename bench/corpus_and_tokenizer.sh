# Sourced by the experiment scripts: the man-page corpus and its tokenizer in OUT, made once,
# and lead_baseline.
# Needs $strata (the binary) and $out (the experiment's directory).
if [[ ! -f "$out/corpus/test.jsonl" ]]; then
  echo "== corpus: the installed man pages (sections and subsections give the tree)"
  "$strata" data manpages --out "$out/corpus" --exclude 'gcloud*'
fi
if [[ ! -f "$out/tokenizer/strata-tokenizer.json" ]]; then
  echo "== tokenizer: unigram 8000 with [SEP] and the structural markers [SEC], [SEC-L1..4]"
  "$strata" tokenizer train --input "$out/corpus/train.jsonl" --out "$out/tokenizer" --vocab-size 8000 --type unigram
fi

# lead_baseline DATA DIR: the trivial baseline every summary page reports beside its systems,
# the first sentence of DESCRIPTION, with per-document ROUGE for the paired bootstraps.
lead_baseline() {
  local data=$1 dir=$2
  [[ ! -f "$dir/rouge-per-example.jsonl" ]] || return 0
  echo "== trivial baseline: the first sentence of DESCRIPTION"
  mkdir -p "$dir"
  "$strata" baseline lead --data "$data/test.jsonl" --section DESCRIPTION --out "$dir/pairs.jsonl"
  "$strata" eval rouge --pairs "$dir/pairs.jsonl" --stem --per-example "$dir/rouge-per-example.jsonl" > /dev/null
}
