#pragma once
// Keys and values kept between decoding steps: per decoder layer, the self-attention keys
// and values of every position so far (growing by one step each call) and the
// cross-attention keys and values of the encoder output (computed once). A Block-State
// layer keeps only the keys its next queries can read, plus its state-space model's state.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace strata::nn {

// Room for more positions than a cache holds (append_positions). A copy starts empty: a cache and
// its copy must not both write past their T in one buffer.
struct PositionBuffer {
  at::Tensor tensor;
  PositionBuffer() = default;
  PositionBuffer(const PositionBuffer&) {}
  PositionBuffer& operator=(const PositionBuffer&) {
    tensor = at::Tensor();
    return *this;
  }
  PositionBuffer(PositionBuffer&&) = default;
  PositionBuffer& operator=(PositionBuffer&&) = default;
};

struct LayerKvCache {
  at::Tensor self_k, self_v;    // [B, H, T, Dh], T = steps so far; undefined before step 1
  PositionBuffer self_k_buffer, self_v_buffer;  // what self_k and self_v are the start of
  at::Tensor cross_k, cross_v;  // [B, H, Ls, Dh]; undefined until the first step computes them
  // Block-State layers (nn/block_state_layer.h): the context states' keys and values the next
  // block reads, and the state-space model's state (S4D: its recurrence state [B, C, N/2],
  // complex; the unstructured kernel: every input so far [B, C, T]).
  at::Tensor context_k, context_v, ssm_state;
};

// cached [B, H, T, Dh] (undefined: T = 0) followed by step [B, H, t, Dh] along the positions. Outside
// autograd the result is the first T + t positions of `buffer`, which doubles when full: a step
// then copies its own t positions, where a cat copies all T + t (every layer, every step). Where
// cached is not buffer's start (a reorder made it anew), buffer starts again from it.
at::Tensor append_positions(PositionBuffer& buffer, const at::Tensor& cached, const at::Tensor& step);

struct KvCache {
  std::vector<LayerKvCache> layers;
  std::int64_t length = 0;  // positions already cached (the next position to decode)
  // [B, length] bool: which cached positions are real tokens, once a call gave padding
  // (left-padded prompts); undefined = all real. A decoder stack keeps it.
  at::Tensor key_padding;
  // [B, length] int32: the cached positions' segments, kept by a model that derives them from
  // its tokens (causal_lm with model.segment_markers) for the masks that read them.
  at::Tensor segment;

  // How many consecutive rows of the cross keys and values are copies of one row. Beam search's
  // first reorder makes each input's row K rows (arange(B).repeat_interleave(K)); its later ones
  // move rows only within an input's K, which leaves those tensors as they were: no copy of the
  // encoder side's [B K, H, Ls, Dh] per layer every step.
  std::int64_t cross_copies = 1;

  explicit KvCache(std::size_t num_layers = 0) : layers(num_layers) {}
  // Keeps rows `index` ([N] int64) of every cached tensor, in that order: beam search's
  // reordering after each step. The cross keys and values are not copied where
  // keeps_cross_rows(index); returns whether they were kept, so that a caller keeps what it
  // copied row for row with them.
  bool reorder(const at::Tensor& index);
  // Whether `index` maps every row of the cross keys and values to a copy of itself (a row of
  // its own group of cross_copies): then the encoder side's tensors are the same after it.
  bool keeps_cross_rows(const at::Tensor& index) const;
};

}  // namespace strata::nn
