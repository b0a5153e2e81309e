#pragma once
// BLEU as SacreBLEU computes it by default (Post, 2018): mteval-v13a tokenisation, n-grams up
// to 4, clipped counts summed over the corpus, closest reference length, brevity penalty and
// exponential smoothing. The tokenisers reproduce SacreBLEU's Python regexes exactly, so
// scores match the numbers people publish.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

inline constexpr int kBleuMaxOrder = 4;

enum class BleuTokenize { k13a, kIntl, kNone };
enum class BleuSmooth { kExp, kFloor, kAddK, kNone };

// Names as SacreBLEU spells them ("13a", "intl", "none"; "exp", "floor", "add-k", "none");
// the parsers throw strata::Error for an unknown name.
BleuTokenize parse_bleu_tokenize(std::string_view name);
BleuSmooth parse_bleu_smooth(std::string_view name);
std::string_view bleu_tokenize_name(BleuTokenize tokenize);
std::string_view bleu_smooth_name(BleuSmooth smooth);

struct BleuOptions {
  BleuTokenize tokenize = BleuTokenize::k13a;
  BleuSmooth smooth = BleuSmooth::kExp;
  // floor: 0.1 and add-k: 1 when unset; ignored by exp and none.
  std::optional<double> smooth_value;
  bool lowercase = false;
  // Average only over the orders the hypothesis has n-grams of (sentence-level BLEU).
  bool effective_order = false;
};

// Sufficient statistics; they add up over segments.
struct BleuStats {
  std::size_t sys_len = 0;
  std::size_t ref_len = 0;
  std::array<std::size_t, kBleuMaxOrder> counts{};  // clipped matches per order
  std::array<std::size_t, kBleuMaxOrder> totals{};  // hypothesis n-grams per order
  BleuStats& operator+=(const BleuStats& other);
};

struct BleuScore {
  double score = 0;                                // 0..100
  std::array<double, kBleuMaxOrder> precisions{};  // 0..100, after smoothing
  double bp = 0;                                   // brevity penalty
  double ratio = 0;                                // sys_len / ref_len (0 when ref_len is 0)
  std::size_t sys_len = 0;
  std::size_t ref_len = 0;
  std::array<std::size_t, kBleuMaxOrder> counts{};
  std::array<std::size_t, kBleuMaxOrder> totals{};
};

// --- tokenisation (one line in, tokens joined by single spaces out) ---

// mteval-v13a: drops "<skipped>", joins "-\n", unescapes &quot; &amp; &lt; &gt;, splits
// off punctuation and symbols, and periods/commas unless next to a digit.
std::string tokenize_13a(std::string_view line);
// mteval-v14 "international": splits Unicode punctuation unless between digits, and symbols.
std::string tokenize_intl(std::string_view line);
// What SacreBLEU does to a segment: lowercase (optional), strip trailing whitespace,
// tokenise; the result's tokens are separated by single spaces.
std::string bleu_preprocess(std::string_view segment, const BleuOptions& options);

// Python's str.split() and str.lower(), which the reference implementation relies on:
// Unicode whitespace (not only ASCII) separates tokens; lowercasing is Unicode-wide,
// including the final-sigma rule and İ → i̇.
std::vector<std::string_view> split_python_whitespace(std::string_view text);
// Python's " ".join(text.split()): the tokens separated by single spaces.
std::string join_tokens(std::string_view text);
std::string python_lower(std::string_view text);

// --- scoring ---

// Statistics of one hypothesis against its references (at least one).
BleuStats bleu_segment_stats(std::string_view hypothesis, const std::vector<std::string>& references,
                             const BleuOptions& options);
// The score from (summed) statistics.
BleuScore bleu_from_stats(const BleuStats& stats, const BleuOptions& options);
// references[i] holds the references of hypotheses[i]; every segment needs the same number
// (strata::Error otherwise).
BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references,
                      const BleuOptions& options = {});
// SacreBLEU's sentence_bleu: `options` with effective order switched on.
BleuScore sentence_bleu(std::string_view hypothesis, const std::vector<std::string>& references,
                        BleuOptions options = {});

// "nrefs:N|case:mixed|eff:no|tok:13a|smooth:exp|version:strata", SacreBLEU's signature
// fields (floor and add-k carry their value: "smooth:floor[0.10]").
std::string bleu_signature(const BleuOptions& options, std::size_t num_refs);

}  // namespace strata
