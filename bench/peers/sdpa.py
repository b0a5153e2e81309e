"""PyTorch's scaled_dot_product_attention, forward + backward of out.sum(), the peer of
`strata bench attention`: batch 1, 8 heads, head dim 64, fp32, the same length and threads.

Cases: dense (no mask: the CPU flash kernel) and, with --window W, a boolean mask that shows
keys within W of the query (torch computes every pair and masks; nothing is skipped).
Prints one JSON line: torch's version, the BLAS and its kernel, the SDPA backend chosen, and
per case the median and every round in milliseconds and the process's peak memory so far.
"""
import argparse
import ctypes
import json
import os
import resource
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def blas_description():
    for name in ("libblas.so.3", "libopenblas.so.0"):
        try:
            lib = ctypes.CDLL(name)
            lib.openblas_get_config.restype = ctypes.c_char_p
            lib.openblas_get_corename.restype = ctypes.c_char_p
            return "%s, core %s" % (lib.openblas_get_config().decode(), lib.openblas_get_corename().decode())
        except (OSError, AttributeError):
            continue
    return "not OpenBLAS"


def malloc_description():
    """glibc's malloc settings in force (bench/peers/run sets strata's heap policy)."""
    return os.environ.get("GLIBC_TUNABLES") or "glibc defaults"


def lockstep(run_round, ready, summary):
    """The --lockstep protocol of strata/bench/peer_program.h: print `ready` as a JSON line,
    then run one round per "round N" line on stdin, answering each with its wall-clock and
    process CPU time (every thread) in ms and what run_round(N) returns; on "end" or the end
    of stdin, print summary() and return."""
    print(json.dumps(ready), flush=True)
    for line in sys.stdin:
        words = line.split()
        if words == ["end"]:
            break
        if len(words) != 2 or words[0] != "round":
            sys.exit("lockstep: expected 'round N' or 'end', got %r" % line)
        wall, cpu = time.perf_counter(), time.process_time()
        extra = run_round(int(words[1]))
        answer = {"round": int(words[1]), "ms": (time.perf_counter() - wall) * 1000.0,
                  "cpu_ms": (time.process_time() - cpu) * 1000.0}
        answer.update(extra or {})
        print(json.dumps(answer), flush=True)
    print(json.dumps(summary()), flush=True)


def timed(step, rounds, warmup):
    for _ in range(warmup):
        step()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000.0)
    # The process's peak so far (Linux: kB); the dense case runs first, so the window's
    # figure is the larger of the two.
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return {"median_ms": statistics.median(times), "rounds_ms": times, "peak_rss_mb": peak_mb}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--length", type=int, default=4096)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--window", type=int, default=0, help="also time a banded boolean mask")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    shape = (1, args.heads, args.length, args.head_dim)
    q, k, v = (torch.randn(shape, requires_grad=True) for _ in range(3))

    def step(mask=None):
        F.scaled_dot_product_attention(q, k, v, attn_mask=mask).sum().backward()
        q.grad = k.grad = v.grad = None

    result = {
        "torch": torch.__version__,
        "blas": blas_description(),
        "malloc": malloc_description(),
        "threads": torch.get_num_threads(),
        "sdpa_backend": {0: "math", 1: "flash", 2: "efficient"}.get(torch._fused_sdp_choice(q, k, v), "other"),
        "length": args.length,
        "cases": {"dense": timed(step, args.rounds, args.warmup)},
    }
    if args.window > 0:
        index = torch.arange(args.length)
        mask = (index[:, None] - index[None, :]).abs() <= args.window
        result["cases"]["window"] = timed(lambda: step(mask), args.rounds, args.warmup)
        result["cases"]["window"]["visible_fraction"] = mask.float().mean().item()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
