#pragma once
// Global relevance of interpretable attention patterns (seed 003 §3.1.3, Eq. 1; §4.2.2):
//   GR(P, h) = 1/|X| Σ_{x ∈ X} ( Σ_i Σ_j α_ij^(x,h) · 1[P(x_i, x_j)] ) / |x|
// over the validation examples X, with |x| an example's real (non-padding) length and i, j
// its real tokens: the share of a head's attention that follows the pattern, per query,
// averaged. A pattern is kept (§4.2.2, the 3-sigma rule) when some head's GR lies more than
// 3 standard deviations above the mean GR over all heads.
#include <ATen/core/Tensor.h>
#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/analysis/head_importance.h"
#include "strata/attn/token_layout.h"
#include "strata/train/analysis_batch.h"
#include "strata/train/task.h"

namespace strata {
class Tokenizer;
}

namespace strata::attn {
struct Pattern;
}

namespace strata::analysis {

// Each example's term of Eq. 1: Σ_i Σ_j weights[b, h, i, j] · predicate[b, i, j] / lengths[b]
// over i, j < lengths[b] (real tokens come first in each row). weights: [B, H, L, L] attention
// weights; predicate: [B, L, L] bool; lengths: [B] integers. Returns [B, H] double (0 for an
// empty example). strata::Error on mismatched shapes.
at::Tensor global_relevance_sums(const at::Tensor& weights, const at::Tensor& predicate, const at::Tensor& lengths);

using train::AnalysisBatch;
using train::AnalysisBatchSource;

// True when `text` is non-empty and every character is Unicode punctuation (categories Pc,
// Pd, Ps, Pe, Pi, Pf, Po) once leading and trailing whitespace is stripped.
bool is_punctuation_text(std::string_view text);

// Per token id, the class bits of attn/patterns.h: kSpecialTokenClass for the tokenizer's
// special tokens (SpecialTokens::all()), kPunctuationClass for tokens made only of
// punctuation. A token is judged by its decoded text, so the space markers of byte-level BPE
// ('Ġ') and sentencepiece ('▁') read as the spaces they stand for and are stripped.
std::vector<std::int32_t> token_class_table(const Tokenizer& tokenizer);

struct RelevanceOptions {
  std::size_t max_examples = 0;  // the first N validation examples; 0 = all
  std::size_t max_tokens = 4096;  // per batch: rows × longest cost, batches in example order
  std::size_t top = 5;            // heads listed per pattern
  // token_class_table() of the model's tokenizer; empty: special_token and punctuation fail.
  std::vector<std::int32_t> token_classes;
  Progress* progress = nullptr;  // advanced per example when given
};

struct PatternRelevance {
  std::string pattern;
  HeadMatrix matrix;  // GR per layer (analysed module) and head
  double mean = 0;    // over all heads
  double std = 0;     // population standard deviation over all heads
  bool kept = false;  // some head above mean + 3 std (needs 11+ heads to be possible at all)
  std::vector<RankedHead> top;
};

struct GlobalRelevance {
  std::vector<std::string> layers;  // the analysed modules' names
  std::vector<PatternRelevance> patterns;
  std::int64_t examples = 0;
};

// The 3-sigma summary of a GR matrix: fills mean, std, kept and the `top` largest heads.
void summarize_relevance(PatternRelevance& relevance, std::size_t top);

// While alive: the model in eval mode and the layers recording their weights; both undone on
// every way out (the analyses of attention weights hold one around their batches).
class AttentionRecording {
 public:
  AttentionRecording(torch::nn::Module& model, const std::vector<NamedAttention>& layers);
  ~AttentionRecording();
  AttentionRecording(const AttentionRecording&) = delete;
  AttentionRecording& operator=(const AttentionRecording&) = delete;
  // Fresh recordings for the next batch, so a layer the batch does not run is noticed.
  void restart();

 private:
  torch::nn::Module& model_;
  const std::vector<NamedAttention>& layers_;
  bool was_training_;
};

// The encoder's self-attention modules of a seq2seq or encoder model (`encoder.layers.N.
// self_attn`), in layer order; strata::Error when it has none (a causal LM).
std::vector<NamedAttention> encoder_self_attention(torch::nn::Module& model);

// GR of every pattern for every head of `layers`, over the first max_examples of the split's
// examples (costs: the task's costs(Split::Valid)), batched in order. The modules record
// their weights only during the call; the model runs in eval mode (restored afterwards),
// without gradients. strata::Error when no pattern or layer is given, the split is empty, or
// a pattern needs an input the batch lacks.
GlobalRelevance global_relevance(torch::nn::Module& model, AnalysisBatchSource& source,
                                 std::span<const std::size_t> costs, const std::vector<NamedAttention>& layers,
                                 const std::vector<attn::Pattern>& patterns, const RelevanceOptions& options);

// {"examples", "layers", "patterns": [{"name", "matrix", "mean", "std", "threshold"
//  (mean + 3 std), "kept", "top": [{"layer", "layer_name", "head", "value"}]}]}
nlohmann::ordered_json to_json(const GlobalRelevance& relevance);

}  // namespace strata::analysis
