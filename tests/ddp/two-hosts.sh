#!/usr/bin/env bash
# Two "machines" joined by --master: network namespaces linked by a veth pair, each running one
# worker of `strata train --nnodes 2`, against one process trained on the same batches.
# Needs root (or CAP_NET_ADMIN) and iproute2: without them it says so and exits 77, which ctest
# reports as skipped.
#   tests/ddp/two-hosts.sh STRATA_BINARY
set -euo pipefail
strata=$(realpath "$1")

skip() { echo "SKIPPED: $*"; exit 77; }
command -v ip >/dev/null || skip "iproute2's ip is not installed"
probe="strata_probe_$$"
ip netns add "$probe" 2>/dev/null || skip "cannot create network namespaces here (needs root or CAP_NET_ADMIN)"
ip netns del "$probe"

a="stA$$" b="stB$$"
work=$(mktemp -d)
cleanup() {
  ip netns del "$a" 2>/dev/null || true
  ip netns del "$b" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$a"
ip netns add "$b"
ip link add "va$$" netns "$a" type veth peer name "vb$$" netns "$b"
ip -n "$a" addr add 10.231.0.1/24 dev "va$$"
ip -n "$b" addr add 10.231.0.2/24 dev "vb$$"
for ns in "$a" "$b"; do ip -n "$ns" link set lo up; done
ip -n "$a" link set "va$$" up
ip -n "$b" link set "vb$$" up

# A small summarisation set and its tokenizer.
python3 - "$work" <<'PY'
import json, random, sys
random.seed(5)
words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau".split()
for name, count in (("train", 60), ("valid", 8)):
    with open(f"{sys.argv[1]}/{name}.jsonl", "w") as out:
        for _ in range(count):
            sentences = [" ".join(random.choice(words) for _ in range(8)) + "." for _ in range(random.randint(2, 4))]
            out.write(json.dumps({"document": " ".join(sentences), "summary": sentences[0]}) + "\n")
PY
"$strata" tokenizer train --input "$work/train.jsonl" --out "$work/tok" --vocab-size 300 --type byte-bpe >/dev/null
cat > "$work/tiny.toml" <<TOML
[model]
d_model = 32
heads = 2
d_ff = 64
encoder_layers = 1
decoder_layers = 1
max_positions = 128
dropout = 0.0
[data]
train = "$work/train.jsonl"
valid = "$work/valid.jsonl"
tokenizer = "$work/tok"
max_source_tokens = 64
[train]
max_steps = 4
warmup_steps = 1
eval_every = 4
eval_docs = 2
max_tokens = 512
threads = 1
TOML

"$strata" train --quiet --config "$work/tiny.toml" --out "$work/one" >/dev/null
master=10.231.0.1:29531
GLOO_SOCKET_IFNAME="va$$" ip netns exec "$a" "$strata" train --quiet --nnodes 2 --node-rank 0 --master "$master" \
  --ddp-timeout 60 --config "$work/tiny.toml" --out "$work/host-a" > "$work/a.log" 2>&1 &
host_a=$!
GLOO_SOCKET_IFNAME="vb$$" ip netns exec "$b" "$strata" train --quiet --nnodes 2 --node-rank 1 --master "$master" \
  --ddp-timeout 60 --config "$work/tiny.toml" --out "$work/host-b" > "$work/b.log" 2>&1 || { cat "$work/b.log"; exit 1; }
wait "$host_a" || { cat "$work/a.log"; exit 1; }
grep -q "data-parallel: 2 processes" "$work/a.log" || { echo "host a did not train as rank 0 of 2:"; cat "$work/a.log"; exit 1; }
[ ! -e "$work/host-b/checkpoints" ] || { echo "host b wrote checkpoints: only rank 0 may"; exit 1; }

python3 - "$work/one/checkpoints/step-00000004/model.safetensors" "$work/host-a/checkpoints/step-00000004/model.safetensors" <<'PY'
import array, json, struct, sys
def tensors(path):
    data = open(path, "rb").read()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])
    out = {}
    for name, entry in header.items():
        if name == "__metadata__" or entry["dtype"] != "F32":
            continue
        begin, end = entry["data_offsets"]
        values = array.array("f")
        values.frombytes(data[8 + size + begin:8 + size + end])
        out[name] = values
    return out
one, two = tensors(sys.argv[1]), tensors(sys.argv[2])
assert one.keys() == two.keys(), "the two runs hold different tensors"
worst = max(abs(x - y) for name in one for x, y in zip(one[name], two[name]))
print(f"two hosts vs one process: largest weight difference {worst:.3g}")
sys.exit(0 if worst < 1e-5 else 1)
PY
