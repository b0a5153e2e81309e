#pragma once
// Activation recomputation over spans of a sequence (gradient checkpointing, as PyTorch's
// torch.utils.checkpoint, which libtorch's C++ API lacks). The forward pass runs a function
// span by span without recording a graph and keeps only its inputs; backward runs it again,
// one span at a time, with the graph, and takes that span's gradients. Memory: the inputs, the
// output and one span's graph, instead of the whole sequence's graph; cost: one more forward.
// The "sequence" is any dimension: the FFT convolution runs channel groups this way. This is
// what takes a Block-State layer stack to a million tokens (nn/block_state_layer.h).
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace strata::nn {

// An input of the function: sliced to [start - before, end) (clipped at 0) along `dim` for
// each span, or passed whole with dim = kWhole.
struct SpanInput {
  static constexpr std::int64_t kWhole = -1;
  at::Tensor tensor;
  std::int64_t dim = kWhole;
  std::int64_t before = 0;
};

// fn(the span's inputs, in order, start, end) -> the span's output: end - start positions
// along out_dim.
using SpanFunction =
    std::function<at::Tensor(const std::vector<at::Tensor>& inputs, std::int64_t start, std::int64_t end)>;

// The spans' outputs concatenated along out_dim: positions 0 .. length - 1 in spans of `span`
// (the last one shorter). Gradients reach the inputs that require them and `parameters`: the
// tensors fn reads without taking them as inputs (a module's parameters). fn must give the same
// result when run again: the CPU generator's state is restored before each span's rerun, so
// dropout draws the same masks. Its gradients are made without a graph: no second derivative
// through it. strata::Error if span or length is not positive.
at::Tensor recompute_by_span(const SpanFunction& fn, std::vector<SpanInput> inputs, std::int64_t length,
                             std::int64_t span, std::int64_t out_dim, const std::vector<at::Tensor>& parameters);

}  // namespace strata::nn
