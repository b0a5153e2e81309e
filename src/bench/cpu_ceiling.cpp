#include "strata/bench/cpu_ceiling.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define STRATA_X86_FMA_PROBE 1
#endif

namespace strata::bench {

namespace {

std::string field_value(const std::string& line) {
  const auto colon = line.find(':');
  if (colon == std::string::npos) return "";
  const auto start = line.find_first_not_of(" \t", colon + 1);
  return start == std::string::npos ? "" : line.substr(start);
}

bool has_word(const std::string& words, const std::string& word) {
  std::istringstream in(words);
  std::string w;
  while (in >> w)
    if (w == word) return true;
  return false;
}

// Independent chains: each FMA waits only on its own chain, so with more chains than the
// units' latency × count (4 cycles × 2 units on current cores) every cycle can issue. AVX2
// has 16 ymm registers: 12 chains and the two operands fit without spilling.
constexpr int kChains = 16;
constexpr int kChainsYmm = 12;
constexpr std::int64_t kIterations = 1 << 22;  // ~20 ms a thread at 1 zmm FMA a cycle

#ifdef STRATA_X86_FMA_PROBE
__attribute__((target("avx512f"))) float chains_avx512(std::int64_t iterations, float seed) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(seed + static_cast<float>(c));
  const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(seed * 1e-3f);
  for (std::int64_t i = 0; i < iterations; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], x, y);
  __m512 total = acc[0];
  for (int c = 1; c < kChains; ++c) total = _mm512_add_ps(total, acc[c]);
  return _mm512_reduce_add_ps(total);
}

__attribute__((target("avx2,fma"))) float chains_avx2(std::int64_t iterations, float seed) {
  __m256 acc[kChainsYmm];
  for (int c = 0; c < kChainsYmm; ++c) acc[c] = _mm256_set1_ps(seed + static_cast<float>(c));
  const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(seed * 1e-3f);
  for (std::int64_t i = 0; i < iterations; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kChainsYmm; ++c) acc[c] = _mm256_fmadd_ps(acc[c], x, y);
  alignas(32) float lanes[8];
  __m256 total = acc[0];
  for (int c = 1; c < kChainsYmm; ++c) total = _mm256_add_ps(total, acc[c]);
  _mm256_store_ps(lanes, total);
  float sum = 0;
  for (float v : lanes) sum += v;
  return sum;
}
#endif

// A probe does one multiply-add per lane per chain per iteration.
struct Probe {
  const char* isa;
  int lanes, chains;
  float (*run)(std::int64_t, float);
};

float chains_scalar(std::int64_t iterations, float seed) {
  float acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = seed + static_cast<float>(c);
  for (std::int64_t i = 0; i < iterations; ++i)
    for (float& a : acc) a = a * 0.999f + seed * 1e-3f;
  float sum = 0;
  for (float a : acc) sum += a;
  return sum;
}

Probe widest_probe() {
#ifdef STRATA_X86_FMA_PROBE
  if (__builtin_cpu_supports("avx512f")) return {"avx512 fma", 16, kChains, chains_avx512};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {"avx2 fma", 8, kChainsYmm, chains_avx2};
#endif
  return {"scalar", 1, kChains, chains_scalar};
}

}  // namespace

CpuIdentity parse_cpuinfo(const std::string& text) {
  CpuIdentity cpu;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() && cpu.family >= 0) break;  // the end of the first processor's block
    const std::string key = line.substr(0, line.find_first_of("\t:"));
    const std::string value = field_value(line);
    if (key == "model name") cpu.model = value;
    else if (key == "cpu family") cpu.family = std::atoi(value.c_str());
    else if (key == "model") cpu.model_number = std::atoi(value.c_str());
    else if (key == "flags") {
      cpu.avx512 = has_word(value, "avx512f");
      cpu.avx2_fma = has_word(value, "avx2") && has_word(value, "fma");
    }
  }
  return cpu;
}

const CpuIdentity& this_cpu() {
  static const CpuIdentity cpu = [] {
    std::ifstream in("/proc/cpuinfo");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_cpuinfo(text.str());
  }();
  return cpu;
}

std::string describe(const CpuIdentity& cpu) {
  const char* isa = cpu.avx512 ? "AVX-512" : cpu.avx2_fma ? "AVX2 + FMA" : "no AVX2 FMA";
  return fmt::format("{}, family {} model {}, {}", cpu.model, cpu.family, cpu.model_number, isa);
}

const char* fma_peak_isa() { return widest_probe().isa; }

std::string describe_peak(double gflops, int threads) {
  return fmt::format("fp32 FMA peak {:.1f} GFLOP/s ({}, {} thread{}, measured)", gflops, fma_peak_isa(), threads,
                     threads == 1 ? "" : "s");
}

double fma_peak_gflops(int threads) {
  threads = std::max(threads, 1);
  const Probe probe = widest_probe();
  const std::int64_t iterations = probe.lanes == 1 ? kIterations / 16 : kIterations;
  std::vector<float> sink(static_cast<std::size_t>(threads));
  double best_seconds = 0;
  for (int run = 0; run < 5; ++run) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
      workers.emplace_back([&, t] { sink[t] = probe.run(iterations, 1.0f + static_cast<float>(t)); });
    for (std::thread& w : workers) w.join();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (run == 0 || seconds < best_seconds) best_seconds = seconds;
  }
  // The sums are kept so the chains cannot be optimised away; they are finite by construction.
  volatile float keep = 0;
  for (float s : sink) keep = keep + s;
  const double flops = 2.0 * probe.chains * probe.lanes * static_cast<double>(iterations) * threads;
  return flops / best_seconds * 1e-9;
}

}  // namespace strata::bench
