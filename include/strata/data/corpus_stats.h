#pragma once
// Statistics of a summarisation corpus: counts, length percentiles in words (and tokens when
// a tokenizer is given) of inputs and targets, and the section-depth histogram.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/doc/document.h"

namespace strata {

class Tokenizer;

// Percentiles p10, p50, p90, p99 and max, by the nearest-rank rule.
nlohmann::json length_percentiles(std::vector<std::size_t> lengths);

std::size_t count_words(std::string_view text);

struct SplitLengths {
  std::size_t documents = 0;
  std::vector<std::size_t> input_words, target_words, input_tokens, target_tokens;
  std::map<int, std::size_t> section_depths;  // sections (root excluded) at each depth
  std::map<int, std::size_t> document_depths;  // documents by the depth of their deepest section

  // Adds one document; token lengths only when `tokenizer` is non-null.
  void add(const Document& document, const Tokenizer* tokenizer);
  void merge(const SplitLengths& other);
  nlohmann::json to_json() const;
};

// SplitLengths of `documents`, tokenizing in parallel (tokenizers' encode is thread-safe).
// Percentiles and histograms do not depend on the order, so the result is deterministic.
SplitLengths measure_split(const std::vector<const Document*>& documents, const Tokenizer* tokenizer);

}  // namespace strata
