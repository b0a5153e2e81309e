"""PyTorch's scaled_dot_product_attention, forward + backward from a fixed random output
gradient (as strata's side), the peer of
`strata bench attention`: batch 1, 8 heads, head dim 64, fp32, the same length and threads.

Cases: dense (no mask: the CPU flash kernel) and, with --window W, a boolean mask that shows
keys within W of the query (torch computes every pair and masks; nothing is skipped).
Prints one JSON line: torch's version, the BLAS and its kernel, the SDPA backend chosen, and
per case the median and every round in milliseconds and the process's peak memory so far.
With --lockstep --case C, `strata bench attention` drives case C's rounds one at a time
between its own (the protocol: lockstep below).
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


def peak_rss_mb():
    """The process's peak resident memory so far (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def lockstep(run_round, ready, summary):
    """The --lockstep protocol of strata/bench/peer_program.h: print `ready` as a JSON line,
    then run one round per "round N" line on stdin, answering each with its wall-clock and
    process CPU time (every thread) in ms and what run_round(N) returns; on "end" or the end
    of stdin, print summary(answers) and return."""
    answers = []
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
        answers.append(answer)
        print(json.dumps(answer), flush=True)
    print(json.dumps(summary(answers)), flush=True)


def timed(step, rounds, warmup):
    for _ in range(warmup):
        step()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000.0)
    # The dense case runs first, so the window's peak is the larger of the two.
    return {"median_ms": statistics.median(times), "rounds_ms": times, "peak_rss_mb": peak_rss_mb()}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--length", type=int, default=4096)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--window", type=int, default=0, help="also time a banded boolean mask")
    parser.add_argument("--case", choices=["dense", "window"], help="time this case alone (default: both)")
    parser.add_argument("--lockstep", action="store_true", help="rounds of --case on request, one per stdin line")
    args = parser.parse_args()
    if args.lockstep and args.case is None:
        parser.error("--lockstep times one --case")
    if args.case == "window" and args.window <= 0:
        parser.error("--case window needs --window W")
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    shape = (1, args.heads, args.length, args.head_dim)
    q, k, v = (torch.randn(shape, requires_grad=True) for _ in range(3))
    dout = torch.randn(shape)

    def window_mask():
        # Keys within W of the query: j <= i + W and j >= i - W, built in booleans alone.
        return torch.ones((args.length, args.length), dtype=torch.bool).tril(args.window).triu(-args.window)

    def step(mask=None):
        F.scaled_dot_product_attention(q, k, v, attn_mask=mask).backward(dout)
        q.grad = k.grad = v.grad = None

    settings = {
        "torch": torch.__version__,
        "blas": blas_description(),
        "malloc": malloc_description(),
        "threads": torch.get_num_threads(),
        "sdpa_backend": {0: "math", 1: "flash", 2: "efficient"}.get(torch._fused_sdp_choice(q, k, v), "other"),
        "length": args.length,
    }
    # Each case builds its mask when it runs, so the dense case's peak memory is its own.
    masks = {"dense": lambda: None, "window": window_mask}
    cases = [args.case] if args.case else (["dense", "window"] if args.window > 0 else ["dense"])
    if args.lockstep:
        mask = masks[args.case]()
        if mask is not None:
            settings["window_visible_fraction"] = mask.sum().item() / mask.numel()
        for _ in range(args.warmup):
            step(mask)

        def summary(answers):
            times = [a["ms"] for a in answers]
            return dict(settings, case=args.case, median_ms=statistics.median(times) if times else None,
                        rounds_ms=times, peak_rss_mb=peak_rss_mb())

        lockstep(lambda _: step(mask), dict(settings, case=args.case), summary)
        return
    settings["cases"] = {}
    for case in cases:
        mask = masks[case]()
        settings["cases"][case] = timed(lambda: step(mask), args.rounds, args.warmup)
    print(json.dumps(settings))


if __name__ == "__main__":
    main()
