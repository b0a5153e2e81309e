// Corpus and sentence BLEU from clipped n-gram statistics, following SacreBLEU's
// compute_bleu step by step (smoothing, effective order, early exits) so that the numbers,
// degenerate cases included, are the ones it prints.
#include "strata/eval/bleu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_map>

#include "strata/core/error.h"

namespace strata {

namespace {

// N-gram → count, one table per order. Keys view the preprocessed text, whose tokens are
// separated by single spaces, so an n-gram is the substring from its first token to its last.
using NgramCounts = std::array<std::unordered_map<std::string_view, std::uint32_t>, kBleuMaxOrder>;

NgramCounts count_ngrams(std::string_view text, std::size_t& length) {
  std::vector<std::size_t> starts;  // token i spans [starts[i], starts[i+1] - 1)
  if (!text.empty()) {
    starts.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == ' ') starts.push_back(i + 1);
  }
  length = starts.size();
  starts.push_back(text.size() + 1);
  NgramCounts counts;
  for (int n = 1; n <= kBleuMaxOrder; ++n) {
    if (length < static_cast<std::size_t>(n)) break;
    auto& table = counts[n - 1];
    table.reserve(length - n + 1);
    for (std::size_t i = 0; i + n <= length; ++i)
      ++table[text.substr(starts[i], starts[i + n] - 1 - starts[i])];
  }
  return counts;
}

// The reference length closest to the hypothesis length; ties go to the shorter one.
std::size_t closest_ref_len(std::size_t hyp_len, const std::vector<std::size_t>& ref_lens) {
  std::size_t best = ref_lens.front();
  for (const std::size_t len : ref_lens) {
    const auto diff = [&](std::size_t r) { return r > hyp_len ? r - hyp_len : hyp_len - r; };
    if (diff(len) < diff(best) || (diff(len) == diff(best) && len < best)) best = len;
  }
  return best;
}

double default_smooth_value(BleuSmooth smooth) {
  if (smooth == BleuSmooth::kFloor) return 0.1;
  if (smooth == BleuSmooth::kAddK) return 1.0;
  return 0.0;
}

// SacreBLEU's my_log: log(0) is a large negative number rather than -inf, so that a zero
// precision gives a score of exactly 0.
double log_or_floor(double x) { return x == 0 ? -9999999999.0 : std::log(x); }

}  // namespace

BleuStats& BleuStats::operator+=(const BleuStats& other) {
  sys_len += other.sys_len;
  ref_len += other.ref_len;
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    counts[n] += other.counts[n];
    totals[n] += other.totals[n];
  }
  return *this;
}

BleuStats bleu_segment_stats(std::string_view hypothesis, const std::vector<std::string>& references,
                             const BleuOptions& options) {
  if (references.empty()) throw Error("BLEU: a segment has no reference");
  // Preprocessed references must stay put while the tables view them.
  std::vector<std::string> ref_texts;
  ref_texts.reserve(references.size());
  for (const auto& reference : references) ref_texts.push_back(bleu_preprocess(reference, options));

  NgramCounts ref_max;  // per n-gram, its largest count in any one reference
  std::vector<std::size_t> ref_lens;
  for (const auto& text : ref_texts) {
    std::size_t len;
    NgramCounts counts = count_ngrams(text, len);
    ref_lens.push_back(len);
    for (int n = 0; n < kBleuMaxOrder; ++n)
      for (const auto& [ngram, count] : counts[n]) {
        auto& best = ref_max[n][ngram];
        best = std::max(best, count);
      }
  }

  const std::string hyp_text = bleu_preprocess(hypothesis, options);
  BleuStats stats;
  const NgramCounts hyp = count_ngrams(hyp_text, stats.sys_len);
  stats.ref_len = closest_ref_len(stats.sys_len, ref_lens);
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    for (const auto& [ngram, count] : hyp[n]) {
      stats.totals[n] += count;
      const auto it = ref_max[n].find(ngram);
      if (it != ref_max[n].end()) stats.counts[n] += std::min(count, it->second);
    }
  }
  return stats;
}

BleuScore bleu_from_stats(const BleuStats& stats, const BleuOptions& options) {
  BleuScore out;
  out.sys_len = stats.sys_len;
  out.ref_len = stats.ref_len;
  out.counts = stats.counts;
  out.totals = stats.totals;
  out.ratio = stats.ref_len ? static_cast<double>(stats.sys_len) / stats.ref_len : 0.0;
  if (stats.sys_len < stats.ref_len)
    out.bp = stats.sys_len > 0
                 ? std::exp(1.0 - static_cast<double>(stats.ref_len) / stats.sys_len)
                 : 0.0;
  else
    out.bp = 1.0;

  // No match at any order scores 0 whatever the smoothing (SacreBLEU #141).
  if (std::all_of(stats.counts.begin(), stats.counts.end(), [](std::size_t c) { return c == 0; }))
    return out;

  const double value = options.smooth_value.value_or(default_smooth_value(options.smooth));
  double exp_divisor = 1.0;  // 'exp' halves the credit of each successive zero-match order
  int orders = kBleuMaxOrder;
  for (int n = 1; n <= kBleuMaxOrder; ++n) {
    double correct = static_cast<double>(stats.counts[n - 1]);
    double total = static_cast<double>(stats.totals[n - 1]);
    if (options.smooth == BleuSmooth::kAddK && n > 1) {
      correct += value;
      total += value;
    }
    if (total == 0) break;  // later precisions stay 0 (and count only without effective order)
    if (options.effective_order) orders = n;
    double& precision = out.precisions[n - 1];
    if (correct == 0) {
      if (options.smooth == BleuSmooth::kExp) {
        exp_divisor *= 2;
        precision = 100.0 / (exp_divisor * total);
      } else if (options.smooth == BleuSmooth::kFloor) {
        precision = 100.0 * value / total;
      }
    } else {
      precision = 100.0 * correct / total;
    }
  }
  double log_sum = 0;
  for (int n = 0; n < orders; ++n) log_sum += log_or_floor(out.precisions[n]);
  out.score = out.bp * std::exp(log_sum / orders);
  return out;
}

BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references,
                      const BleuOptions& options) {
  if (hypotheses.size() != references.size())
    throw Error(fmt::format("BLEU: {} hypotheses but references for {} segments",
                            hypotheses.size(), references.size()));
  BleuStats total;
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    if (references[i].size() != references.front().size())
      throw Error(fmt::format("BLEU: segment {} has {} references, segment 1 has {}", i + 1,
                              references[i].size(), references.front().size()));
    total += bleu_segment_stats(hypotheses[i], references[i], options);
  }
  return bleu_from_stats(total, options);
}

BleuScore sentence_bleu(std::string_view hypothesis, const std::vector<std::string>& references,
                        BleuOptions options) {
  options.effective_order = true;
  return bleu_from_stats(bleu_segment_stats(hypothesis, references, options), options);
}

std::string bleu_signature(const BleuOptions& options, std::size_t num_refs) {
  std::string smooth(bleu_smooth_name(options.smooth));
  if (options.smooth == BleuSmooth::kFloor || options.smooth == BleuSmooth::kAddK)
    smooth += fmt::format("[{:.2f}]", options.smooth_value.value_or(default_smooth_value(options.smooth)));
  return fmt::format("nrefs:{}|case:{}|eff:{}|tok:{}|smooth:{}|version:strata", num_refs,
                     options.lowercase ? "lc" : "mixed", options.effective_order ? "yes" : "no",
                     bleu_tokenize_name(options.tokenize), smooth);
}

}  // namespace strata
