#pragma once
// A synthetic man page for benchmarks that need text-like tokens without a corpus: sections
// under the usual headings, paragraphs of 2 to 6 sentences, sentences of 8 to 40 tokens of
// which the last is a period, words drawn from a Zipf law over the vocabulary (ids by falling
// frequency, as a trained tokenizer numbers them), so words repeat and occur once in the
// proportions of running text. Seeded: every call sees the same page.
#include <cstdint>

#include "strata/doc/layout.h"

namespace strata::bench {

inline constexpr std::int64_t kManPageVocab = 8000;  // token ids lie below it
inline constexpr double kManPageZipfExponent = 1.0;  // word frequency ∝ 1 / rank^s, as in English text

// The page's first `length` tokens.
Layout man_page(std::int64_t length);

struct PageStats {
  std::int64_t sections = 0, sentences = 0, distinct = 0, once_seen = 0;
  std::int64_t shortest = 0, longest = 0;  // sentence tokens, the last (cut) one aside
};

PageStats page_stats(const Layout& page);

}  // namespace strata::bench
