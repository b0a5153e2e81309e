// Freed memory kept for reuse: the second allocation of a large buffer touches no fresh pages.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>

#include "strata/core/memory_reuse.h"

namespace strata {
namespace {

long minor_faults() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Page faults of allocating, filling and freeing 64 MiB.
long faults_of_one_round() {
  const std::size_t bytes = std::size_t{64} << 20;
  const long before = minor_faults();
  char* p = static_cast<char*>(std::malloc(bytes));
  std::memset(p, 1, bytes);
  // Published and fenced, so the compiler cannot drop the allocation as unused.
  static char* volatile published;
  published = p;
  asm volatile("" ::: "memory");
  std::free(p);
  return minor_faults() - before;
}

TEST(MemoryReuse, TheSecondLargeAllocationTouchesNoFreshPages) {
  if (std::getenv("GLIBC_TUNABLES") != nullptr) GTEST_SKIP() << "the user's malloc settings are kept";
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's allocator replaces glibc's, whose settings this is about";
#endif
  ASSERT_TRUE(keep_freed_memory());
  (void)faults_of_one_round();  // the heap grows to hold it once
  // With glibc's defaults 64 MiB is mapped and unmapped each time: 16,384 faults of 4 KiB.
  EXPECT_LT(faults_of_one_round(), 1000);
}

TEST(MemoryReuse, LeavesTheUsersMallocSettingsAlone) {
  ASSERT_EQ(setenv("MALLOC_ARENA_MAX", "2", 1), 0);
  EXPECT_FALSE(keep_freed_memory());
  unsetenv("MALLOC_ARENA_MAX");
}

}  // namespace
}  // namespace strata
