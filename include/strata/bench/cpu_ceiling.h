#pragma once
// The CPU a benchmark ran on and the most fp32 multiply-adds its cores issue: the ceiling
// that every GFLOP/s figure, and every ratio to a peer, is read against. A kernel's lead over
// a peer on the same instructions cannot pass the ceiling over the peer's rate. The ceiling
// depends on the core, not only on its instruction set: AVX-512 doubles AVX2's peak where the
// FMA units are 512 bits wide (AMD Zen 5, most Xeons) and matches it where each 512-bit FMA
// runs as two 256-bit halves (Zen 4), so the same binary's lead over an AVX2 BLAS differs
// between machines that report the same flags.
#include <string>

namespace strata::bench {

struct CpuIdentity {
  std::string model = "unknown";  // /proc/cpuinfo's "model name"
  int family = -1, model_number = -1;
  bool avx512 = false, avx2_fma = false;
};

// Parsed from /proc/cpuinfo's text (the first processor's block).
CpuIdentity parse_cpuinfo(const std::string& text);
// This machine's, read once.
const CpuIdentity& this_cpu();
// "AMD EPYC, family 25 model 17, AVX-512": for a benchmark's header and JSON.
std::string describe(const CpuIdentity& cpu);

// fp32 FMA throughput measured on `threads` threads (independent chains of the widest FMA
// the CPU has, per thread; the best of 5 runs of ~20 ms), in GFLOP/s counting a multiply-add
// as 2. Which instructions ran is `fma_peak_isa()`.
double fma_peak_gflops(int threads);
const char* fma_peak_isa();
// "fp32 FMA peak 224.1 GFLOP/s (avx512 fma, 2 threads, measured)".
std::string describe_peak(double gflops, int threads);

}  // namespace strata::bench
