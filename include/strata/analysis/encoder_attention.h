#pragma once
// The encoder self-attention of a seq2seq model as seed 000 draws it (§4, Figure 1, A.4
// Figure 6): per example and encoder layer, the attention weights averaged over heads, queries
// down, the P prefix keys and then the input keys across. The prefix length is read from the
// recorded weights' shape (keys = P + the example's tokens), so a model without prefixes gives
// P = 0 and plain [n, n] maps.
#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "strata/data/seq2seq_examples.h"

namespace strata {
class Progress;
}

namespace strata::models {
class Seq2SeqImpl;
}

namespace strata::analysis {

struct AttentionMap {
  std::size_t example = 0, layer = 0;
  std::int64_t prefix_length = 0;  // P: the first P columns are the prefix slots
  at::Tensor weights;              // [n, P + n] float32 on the CPU, n the example's tokens
  at::Tensor head_weights;         // [H, n, P + n] float32 on the CPU: each head's own map
};

using AttentionMapVisitor = std::function<void(const AttentionMap&)>;

// Encodes each example alone (a batch of one, so no padding enters a map), recording every
// encoder layer's self-attention, and calls `visit` once per example and layer, examples in
// order and layers in order within one. The model runs in eval mode (restored afterwards)
// without gradients; recording is switched off again on every way out. `progress` advances
// per example. strata::Error when an example is empty.
void visit_encoder_attention(models::Seq2SeqImpl& model, std::span<const Seq2SeqExample> examples,
                             const AttentionMapVisitor& visit, Progress* progress = nullptr);

// The mean over query rows of the weight on the first prefix_length columns (0 when P = 0).
double prefix_mass(const at::Tensor& map, std::int64_t prefix_length);

// The mean over query rows of the entropy of the row, in nats (0 · log 0 = 0).
double mean_row_entropy(const at::Tensor& map);

}  // namespace strata::analysis
