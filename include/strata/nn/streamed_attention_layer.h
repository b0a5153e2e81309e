#pragma once
// One attention layer's training step over a sequence too long to hold in memory: token
// embedding -> q, k, v projections -> structured attention -> output projection, forward and
// backward chunk by chunk, so that memory holds one chunk's activations rather than the whole
// sequence's (at 2^20 tokens and 512 channels every whole activation is 2 GiB in fp32).
//
// Exact, not an approximation: the loss is sum(Y * G) over the layer's output Y and an output
// gradient G given row by row, so it splits over query rows, and a chunk's rows need only the
// keys their structure lets them see:
//   - window(W, W) | global(G): a chunk of queries reads its keys plus W tokens each side
//     (projected again, so the halo's share of the gradient comes from the chunk that reads
//     it) and the G global tokens as prefix slots. The global tokens' own rows see every key:
//     their log-sum-exp and output come from a first pass over all keys without a graph, and
//     each chunk then adds its keys' share of those rows' gradient (the flash-attention
//     backward for a tile: dS = P (dO V^T - rowsum(dO * O))) to its own backward.
//   - same_section: whole sections, grouped up to the chunk size (a longer section alone).
// Cost: the layer's forward and backward, the halo's projections again, and for global
// tokens one more pass of the k and v projections. What the sequence holds whole: the token
// ids, the gradients of the parameters, and the global rows' statistics.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>

namespace strata::nn {

// embedding [V, D]; wq, wk, wv, wo [D, D], each a linear layer's weight without bias (y =
// x Wᵀ, by nn::linear_product); D = heads x head dim. Gradients accumulate into each tensor's
// grad(), as backward() does.
struct StreamedLayerWeights {
  at::Tensor embedding, wq, wk, wv, wo;
  std::int64_t heads = 8;
};

// Which keys a token sees: window(window, window) | global(global) when `section` is
// undefined; otherwise same_section over `section` ([L] int32, each section's tokens
// contiguous).
struct StreamedStructure {
  std::int64_t window = 0, global = 0;
  at::Tensor section;
};

// G's rows [start, end): [end - start, D] float. Asked for each row once.
using OutputGradient = std::function<at::Tensor(std::int64_t start, std::int64_t end)>;

struct StreamedStepResult {
  double loss = 0;                // sum(Y * G) over every row
  std::int64_t chunks = 0;        // backward passes run
  std::int64_t largest_rows = 0;  // the most tokens one chunk projected (its queries and keys)
};

// One forward + backward of the layer over token ids [L] (int64), queries `chunk` at a time.
// strata::Error for ids that are not [L] int64, D not a multiple of heads, chunk <= global, a
// negative window or global, global >= L, a section id below the one before it, or sections
// not one int32 per token.
StreamedStepResult streamed_attention_step(const StreamedLayerWeights& weights, const at::Tensor& ids,
                                           const StreamedStructure& structure, const OutputGradient& output_grad,
                                           std::int64_t chunk);

}  // namespace strata::nn
