#include "strata/core/memory_reuse.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>

extern char** environ;

namespace strata {

bool keep_freed_memory() {
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "MALLOC_", 7) == 0 || std::strncmp(*e, "GLIBC_TUNABLES=", 15) == 0) return false;
  mallopt(M_MMAP_MAX, 0);                // no allocation is mapped on its own: all from the heap
  mallopt(M_TRIM_THRESHOLD, 1 << 30);    // the heap's free top is given back only past 1 GiB
  mallopt(M_TOP_PAD, 64 << 20);          // and grows 64 MiB at a time
  return true;
}

void map_large_blocks() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // the largest glibc takes (half its arena heap)
  mallopt(M_MMAP_MAX, 1 << 16);         // glibc's default count
  mallopt(M_TRIM_THRESHOLD, 128 << 10);
  mallopt(M_TOP_PAD, 0);
}

}  // namespace strata
