#include "strata/data/corpus_stats.h"

#include <algorithm>
#include <cmath>

#include "strata/core/strings.h"
#include "strata/text/tokenizer.h"

namespace strata {

nlohmann::json length_percentiles(std::vector<std::size_t> lengths) {
  nlohmann::json out = nlohmann::json::object();
  if (lengths.empty()) return out;
  std::sort(lengths.begin(), lengths.end());
  const auto rank = [&](double q) {
    const auto k = static_cast<std::size_t>(std::ceil(q * lengths.size()));
    return lengths[std::clamp<std::size_t>(k, 1, lengths.size()) - 1];
  };
  double sum = 0;
  for (std::size_t n : lengths) sum += static_cast<double>(n);
  out["mean"] = sum / lengths.size();
  out["p10"] = rank(0.10);
  out["p50"] = rank(0.50);
  out["p90"] = rank(0.90);
  out["p99"] = rank(0.99);
  out["max"] = lengths.back();
  return out;
}

std::size_t count_words(std::string_view text) {
  std::size_t words = 0;
  bool in_word = false;
  for (char c : text) {
    const bool space = is_space(c);
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

namespace {
int record_depths(const Section& section, std::map<int, std::size_t>& histogram) {
  int deepest = section.level;
  if (section.level > 0) ++histogram[section.level];
  for (const Section& child : section.children)
    deepest = std::max(deepest, record_depths(child, histogram));
  return deepest;
}
}  // namespace

void SplitLengths::add(const Document& document, const Tokenizer* tokenizer) {
  ++documents;
  input_words.push_back(count_words(document.text));
  target_words.push_back(count_words(document.summary));
  if (tokenizer) {
    input_tokens.push_back(tokenizer->encode(document.text).size());
    target_tokens.push_back(tokenizer->encode(document.summary).size());
  }
  ++document_depths[record_depths(document.root, section_depths)];
}

void SplitLengths::merge(const SplitLengths& other) {
  documents += other.documents;
  const auto append = [](std::vector<std::size_t>& a, const std::vector<std::size_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
  };
  append(input_words, other.input_words);
  append(target_words, other.target_words);
  append(input_tokens, other.input_tokens);
  append(target_tokens, other.target_tokens);
  for (auto [depth, n] : other.section_depths) section_depths[depth] += n;
  for (auto [depth, n] : other.document_depths) document_depths[depth] += n;
}

SplitLengths measure_split(const std::vector<const Document*>& documents, const Tokenizer* tokenizer) {
  SplitLengths total;
#pragma omp parallel
  {
    SplitLengths mine;
#pragma omp for schedule(dynamic, 8) nowait
    for (std::size_t i = 0; i < documents.size(); ++i) mine.add(*documents[i], tokenizer);
#pragma omp critical
    total.merge(mine);
  }
  return total;
}

nlohmann::json SplitLengths::to_json() const {
  nlohmann::json out;
  out["documents"] = documents;
  out["input_words"] = length_percentiles(input_words);
  out["target_words"] = length_percentiles(target_words);
  if (!input_tokens.empty() || documents == 0) {
    out["input_tokens"] = length_percentiles(input_tokens);
    out["target_tokens"] = length_percentiles(target_tokens);
  } else {
    out["input_tokens"] = nullptr;  // no tokenizer was given
    out["target_tokens"] = nullptr;
  }
  nlohmann::json sections = nlohmann::json::object(), docs = nlohmann::json::object();
  for (auto [depth, n] : section_depths) sections[std::to_string(depth)] = n;
  for (auto [depth, n] : document_depths) docs[std::to_string(depth)] = n;
  out["sections_by_depth"] = sections;
  out["documents_by_max_depth"] = docs;
  return out;
}

}  // namespace strata
