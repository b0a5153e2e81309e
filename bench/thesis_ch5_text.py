"""The texts bench/thesis-ch5.sh uses from a corpus of {"id", "text"} lines.

  cap IN.jsonl OUT.jsonl BYTES    the first documents, in order, up to BYTES of text (the last
                                  one cut): the corpora hold far more than a miniature reads
  join IN.jsonl OUT.txt BYTES     the first documents' texts joined by a blank line, cut at BYTES:
                                  the test text scored token by token

Both write then rename."""
import json
import os
import sys


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


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] not in ("cap", "join"):
        sys.exit(__doc__)
    {"cap": cap, "join": join}[sys.argv[1]](sys.argv[2], sys.argv[3], int(sys.argv[4]))
