#pragma once
// Interpretable attention patterns (seed 003 §3.1.2, §4.2.2): predicates over a pair of
// tokens (query i, key j) that a person can name. Each pattern serves twice:
// - as a predicate P(x_i, x_j), a dense [B, L, L] bool, for global relevance (Eq. 1);
// - as an injection (§3.2, §4.3.1): a head spec that masks (Eq. 4-5) or fixes (Eq. 6) a head.
//
// Built-in patterns:
//   matching_token  P: x_i = x_j and x_i occurs more than once in its document (§4.2.2);
//                   injected as the mask of Eq. 4 (matching_token: a token seen once sees all)
//   intra_sentence  P and mask: same sentence (Eq. 5)
//   intra_context   P and mask: same segment (Cross-Segment BERT's left / right context)
//   previous_token  P: j = i - 1; injected fixed (Eq. 6)
//   next_token      P: j = i + 1; injected fixed
//   special_token   P: x_j is a special token ([CLS], [SEP], ...); analysis only
//   punctuation     P: x_j is punctuation; analysis only
// User-defined patterns compose these by name with & | ! and parentheses, e.g.
// {"local": "previous_token | next_token", "sentence_match": "intra_sentence & matching_token"}.
// A composite is injected as the mask of the same composition, each built-in taking its mask
// form (previous_token = window(1,0) & !window(0,0), next_token likewise); analysis-only
// patterns cannot be injected.
#include <ATen/core/Tensor.h>
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "strata/attn/spec.h"
#include "strata/attn/token_layout.h"

namespace strata::attn {

// Bits of the per-token class tensor the analysis-only patterns read.
inline constexpr std::int32_t kSpecialTokenClass = 1;
inline constexpr std::int32_t kPunctuationClass = 2;

enum class BuiltinPattern {
  MatchingToken,
  IntraSentence,
  IntraContext,
  PreviousToken,
  NextToken,
  SpecialToken,
  Punctuation,
};

struct PatternExpr {
  enum class Op { Leaf, And, Or, Not } op = Op::Leaf;
  BuiltinPattern leaf = BuiltinPattern::MatchingToken;
  std::vector<PatternExpr> operands;
};

struct Pattern {
  std::string name;
  PatternExpr expr;
};

// What a dense predicate reads: the tokens' layout ([B, L] token, repeated, sentence, segment,
// as each pattern needs) and, for special_token / punctuation, token classes [B, L] int32
// (bits above).
struct PatternInputs {
  const TokenLayout* layout = nullptr;
  at::Tensor token_class;
};

// The known patterns: the built-ins plus user definitions. Lookups that fail name every
// known pattern.
class PatternSet {
 public:
  PatternSet();  // the built-ins
  // Adds {"name": "expression", ...} (an object); a name that shadows a built-in, an unknown
  // name inside an expression or a syntax error is a strata::Error naming the definition.
  void define(const nlohmann::json& definitions);
  const Pattern& find(const std::string& name) const;
  std::vector<std::string> names() const;  // built-ins first, then definitions, in order
  // A comma-separated list of names ("matching_token,intra_sentence").
  std::vector<Pattern> parse_list(const std::string& list) const;

 private:
  std::vector<Pattern> patterns_;
};

std::string_view builtin_pattern_name(BuiltinPattern pattern);
// False for special_token and punctuation (and composites using them).
bool injectable(const Pattern& pattern);

// P(x_i, x_j) for every pair: [B, L, L] bool. strata::Error naming the missing input.
at::Tensor pattern_predicate(const Pattern& pattern, const PatternInputs& inputs);

// The head spec that injects the pattern: a fixed head for previous_token / next_token alone,
// otherwise a mask. strata::Error for analysis-only patterns.
HeadSpec pattern_head(const Pattern& pattern);

// One layer's spec with `patterned` of its `heads` heads injected: head h < patterned takes
// patterns[h % patterns.size()] (so 8 of 8 heads with 4 patterns inject each pattern twice),
// the others stay plain. strata::Error when patterned > heads, patterns is empty while
// patterned > 0, or a pattern cannot be injected.
LayerSpec inject_patterns(const std::vector<Pattern>& patterns, std::int64_t patterned,
                          std::int64_t heads);

// Sparsity ρ = 1 - |M| / N² of one document's attention (seed 003 §4.3.2, after Shi et al.
// 2021), averaged over the layer's heads: M = the pairs a head may see among the document's
// first `length` tokens (a fixed head sees one key per query). `layout` holds one item.
double attention_sparsity(const LayerSpec& spec, std::int64_t heads, const TokenLayout& layout,
                          std::int64_t length);

}  // namespace strata::attn
