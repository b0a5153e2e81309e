// recompute_by_span(): a hand-made autograd node, as the fused attention's (attn/kernels/fused.cpp):
// backward needs the function itself, which a torch::autograd::Function's IValues cannot hold.
#include "strata/nn/recompute.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/torch.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>

#include "strata/core/error.h"

namespace strata::nn {

namespace {

using torch::autograd::SavedVariable;
using torch::autograd::variable_list;

struct Span {
  std::int64_t start, end;
};

// Input i's part for a span.
at::Tensor part_of(const at::Tensor& t, const SpanInput& input, const Span& span) {
  if (input.dim == SpanInput::kWhole) return t;
  const std::int64_t from = std::max<std::int64_t>(0, span.start - input.before);
  return t.narrow(input.dim, from, span.end - from);
}

at::Tensor generator_state() {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get_state();
}

void set_generator_state(const at::Tensor& state) {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state);
}

class RecomputeBackward final : public torch::autograd::Node {
 public:
  // Edges: the inputs, then the parameters.
  SpanFunction fn;
  std::vector<SpanInput> layout;  // each input's slicing; its tensor is released, kept in `saved`
  std::vector<SavedVariable> saved;
  std::vector<at::Tensor> parameters;
  std::vector<Span> spans;
  at::Tensor rng;  // [spans, state]: the CPU generator's state before each span ran
  std::int64_t out_dim = 0;

  std::string name() const override { return "strata::nn::RecomputeBackward"; }

  void release_variables() override {
    for (SavedVariable& s : saved) s.reset_data();
    parameters.clear();
    rng.reset();
  }

  variable_list apply(variable_list&& grads) override {
    const std::size_t inputs = layout.size();
    variable_list result(inputs + parameters.size());
    if (!grads[0].defined()) return result;
    const auto self = shared_from_this();
    std::vector<at::Tensor> tensors(inputs);
    for (std::size_t i = 0; i < inputs; ++i) tensors[i] = saved[i].unpack(self);
    const at::Tensor resume = generator_state();
    for (auto s = spans.size(); s-- > 0;) {
      const Span& span = spans[s];
      std::vector<at::Tensor> leaves(inputs), wrt;
      std::vector<std::size_t> wrt_slot;  // result index of each tensor in wrt
      for (std::size_t i = 0; i < inputs; ++i) {
        leaves[i] = part_of(tensors[i], layout[i], span).detach();
        if (task_should_compute_output(i)) {
          leaves[i].requires_grad_(true);
          wrt.push_back(leaves[i]);
          wrt_slot.push_back(i);
        }
      }
      for (std::size_t p = 0; p < parameters.size(); ++p)
        if (task_should_compute_output(inputs + p)) {
          wrt.push_back(parameters[p]);
          wrt_slot.push_back(inputs + p);
        }
      if (wrt.empty()) break;
      set_generator_state(rng[static_cast<std::int64_t>(s)]);
      at::Tensor out;
      {
        torch::AutoGradMode with_graph(true);
        out = fn(leaves, span.start, span.end);
      }
      if (!out.requires_grad()) continue;
      const at::Tensor grad = grads[0].narrow(out_dim, span.start, span.end - span.start);
      const variable_list got = torch::autograd::grad({out}, wrt, {grad}, false, false, /*allow_unused=*/true);
      torch::NoGradGuard no_grad;
      for (std::size_t w = 0; w < wrt.size(); ++w) {
        if (!got[w].defined()) continue;
        const std::size_t slot = wrt_slot[w];
        if (slot >= inputs) {  // a parameter: summed over the spans
          result[slot] = result[slot].defined() ? result[slot] + got[w] : got[w];
          continue;
        }
        if (!result[slot].defined()) result[slot] = at::zeros_like(tensors[slot]);
        part_of(result[slot], layout[slot], span).add_(got[w]);
      }
    }
    set_generator_state(resume);
    return result;
  }
};

}  // namespace

at::Tensor recompute_by_span(const SpanFunction& fn, std::vector<SpanInput> inputs, std::int64_t length,
                             std::int64_t span, std::int64_t out_dim, const std::vector<at::Tensor>& parameters) {
  if (length <= 0 || span <= 0)
    throw Error("recompute_by_span: length and span must be positive, got " + std::to_string(length) + " and " +
                std::to_string(span));
  std::vector<at::Tensor> tensors;
  for (const SpanInput& input : inputs) {
    if (input.dim != SpanInput::kWhole && (input.dim < 0 || input.dim >= input.tensor.dim() ||
                                           input.tensor.size(input.dim) != length))
      throw Error("recompute_by_span: an input sliced along dimension " + std::to_string(input.dim) + " must have " +
                  std::to_string(length) + " positions there");
    tensors.push_back(input.tensor);
  }
  const bool with_graph = torch::autograd::compute_requires_grad(tensors, parameters);
  std::vector<Span> spans;
  for (std::int64_t start = 0; start < length; start += span) spans.push_back({start, std::min(length, start + span)});

  // Each span's output is written into the whole one as it comes (a concatenation at the end
  // would hold every piece and the whole at once: twice the output).
  // The generator's states go into one tensor made up front: a small block kept from each span
  // would sit above that span's freed memory on the heap, which is then never given back.
  at::Tensor out, rng;
  if (with_graph) {
    const at::Tensor state = generator_state();
    rng = at::empty({static_cast<std::int64_t>(spans.size()), state.numel()}, state.options());
  }
  {
    torch::NoGradGuard no_grad;
    for (std::size_t index = 0; index < spans.size(); ++index) {
      const Span& s = spans[index];
      if (with_graph) rng[static_cast<std::int64_t>(index)].copy_(generator_state());
      std::vector<at::Tensor> parts;
      for (std::size_t i = 0; i < inputs.size(); ++i) parts.push_back(part_of(tensors[i], inputs[i], s));
      const at::Tensor piece = fn(parts, s.start, s.end);
      if (!out.defined()) {
        std::vector<std::int64_t> shape = piece.sizes().vec();
        shape.at(out_dim) = length;
        out = at::empty(shape, piece.options());
      }
      out.narrow(out_dim, s.start, s.end - s.start).copy_(piece);
    }
  }
  if (!with_graph) return out;

  auto node = std::shared_ptr<RecomputeBackward>(new RecomputeBackward(), torch::autograd::deleteNode);
  node->set_next_edges(torch::autograd::collect_next_edges(tensors, parameters));
  torch::autograd::set_history(out, node);
  node->fn = fn;
  for (SpanInput& input : inputs) {
    node->saved.emplace_back(input.tensor, false);
    input.tensor = at::Tensor();
  }
  node->layout = std::move(inputs);
  node->parameters = parameters;
  node->spans = std::move(spans);
  node->rng = std::move(rng);
  node->out_dim = out_dim;
  return out;
}

}  // namespace strata::nn
