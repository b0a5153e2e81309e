# Sourced by the experiment scripts: the man-page corpus and its tokenizer in OUT, made once.
# Needs $strata (the binary) and $out (the experiment's directory).
if [[ ! -f "$out/corpus/test.jsonl" ]]; then
  echo "== corpus: the installed man pages (sections and subsections give the tree)"
  "$strata" data manpages --out "$out/corpus" --exclude 'gcloud*'
fi
if [[ ! -f "$out/tokenizer/strata-tokenizer.json" ]]; then
  echo "== tokenizer: unigram 8000 with [SEP] and the structural markers [SEC], [SEC-L1..4]"
  "$strata" tokenizer train --input "$out/corpus/train.jsonl" --out "$out/tokenizer" --vocab-size 8000 --type unigram
fi
