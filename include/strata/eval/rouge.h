#pragma once
// ROUGE exactly as Google's rouge-score package (rouge_score.rouge_scorer.RougeScorer)
// computes it, so that numbers can be compared with published ones.
//
// Tokens: the text is lower-cased, every character other than [a-z0-9] becomes a separator
// (so non-ASCII letters split words: "café" -> "caf"), and with stemming each token longer
// than three characters goes through NLTK's Porter stemmer (porter_stemmer.h).
// rougeN: overlap = sum over target n-grams of min(target count, prediction count);
// P = overlap / prediction n-grams, R = overlap / target n-grams (0 when there are none).
// rougeL: P and R from the longest common subsequence of the two token lists.
// rougeLsum: sentences are the non-empty lines of each text; for every target sentence the
// union of the LCS positions against each prediction sentence is counted, each token at
// most as often as it occurs in both texts (ROUGE-1.5.5's summary-level LCS).
// F = 2PR / (P + R), 0 when P + R = 0. Empty target or prediction gives zeros.
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

class Progress;

struct RougeScore {
  double precision = 0;
  double recall = 0;
  double fmeasure = 0;

  // P = hits / prediction_total, R = hits / target_total (a zero total counts as one, as
  // in rouge-score), F their harmonic mean.
  static RougeScore from_counts(std::size_t hits, std::size_t prediction_total,
                                std::size_t target_total);
};

// One ROUGE variant: rouge1 .. rouge9, rougeL or rougeLsum.
struct RougeType {
  enum class Kind { ngram, lcs, summary_lcs };
  Kind kind = Kind::ngram;
  int n = 1;  // the n-gram order, for Kind::ngram

  // Throws strata::Error naming the valid types for an unknown name.
  static RougeType parse(std::string_view name);
  std::string name() const;
  bool operator==(const RougeType&) const = default;
};

// rouge-score's tokenizer (tokenize.tokenize), returning the tokens as text.
std::vector<std::string> rouge_tokenize(std::string_view text, bool use_stemmer);

// A text as token ids with its sentence (line) boundaries: sentence k is
// ids[sentence_ends[k - 1] .. sentence_ends[k]), with sentence_ends[-1] taken as 0.
struct TokenizedText {
  std::vector<std::int32_t> ids;
  std::vector<std::uint32_t> sentence_ends;
};

// A target and a prediction over one numbering of their tokens: equal tokens get equal ids,
// and the ids are 0, 1, ..., distinct - 1, so that they can index arrays.
struct TokenizedPair {
  TokenizedText target;
  TokenizedText prediction;
  std::size_t distinct = 0;
};

// Tokenizes pairs of texts. It remembers every token it has seen, with its stem, so that
// each distinct word is stemmed once; the table is open addressing over one buffer of token
// bytes, so looking a token up allocates nothing. Not thread-safe: keep one per thread.
class RougeVocabulary {
 public:
  // Replaces `out` with the tokens of both texts.
  void tokenize(std::string_view target, std::string_view prediction, bool use_stemmer,
                TokenizedPair& out);
  // Number of distinct tokens and stems remembered.
  std::size_t size() const { return tokens_.size(); }
  void clear();

 private:
  struct Token {
    std::uint32_t offset = 0;  // the token's bytes are bytes_[offset, offset + length)
    std::uint32_t length = 0;
    std::int32_t stem = -1;    // index of the token's stem; -1: not stemmed yet
    std::int32_t pair_id = 0;  // the token's id in pair number `pair`
    std::uint64_t pair = 0;
  };

  void tokenize_text(std::string_view text, bool use_stemmer, TokenizedText& out,
                     std::size_t& distinct);
  std::int32_t index_of(std::string_view token);  // adds the token when it is new
  std::int32_t stem_index_of(std::string_view token);
  void grow();

  // Open addressing, at most half full: a slot holds (hash >> 32) << 32 | (index + 1), 0
  // when empty, so that probing touches 8 bytes per slot.
  std::vector<std::uint64_t> slots_;
  std::vector<Token> tokens_;
  std::string bytes_;
  std::string token_;  // the token being scanned
  std::uint64_t pairs_ = 0;
};

// Scores of a tokenized pair.
RougeScore rouge_n(const TokenizedPair& pair, int n);
RougeScore rouge_l(const TokenizedPair& pair);
RougeScore rouge_lsum(const TokenizedPair& pair);

class RougeScorer {
 public:
  // Throws strata::Error for an unknown or repeated type.
  RougeScorer(const std::vector<std::string>& types, bool use_stemmer);
  RougeScorer(std::vector<RougeType> types, bool use_stemmer);

  const std::vector<RougeType>& types() const { return types_; }
  bool use_stemmer() const { return use_stemmer_; }

  // rouge-score's score(target, prediction): one score per type, keyed by its name.
  std::map<std::string, RougeScore> score(std::string_view target,
                                          std::string_view prediction) const;
  // The same scores in the order of types(). Safe to call from several threads.
  std::vector<RougeScore> score_row(std::string_view target, std::string_view prediction) const;
  // score_row of every (targets[i], predictions[i]), computed in parallel with OpenMP
  // (threads <= 0: OpenMP's default). Adds one to *progress per pair when given.
  std::vector<std::vector<RougeScore>> score_batch(std::span<const std::string> targets,
                                                   std::span<const std::string> predictions,
                                                   int threads = 0,
                                                   Progress* progress = nullptr) const;

 private:
  std::vector<RougeType> types_;
  bool use_stemmer_;
};

}  // namespace strata
