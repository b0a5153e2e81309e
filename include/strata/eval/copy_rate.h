#pragma once
// Copy rate and novel n-grams (thesis ch. 2 §2.4.1, after Weber et al. 2018): for each n, the
// fraction of the output's n-grams that also occur in the source, and its complement. High
// copy rates at large n mean the output lifts whole passages; human abstracts stay low.
//
// Counting: n-gram occurrences in the output, with multiplicity (an output repeating a copied
// phrase copies it twice); presence in the source, once is enough. An output with fewer than
// n tokens has no rate at order n and does not enter the corpus mean there.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

inline constexpr int kCopyRateDefaultMaxN = 25;

// Lowercased words: maximal runs of Unicode letters, numbers and combining marks; all else
// separates. On ASCII text these are rouge-score's tokens (lowercase, [^a-z0-9]+ as spaces).
std::vector<std::string> copy_rate_tokens(std::string_view text);

// Counts for one example; index n - 1 for order n.
struct CopyCounts {
  std::vector<std::size_t> copied;  // output n-grams found in the source
  std::vector<std::size_t> total;   // output n-grams

  int max_n() const { return static_cast<int>(total.size()); }
  // copied / total at order n; nullopt when the output has no n-gram of that order.
  std::optional<double> copy_rate(int n) const;
  std::optional<double> novel_fraction(int n) const;
};

// N-grams are compared as 64-bit hashes of token-id sequences, so a long source costs one
// hash per position and order, never a string per n-gram.
CopyCounts copy_counts(const std::vector<std::string>& output_tokens,
                       const std::vector<std::string>& source_tokens,
                       int max_n = kCopyRateDefaultMaxN);
CopyCounts copy_counts(std::string_view output, std::string_view source,
                       int max_n = kCopyRateDefaultMaxN);

// Corpus statistics: per order, the mean of the examples' copy rates (macro average over the
// examples long enough to have that order), and the pooled counts.
class CopyRateCorpus {
 public:
  explicit CopyRateCorpus(int max_n = kCopyRateDefaultMaxN);

  // strata::Error when `example` was counted with another max_n.
  void add(const CopyCounts& example);

  int max_n() const { return max_n_; }
  std::size_t examples() const { return examples_; }
  // Examples with at least one n-gram of order n.
  std::size_t examples_with(int n) const { return rated_[n - 1]; }
  std::optional<double> copy_rate(int n) const;
  std::optional<double> novel_fraction(int n) const;
  std::size_t copied(int n) const { return copied_[n - 1]; }
  std::size_t total(int n) const { return total_[n - 1]; }

 private:
  int max_n_;
  std::size_t examples_ = 0;
  std::vector<double> rate_sum_;
  std::vector<std::size_t> rated_;
  std::vector<std::size_t> copied_;
  std::vector<std::size_t> total_;
};

// Copy attribution (thesis ch. 2, Fig. 2.2 right): a summariser that reads an extract block
// beside the rest of its input (the LM summariser reads [intro][extracted sentences]); where do
// the n-grams it copies come from? Each output n-gram, counted with multiplicity as above, falls
// in one of four classes: it occurs in the extract block only, in the rest of the input
// ("context") only, in both, or in neither (novel). The two are separate texts: an n-gram
// spanning the junction between them occurs in neither.
struct CopyAttribution {
  std::vector<std::size_t> extract_only;  // index n - 1 for order n
  std::vector<std::size_t> context_only;
  std::vector<std::size_t> both;
  std::vector<std::size_t> novel;

  int max_n() const { return static_cast<int>(novel.size()); }
  // Output n-grams found in the extract block, the context or both.
  std::size_t copied(int n) const;
  // (extract_only + both) / copied: the share of the copied n-grams that the extract block
  // holds; nullopt when nothing was copied at order n.
  std::optional<double> from_extract_share(int n) const;
  // extract_only / copied: the share found in the extract block and nowhere else.
  std::optional<double> extract_only_share(int n) const;
};

CopyAttribution copy_attribution(const std::vector<std::string>& output_tokens,
                                 const std::vector<std::string>& extract_tokens,
                                 const std::vector<std::string>& context_tokens,
                                 int max_n = kCopyRateDefaultMaxN);
CopyAttribution copy_attribution(std::string_view output, std::string_view extract,
                                 std::string_view context, int max_n = kCopyRateDefaultMaxN);

// Corpus attribution: the examples' counts summed per order. Its shares are therefore pooled
// ratios (all copied n-grams of the corpus together, long outputs weighing more), not means
// of per-example shares, which an example copying nothing at some order would not have.
class CopyAttributionCorpus {
 public:
  explicit CopyAttributionCorpus(int max_n = kCopyRateDefaultMaxN);

  // strata::Error when `example` was counted with another max_n.
  void add(const CopyAttribution& example);

  int max_n() const { return pooled_.max_n(); }
  std::size_t examples() const { return examples_; }
  const CopyAttribution& pooled() const { return pooled_; }

 private:
  CopyAttribution pooled_;
  std::size_t examples_ = 0;
};

}  // namespace strata
