#pragma once
// chrF (Popović 2015) and chrF++ (Popović 2017) as SacreBLEU 2.x computes them
// (sacrebleu/metrics/chrf.py), so that scores match the numbers people publish.
//
// Defaults are SacreBLEU's CHRF(): character n-grams of order 1..6, no word n-grams, beta 2,
// case kept, whitespace removed before character n-grams are taken, and eps_smoothing off.
// With eps_smoothing off, precision and recall are averaged over the "effective" orders
// only (those where both hypothesis and reference have n-grams, as in SacreBLEU < 2.0) and
// F-beta is taken of the two averages. With it on, F-beta is taken per order and averaged
// over all orders, an order with nothing to compare counting 1e-16 (the smoothing of the
// reference chrF++.py, NLTK and Moses); SacreBLEU documents this as the non-default option.
//
// Characters are Unicode code points, as in Python strings. chrF++ (word_order 2) adds word
// unigrams and bigrams: words are whitespace-separated, and a punctuation mark at the end of
// a word (else at its start) is split off as a word of its own (SacreBLEU's
// _remove_punctuation, ASCII punctuation only).
// Statistics per order add up over segments; the corpus score is F of the summed statistics.
// With several references, a segment keeps the statistics of the reference that gives it the
// highest F (the first one on ties).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

struct ChrfOptions {
  int char_order = 6;
  int word_order = 0;  // 2 gives chrF++
  double beta = 2;
  bool lowercase = false;
  bool whitespace = false;  // keep whitespace inside character n-grams
  bool eps_smoothing = false;
};

// One n-gram order's counts. `hypothesis` is 0 when the reference has no n-gram of the order
// (SacreBLEU does not count a hypothesis's n-grams there).
struct ChrfOrderStats {
  std::size_t hypothesis = 0;
  std::size_t reference = 0;
  std::size_t matches = 0;  // clipped: min(hypothesis count, reference count) per n-gram
};

// Character orders 1..char_order, then word orders 1..word_order.
struct ChrfStats {
  std::vector<ChrfOrderStats> orders;
  // Adds `other` order by order; strata::Error when the two have different orders.
  ChrfStats& operator+=(const ChrfStats& other);
};

// Statistics of one hypothesis against its references (at least one).
ChrfStats chrf_segment_stats(std::string_view hypothesis, const std::vector<std::string>& references,
                             const ChrfOptions& options = {});
// The score, 0..100, from (summed) statistics.
double chrf_from_stats(const ChrfStats& stats, const ChrfOptions& options = {});

double sentence_chrf(std::string_view hypothesis, const std::vector<std::string>& references,
                     const ChrfOptions& options = {});
// references[i] holds the references of hypotheses[i] (strata::Error when the sizes differ).
double corpus_chrf(const std::vector<std::string>& hypotheses,
                   const std::vector<std::vector<std::string>>& references,
                   const ChrfOptions& options = {});

// SacreBLEU's name and signature fields: "chrF2", "chrF2++"; and
// "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:strata".
std::string chrf_name(const ChrfOptions& options);
std::string chrf_signature(const ChrfOptions& options, std::size_t num_refs);

}  // namespace strata
