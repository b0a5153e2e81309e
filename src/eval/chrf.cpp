// chrF / chrF++ statistics and scores, following SacreBLEU 2.x's CHRF step by step
// (n-gram extraction, per-order match statistics, best reference, both smoothings) so that
// degenerate cases score as it scores them too.
#include "strata/eval/chrf.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <unordered_map>

#include "strata/core/error.h"
#include "strata/core/utf8.h"
#include "strata/eval/bleu.h"

namespace strata {

namespace {

using Counts = std::unordered_map<std::string_view, std::uint32_t>;

// Python's string.punctuation, which chrF++ splits off words.
constexpr std::string_view kPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

bool is_punctuation(char c) { return kPunctuation.find(c) != std::string_view::npos; }

// The n-grams of one side of a segment, every order. The tables view `chars` and `words`,
// so an object stays where it was built (it is neither copied nor moved).
struct SegmentNgrams {
  std::string chars;  // the text character n-grams are taken from
  std::string words;  // the chrF++ words, separated by single spaces
  std::vector<Counts> orders;

  SegmentNgrams() = default;
  SegmentNgrams(const SegmentNgrams&) = delete;
  SegmentNgrams& operator=(const SegmentNgrams&) = delete;
};

// Byte offsets of the code points of `text`, and text.size() at the end. An invalid byte
// counts as one character.
std::vector<std::size_t> code_point_starts(std::string_view text) {
  std::vector<std::size_t> starts;
  starts.reserve(text.size() + 1);
  for (std::size_t i = 0; i < text.size();) {
    starts.push_back(i);
    i += std::max<std::size_t>(1, utf8_sequence_length(text, i));
  }
  starts.push_back(text.size());
  return starts;
}

// Tokens that are runs of `starts` boundaries: n-gram i spans starts[i] .. starts[i + n],
// trimmed of the separator before starts[i + n] when `separated`.
Counts count_ngrams(std::string_view text, const std::vector<std::size_t>& starts, int n,
                    bool separated) {
  Counts counts;
  const std::size_t units = starts.size() - 1;
  for (std::size_t i = 0; i + n <= units; ++i) {
    const std::size_t end = starts[i + n] - (separated ? 1 : 0);
    ++counts[text.substr(starts[i], end - starts[i])];
  }
  return counts;
}

// SacreBLEU's _remove_punctuation: a word of one character stays; otherwise a punctuation
// mark at its end, else at its start, becomes a word of its own ("(hi)" -> "(hi", ")").
// Punctuation is ASCII, so the byte tests below are the code point tests Python makes.
void append_chrf_words(std::string_view word, std::string& out) {
  const auto add = [&](std::string_view w) {
    if (!out.empty()) out.push_back(' ');
    out.append(w);
  };
  if (utf8_sequence_length(word, 0) >= word.size()) {
    add(word);
  } else if (is_punctuation(word.back())) {
    add(word.substr(0, word.size() - 1));
    add(word.substr(word.size() - 1));
  } else if (is_punctuation(word.front())) {
    add(word.substr(0, 1));
    add(word.substr(1));
  } else {
    add(word);
  }
}

void extract(std::string_view segment, const ChrfOptions& options, SegmentNgrams& out) {
  const std::string text = options.lowercase ? python_lower(segment) : std::string(segment);
  const std::vector<std::string_view> tokens = split_python_whitespace(text);
  if (options.whitespace) {
    out.chars = text;
  } else {
    for (const std::string_view token : tokens) out.chars.append(token);
  }
  const std::vector<std::size_t> char_starts = code_point_starts(out.chars);
  for (int n = 1; n <= options.char_order; ++n)
    out.orders.push_back(count_ngrams(out.chars, char_starts, n, false));
  if (options.word_order == 0) return;

  for (const std::string_view token : tokens) append_chrf_words(token, out.words);
  std::vector<std::size_t> word_starts;  // one past each separating space, as a start
  if (!out.words.empty()) {
    word_starts.push_back(0);
    for (std::size_t i = 0; i < out.words.size(); ++i)
      if (out.words[i] == ' ') word_starts.push_back(i + 1);
  }
  word_starts.push_back(out.words.size() + 1);
  for (int n = 1; n <= options.word_order; ++n)
    out.orders.push_back(count_ngrams(out.words, word_starts, n, true));
}

ChrfOrderStats match(const Counts& hypothesis, const Counts& reference) {
  ChrfOrderStats stats;
  std::size_t hyp_total = 0;
  for (const auto& [ngram, count] : hypothesis) {
    hyp_total += count;
    const auto it = reference.find(ngram);
    if (it != reference.end()) stats.matches += std::min(count, it->second);
  }
  for (const auto& [ngram, count] : reference) stats.reference += count;
  stats.hypothesis = reference.empty() ? 0 : hyp_total;
  return stats;
}

void check_options(const ChrfOptions& options) {
  if (options.char_order < 0 || options.word_order < 0 || options.char_order + options.word_order == 0)
    throw Error(fmt::format("chrF: orders must be >= 0 and not both 0 (char {}, word {})",
                            options.char_order, options.word_order));
  if (!(options.beta > 0)) throw Error(fmt::format("chrF: beta must be > 0, not {}", options.beta));
}

}  // namespace

ChrfStats& ChrfStats::operator+=(const ChrfStats& other) {
  if (orders.empty()) orders.resize(other.orders.size());
  if (orders.size() != other.orders.size())
    throw Error(fmt::format("chrF: adding statistics of {} orders to {}", other.orders.size(),
                            orders.size()));
  for (std::size_t i = 0; i < orders.size(); ++i) {
    orders[i].hypothesis += other.orders[i].hypothesis;
    orders[i].reference += other.orders[i].reference;
    orders[i].matches += other.orders[i].matches;
  }
  return *this;
}

double chrf_from_stats(const ChrfStats& stats, const ChrfOptions& options) {
  check_options(options);
  const std::size_t order = static_cast<std::size_t>(options.char_order + options.word_order);
  if (stats.orders.size() != order)
    throw Error(fmt::format("chrF: statistics have {} orders, the options {}", stats.orders.size(), order));
  constexpr double kEps = 1e-16;
  const double factor = options.beta * options.beta;
  double eps_score = 0;
  double avg_precision = 0;
  double avg_recall = 0;
  int effective_order = 0;
  for (const ChrfOrderStats& s : stats.orders) {
    const double precision = s.hypothesis > 0 ? static_cast<double>(s.matches) / s.hypothesis : kEps;
    const double recall = s.reference > 0 ? static_cast<double>(s.matches) / s.reference : kEps;
    const double denominator = factor * precision + recall;
    eps_score += denominator > 0 ? (1 + factor) * precision * recall / denominator : kEps;
    if (s.hypothesis > 0 && s.reference > 0) {
      avg_precision += precision;
      avg_recall += recall;
      ++effective_order;
    }
  }
  if (options.eps_smoothing) return 100 * eps_score / static_cast<double>(order);
  if (effective_order == 0) return 0;
  avg_precision /= effective_order;
  avg_recall /= effective_order;
  if (avg_precision + avg_recall == 0) return 0;
  double score = (1 + factor) * avg_precision * avg_recall;
  score /= factor * avg_precision + avg_recall;
  return 100 * score;
}

ChrfStats chrf_segment_stats(std::string_view hypothesis, const std::vector<std::string>& references,
                             const ChrfOptions& options) {
  check_options(options);
  if (references.empty()) throw Error("chrF: a segment has no reference");
  std::deque<SegmentNgrams> sides(1 + references.size());
  extract(hypothesis, options, sides[0]);
  ChrfStats best;
  double best_f = -1;
  for (std::size_t r = 0; r < references.size(); ++r) {
    SegmentNgrams& reference = sides[r + 1];
    extract(references[r], options, reference);
    ChrfStats stats;
    for (std::size_t i = 0; i < reference.orders.size(); ++i)
      stats.orders.push_back(match(sides[0].orders[i], reference.orders[i]));
    const double f = chrf_from_stats(stats, options);
    if (f > best_f) {
      best_f = f;
      best = std::move(stats);
    }
  }
  return best;
}

double sentence_chrf(std::string_view hypothesis, const std::vector<std::string>& references,
                     const ChrfOptions& options) {
  return chrf_from_stats(chrf_segment_stats(hypothesis, references, options), options);
}

double corpus_chrf(const std::vector<std::string>& hypotheses,
                   const std::vector<std::vector<std::string>>& references,
                   const ChrfOptions& options) {
  if (hypotheses.size() != references.size())
    throw Error(fmt::format("chrF: {} hypotheses but references for {} segments",
                            hypotheses.size(), references.size()));
  ChrfStats total;
  total.orders.resize(static_cast<std::size_t>(std::max(0, options.char_order + options.word_order)));
  for (std::size_t i = 0; i < hypotheses.size(); ++i)
    total += chrf_segment_stats(hypotheses[i], references[i], options);
  return chrf_from_stats(total, options);
}

std::string chrf_name(const ChrfOptions& options) {
  return fmt::format("chrF{}{}", options.beta, std::string(static_cast<std::size_t>(std::max(0, options.word_order)), '+'));
}

std::string chrf_signature(const ChrfOptions& options, std::size_t num_refs) {
  return fmt::format("nrefs:{}|case:{}|eff:{}|nc:{}|nw:{}|space:{}|version:strata", num_refs,
                     options.lowercase ? "lc" : "mixed", options.eps_smoothing ? "no" : "yes",
                     options.char_order, options.word_order, options.whitespace ? "yes" : "no");
}

}  // namespace strata
