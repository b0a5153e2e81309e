#pragma once
// STRATA_VECTOR_CLONES before a function compiles it three times, for AVX-512 (x86-64-v4),
// AVX2 (x86-64-v3) and baseline x86-64, and the loader picks one per CPU (GCC function
// multi-versioning), so one source loop is vectorised for whichever instruction set runs it.
// The AVX-512 copy targets x86-64-v4, not AVX-512F alone: without AVX-512VL 8-lane loops get
// only the 16 VEX ymm registers and spill, and without AVX-512DQ 64-bit multiplies (the
// counter hash) are emulated. The AVX2 copy targets x86-64-v3, not AVX2 alone, which has no
// FMA: the softmax's exp then ran as separate multiplies and adds, with more registers live.
// Both copies may fuse multiplies and adds (FMA).
//
// STRATA_INLINE on the helpers such a loop calls: GCC does not inline a plain inline function
// into a target_clones copy built for another arch, and the call stops the loop vectorising.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define STRATA_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define STRATA_VECTOR_CLONES
#endif
#define STRATA_INLINE inline __attribute__((always_inline))
// The same for a lambda such a loop calls: `[&](...) STRATA_INLINE_LAMBDA { ... }`.
#define STRATA_INLINE_LAMBDA __attribute__((always_inline))
