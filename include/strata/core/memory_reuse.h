#pragma once
// Freed memory kept in the process for the next allocation. A training or inference step frees
// and allocates the same large activations every step; with glibc's defaults the big ones are
// mapped and unmapped each time (or the heap's top trimmed), so every step touches fresh pages
// and pays a page fault per 4 KiB. Called once at start-up: allocations come from the heap, which
// is trimmed only when over 1 GiB lies free at its top, so resident memory stays near its peak. A user who set
// glibc's own malloc variables (MALLOC_*_, GLIBC_TUNABLES) keeps them.
namespace strata {

// Returns false when the user's malloc settings were left in place.
bool keep_freed_memory();

// glibc's own policy again for a process whose blocks are few and huge (a million-token layer,
// where every tensor is 2 GiB): blocks of 32 MiB and more are mapped on their own, so a freed
// one goes back to the system instead of leaving a hole in the heap that the next, slightly
// different allocation cannot reuse. Peak memory then stays near what is live.
void map_large_blocks();

}  // namespace strata
