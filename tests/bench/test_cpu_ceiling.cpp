// The CPU identity benchmarks print beside their figures, and the FMA ceiling's probe.
#include <gtest/gtest.h>

#include <cmath>

#include "strata/bench/cpu_ceiling.h"

namespace strata {
namespace {

using bench::parse_cpuinfo;

constexpr const char* kTwoProcessors =
    "processor\t: 0\n"
    "vendor_id\t: AuthenticAMD\n"
    "cpu family\t: 25\n"
    "model\t\t: 17\n"
    "model name\t: AMD EPYC\n"
    "flags\t\t: fpu sse2 avx fma avx2 avx512f avx512dq\n"
    "\n"
    "processor\t: 1\n"
    "cpu family\t: 26\n"
    "model\t\t: 2\n"
    "model name\t: Another CPU\n"
    "flags\t\t: fpu sse2\n";

TEST(CpuCeiling, ReadsTheFirstProcessorsBlock) {
  const bench::CpuIdentity cpu = parse_cpuinfo(kTwoProcessors);
  EXPECT_EQ(cpu.model, "AMD EPYC");
  EXPECT_EQ(cpu.family, 25);
  EXPECT_EQ(cpu.model_number, 17);
  EXPECT_TRUE(cpu.avx512);
  EXPECT_TRUE(cpu.avx2_fma);
  EXPECT_EQ(bench::describe(cpu), "AMD EPYC, family 25 model 17, AVX-512");
}

TEST(CpuCeiling, FlagsAreWholeWords) {
  // avx512fp16 alone is not avx512f, and avx2 without fma has no fused multiply-add.
  const bench::CpuIdentity cpu =
      parse_cpuinfo("cpu family\t: 6\nmodel\t\t: 85\nmodel name\t: X\nflags\t\t: avx2 avx512fp16\n");
  EXPECT_FALSE(cpu.avx512);
  EXPECT_FALSE(cpu.avx2_fma);
  EXPECT_EQ(bench::describe(cpu), "X, family 6 model 85, no AVX2 FMA");
}

TEST(CpuCeiling, UnknownWithoutCpuinfo) {
  const bench::CpuIdentity cpu = parse_cpuinfo("");
  EXPECT_EQ(cpu.model, "unknown");
  EXPECT_EQ(cpu.family, -1);
}

TEST(CpuCeiling, PeakIsAFiniteRateNamedByItsInstructions) {
  const double gflops = bench::fma_peak_gflops(1);
  EXPECT_TRUE(std::isfinite(gflops));
  EXPECT_GT(gflops, 0);
  EXPECT_NE(bench::describe_peak(gflops, 1).find(bench::fma_peak_isa()), std::string::npos);
}

}  // namespace
}  // namespace strata
