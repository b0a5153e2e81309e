"""The texts bench/thesis-ch5.sh uses from a corpus of {"id", "text"} lines, and what it keeps
of a run's per-token scores.

  cap IN.jsonl OUT.jsonl BYTES    the first documents, in order, up to BYTES of text (the last
                                  one cut): the corpora hold far more than a miniature reads
  join IN.jsonl OUT.txt BYTES     the first documents' texts joined by a blank line, cut at BYTES:
                                  the test text scored token by token
  chunks RUN_DIR                  RUN_DIR/scores*.jsonl (`strata lm score`'s lines, one a token)
                                  summed in chunks of 256 tokens into RUN_DIR/chunks.json, with the
                                  loss of a unigram model fit on the scored tokens; the token files
                                  are then removed: all the report reads of them, small
                                  enough to keep in the repository (at 60 kB of test text,
                                  about 6 MB of lines a run become 7 KB)

Each writes then renames."""
import glob
import json
import math
import os
import sys

CHUNK = 256  # tokens a bootstrap unit: neighbouring tokens' losses are not independent
VOCAB = 2000  # the tokenizer's size (bench/thesis-ch5.sh), for the unigram's add-one smoothing


def documents(path):
    with open(path) as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def cut(text, limit):
    return text.encode()[:limit].decode("utf-8", "ignore")


def cap(source, target, limit):
    used, lines = 0, []
    for row in documents(source):
        if used >= limit:
            break
        row["text"] = cut(row["text"], limit - used)
        used += len(row["text"].encode())
        lines.append(json.dumps(row))
    write(target, "\n".join(lines) + "\n")


def join(source, target, limit):
    texts, used = [], 0
    for row in documents(source):
        texts.append(row["text"])
        used += len(row["text"].encode())
        if used >= limit:
            break
    write(target, cut("\n\n".join(texts), limit))


def unigram_loss(ids):
    """Loss of a unigram model fit on the scored tokens themselves (add-one): a baseline that
    has seen the test text's token frequencies, so beating it is the stronger claim."""
    counts = {}
    for t in ids:
        counts[t] = counts.get(t, 0) + 1
    total = len(ids) + VOCAB
    return -sum(math.log((counts[t] + 1) / total) for t in ids) / len(ids)


def chunks(run_dir):
    files = sorted(glob.glob(os.path.join(run_dir, "scores*.jsonl")))
    if not files:
        sys.exit(f"thesis_ch5_text.py: no scores*.jsonl in {run_dir}")
    sums, ids = {}, None
    for path in files:
        tokens, logprobs = [], []
        for number, row in enumerate(documents(path), 1):
            try:
                tokens.append(row["token"])
                logprobs.append(float(row["logprob"]))
            except (KeyError, TypeError, ValueError) as e:
                sys.exit(f"{path}:{number}: expected \"token\" and \"logprob\": {e}")
        if ids is not None and tokens != ids:
            sys.exit(f"{path}: scores other tokens than {files[0]}")
        ids = tokens
        sums[os.path.basename(path)] = [sum(logprobs[s:s + CHUNK]) for s in range(0, len(logprobs), CHUNK)]
    out = {"chunk": CHUNK, "tokens": len(ids), "unigram_loss": unigram_loss(ids), "logprob_sums": sums}
    write(os.path.join(run_dir, "chunks.json"), json.dumps(out) + "\n")
    for path in files:
        os.remove(path)


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "chunks":
        chunks(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] in ("cap", "join"):
        {"cap": cap, "join": join}[sys.argv[1]](sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(__doc__)
