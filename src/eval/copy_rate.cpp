#include "strata/eval/copy_rate.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

#include "strata/core/error.h"
#include "strata/core/utf8.h"

namespace strata {

namespace {

bool is_word_char(char32_t c) {
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME: case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

// splitmix64's finaliser: spreads token ids over 64 bits so that the polynomial hashes of
// distinct n-grams collide with probability about 2^-64.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

constexpr std::uint64_t kBase = 0x100000001B3ull;  // odd, hence invertible modulo 2^64

// Prefix hashes: the n-gram [i, i + n) hashes to prefix[i + n] - prefix[i] * kBase^n.
std::vector<std::uint64_t> prefix_hashes(const std::vector<std::uint64_t>& values) {
  std::vector<std::uint64_t> prefix(values.size() + 1, 0);
  for (std::size_t i = 0; i < values.size(); ++i) prefix[i + 1] = prefix[i] * kBase + values[i];
  return prefix;
}

}  // namespace

std::vector<std::string> copy_rate_tokens(std::string_view text) {
  std::vector<std::string> tokens;
  std::string current;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = utf8_sequence_length(text, i);
    const char32_t c = length ? utf8_decode_at(text, i, length) : U'\uFFFD';
    if (length == 0) length = 1;
    if (is_word_char(c)) {
      utf8_append(current, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
    } else if (!current.empty()) {
      tokens.push_back(std::move(current));
      current.clear();
    }
    i += length;
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

std::optional<double> CopyCounts::copy_rate(int n) const {
  if (total[n - 1] == 0) return std::nullopt;
  return static_cast<double>(copied[n - 1]) / static_cast<double>(total[n - 1]);
}

std::optional<double> CopyCounts::novel_fraction(int n) const {
  const auto rate = copy_rate(n);
  if (!rate) return std::nullopt;
  return 1.0 - *rate;
}

namespace {

// found[n - 1][i]: whether the output's n-gram at position i occurs in the source, for every
// order n <= max_n (empty where the output is shorter than n).
std::vector<std::vector<bool>> found_in_source(const std::vector<std::string>& output_tokens,
                                               const std::vector<std::string>& source_tokens,
                                               int max_n) {
  if (max_n < 1) throw Error("copy rate: max n must be at least 1");
  // One id per distinct word across both texts, then a well-mixed 64-bit value per id.
  std::unordered_map<std::string_view, std::uint64_t> ids;
  const auto values_of = [&](const std::vector<std::string>& tokens) {
    std::vector<std::uint64_t> values;
    values.reserve(tokens.size());
    for (const auto& token : tokens) {
      const auto [it, inserted] = ids.emplace(token, ids.size());
      values.push_back(mix(it->second));
    }
    return values;
  };
  const auto output_prefix = prefix_hashes(values_of(output_tokens));
  const auto source_prefix = prefix_hashes(values_of(source_tokens));

  std::vector<std::vector<bool>> found(max_n);
  const std::size_t out_len = output_tokens.size();
  const std::size_t src_len = source_tokens.size();
  // Source positions whose (n-1)-gram occurs in the output: only there can an n-gram shared
  // with the output start. The candidates shrink quickly with n, and the hash sets hold the
  // output's n-grams, so a long source is scanned in full only once.
  std::vector<std::size_t> candidates(src_len);
  for (std::size_t j = 0; j < src_len; ++j) candidates[j] = j;
  std::vector<std::size_t> next_candidates;
  std::unordered_set<std::uint64_t> output_ngrams, shared;
  std::uint64_t power = 1;  // kBase^n
  for (int n = 1; n <= max_n && static_cast<std::size_t>(n) <= out_len; ++n) {
    power *= kBase;
    found[n - 1].assign(out_len - n + 1, false);
    if (candidates.empty()) continue;
    const auto hash = [&](const std::vector<std::uint64_t>& prefix, std::size_t i) {
      return prefix[i + n] - prefix[i] * power;
    };
    output_ngrams.clear();
    for (std::size_t i = 0; i + n <= out_len; ++i) output_ngrams.insert(hash(output_prefix, i));
    shared.clear();
    next_candidates.clear();
    for (const std::size_t j : candidates) {
      if (j + n > src_len) continue;
      const std::uint64_t h = hash(source_prefix, j);
      if (!output_ngrams.count(h)) continue;
      shared.insert(h);
      next_candidates.push_back(j);
    }
    candidates.swap(next_candidates);
    for (std::size_t i = 0; i + n <= out_len; ++i)
      found[n - 1][i] = shared.count(hash(output_prefix, i)) > 0;
  }
  return found;
}

}  // namespace

CopyCounts copy_counts(const std::vector<std::string>& output_tokens,
                       const std::vector<std::string>& source_tokens, int max_n) {
  const auto found = found_in_source(output_tokens, source_tokens, max_n);
  CopyCounts counts;
  for (const std::vector<bool>& order : found) {
    counts.copied.push_back(std::count(order.begin(), order.end(), true));
    counts.total.push_back(order.size());
  }
  return counts;
}

CopyCounts copy_counts(std::string_view output, std::string_view source, int max_n) {
  return copy_counts(copy_rate_tokens(output), copy_rate_tokens(source), max_n);
}

CopyRateCorpus::CopyRateCorpus(int max_n)
    : max_n_(max_n), rate_sum_(max_n, 0.0), rated_(max_n, 0), copied_(max_n, 0), total_(max_n, 0) {
  if (max_n < 1) throw Error("copy rate: max n must be at least 1");
}

void CopyRateCorpus::add(const CopyCounts& example) {
  if (example.max_n() != max_n_)
    throw Error("copy rate: an example counted up to n = " + std::to_string(example.max_n()) +
                " added to a corpus of n = " + std::to_string(max_n_));
  ++examples_;
  for (int n = 1; n <= max_n_; ++n) {
    copied_[n - 1] += example.copied[n - 1];
    total_[n - 1] += example.total[n - 1];
    if (const auto rate = example.copy_rate(n)) {
      rate_sum_[n - 1] += *rate;
      ++rated_[n - 1];
    }
  }
}

std::optional<double> CopyRateCorpus::copy_rate(int n) const {
  if (rated_[n - 1] == 0) return std::nullopt;
  return rate_sum_[n - 1] / static_cast<double>(rated_[n - 1]);
}

std::optional<double> CopyRateCorpus::novel_fraction(int n) const {
  const auto rate = copy_rate(n);
  if (!rate) return std::nullopt;
  return 1.0 - *rate;
}

namespace {

CopyAttribution zero_attribution(int max_n) {
  if (max_n < 1) throw Error("copy attribution: max n must be at least 1");
  const std::vector<std::size_t> zeros(max_n, 0);
  return {zeros, zeros, zeros, zeros};
}

std::optional<double> share(std::size_t part, std::size_t copied) {
  if (copied == 0) return std::nullopt;
  return static_cast<double>(part) / static_cast<double>(copied);
}

}  // namespace

std::size_t CopyAttribution::copied(int n) const {
  return extract_only[n - 1] + context_only[n - 1] + both[n - 1];
}

std::optional<double> CopyAttribution::from_extract_share(int n) const {
  return share(extract_only[n - 1] + both[n - 1], copied(n));
}

std::optional<double> CopyAttribution::extract_only_share(int n) const {
  return share(extract_only[n - 1], copied(n));
}

CopyAttribution copy_attribution(const std::vector<std::string>& output_tokens,
                                 const std::vector<std::string>& extract_tokens,
                                 const std::vector<std::string>& context_tokens, int max_n) {
  CopyAttribution counts = zero_attribution(max_n);
  const auto in_extract = found_in_source(output_tokens, extract_tokens, max_n);
  const auto in_context = found_in_source(output_tokens, context_tokens, max_n);
  for (int n = 1; n <= max_n; ++n) {
    for (std::size_t i = 0; i < in_extract[n - 1].size(); ++i) {
      const bool extract = in_extract[n - 1][i], context = in_context[n - 1][i];
      auto& tally = extract ? (context ? counts.both : counts.extract_only)
                            : (context ? counts.context_only : counts.novel);
      ++tally[n - 1];
    }
  }
  return counts;
}

CopyAttribution copy_attribution(std::string_view output, std::string_view extract,
                                 std::string_view context, int max_n) {
  return copy_attribution(copy_rate_tokens(output), copy_rate_tokens(extract),
                          copy_rate_tokens(context), max_n);
}

CopyAttributionCorpus::CopyAttributionCorpus(int max_n) : pooled_(zero_attribution(max_n)) {}

void CopyAttributionCorpus::add(const CopyAttribution& example) {
  if (example.max_n() != max_n())
    throw Error("copy attribution: an example counted up to n = " +
                std::to_string(example.max_n()) + " added to a corpus of n = " +
                std::to_string(max_n()));
  ++examples_;
  for (int n = 1; n <= max_n(); ++n) {
    pooled_.extract_only[n - 1] += example.extract_only[n - 1];
    pooled_.context_only[n - 1] += example.context_only[n - 1];
    pooled_.both[n - 1] += example.both[n - 1];
    pooled_.novel[n - 1] += example.novel[n - 1];
  }
}

}  // namespace strata
