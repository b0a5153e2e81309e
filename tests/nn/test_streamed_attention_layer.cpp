// The streamed layer step (chunk by chunk, with halos, global rows in two passes, sections
// grouped) against the same layer run whole through the dense reference kernel: the same loss
// and the same gradient for every parameter.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "strata/attn/attention_call.h"
#include "strata/attn/spec.h"
#include "strata/attn/token_layout.h"
#include "strata/core/error.h"
#include "strata/nn/streamed_attention_layer.h"

namespace strata {
namespace {

using nn::StreamedLayerWeights;
using nn::StreamedStructure;

constexpr std::int64_t kVocab = 40, kWidth = 32, kHeads = 4, kLength = 300;

struct Layer {
  StreamedLayerWeights weights;
  at::Tensor ids, output_grad;
};

Layer make_layer() {
  torch::manual_seed(11);
  Layer layer;
  const auto param = [](std::vector<std::int64_t> shape, double scale) {
    return (torch::randn(shape) * scale).requires_grad_(true);
  };
  layer.weights.embedding = param({kVocab, kWidth}, 1.0);
  layer.weights.wq = param({kWidth, kWidth}, 0.3);
  layer.weights.wk = param({kWidth, kWidth}, 0.3);
  layer.weights.wv = param({kWidth, kWidth}, 0.3);
  layer.weights.wo = param({kWidth, kWidth}, 0.3);
  layer.weights.heads = kHeads;
  layer.ids = torch::randint(0, kVocab, {kLength}, torch::kLong);
  layer.output_grad = torch::randn({kLength, kWidth});
  return layer;
}

std::vector<at::Tensor> parameters(const StreamedLayerWeights& w) { return {w.embedding, w.wq, w.wk, w.wv, w.wo}; }

// The parameters' gradients, taken out (the grads reset for the next run).
std::vector<at::Tensor> take_grads(const StreamedLayerWeights& w) {
  std::vector<at::Tensor> grads;
  for (at::Tensor p : parameters(w)) {
    grads.push_back(p.grad().clone());
    p.mutable_grad().reset();
  }
  return grads;
}

// The layer over the whole sequence at once.
double whole_layer_loss(const Layer& layer, const attn::LayerSpec& spec, const attn::TokenLayout* tokens) {
  const StreamedLayerWeights& w = layer.weights;
  const at::Tensor x = torch::embedding(w.embedding, layer.ids);
  const auto heads = [&](const at::Tensor& weight) {
    return x.mm(weight.t()).view({1, kLength, kHeads, kWidth / kHeads}).permute({0, 2, 1, 3});
  };
  attn::AttentionCall call;
  call.q = heads(w.wq);
  call.k = heads(w.wk);
  call.v = heads(w.wv);
  call.spec = &spec;
  call.query_layout = call.key_layout = tokens;
  call.training = true;
  const at::Tensor a = attn::attend(call, attn::Kernel::Reference);
  const at::Tensor y = a.permute({0, 2, 1, 3}).reshape({kLength, kWidth}).mm(w.wo.t());
  const at::Tensor loss = (y * layer.output_grad).sum();
  loss.backward();
  return loss.item<double>();
}

nn::StreamedStepResult streamed(const Layer& layer, const StreamedStructure& structure, std::int64_t chunk) {
  const at::Tensor g = layer.output_grad;
  return nn::streamed_attention_step(
      layer.weights, layer.ids, structure, [g](std::int64_t start, std::int64_t end) { return g.slice(0, start, end); },
      chunk);
}

void expect_same_gradients(const std::vector<at::Tensor>& streamed, const std::vector<at::Tensor>& whole) {
  const char* names[] = {"embedding", "wq", "wk", "wv", "wo"};
  for (std::size_t i = 0; i < whole.size(); ++i) {
    const double scale = whole[i].abs().max().item<double>();
    EXPECT_GT(scale, 0.0) << names[i];
    EXPECT_LT((streamed[i] - whole[i]).abs().max().item<double>(), 2e-5 * scale + 1e-6) << names[i];
  }
}

TEST(StreamedAttentionLayer, WindowAndGlobalTokensMatchTheWholeLayer) {
  Layer layer = make_layer();
  // Chunks of 64 queries: halos cross chunk edges, and the first chunk holds the global rows.
  const nn::StreamedStepResult result = streamed(layer, {7, 3, {}}, 64);
  const std::vector<at::Tensor> grads = take_grads(layer.weights);
  attn::LayerSpec spec;
  spec.heads[0].mask = attn::Mask::window(7, 7) || attn::Mask::global(3);
  const double loss = whole_layer_loss(layer, spec, nullptr);
  EXPECT_NEAR(result.loss, loss, 1e-4 * std::abs(loss) + 1e-4);
  expect_same_gradients(grads, take_grads(layer.weights));
  // Five chunks of queries (300 = 4 x 64 + 44); the most tokens projected at once is one
  // chunk, its two halos and the global tokens, not the sequence.
  EXPECT_EQ(result.chunks, 5);
  EXPECT_EQ(result.largest_rows, 64 + 2 * 7 + 3);
}

TEST(StreamedAttentionLayer, WindowAloneMatchesTheWholeLayer) {
  Layer layer = make_layer();
  const nn::StreamedStepResult result = streamed(layer, {20, 0, {}}, 50);
  const std::vector<at::Tensor> grads = take_grads(layer.weights);
  attn::LayerSpec spec;
  spec.heads[0].mask = attn::Mask::window(20, 20);
  const double loss = whole_layer_loss(layer, spec, nullptr);
  EXPECT_NEAR(result.loss, loss, 1e-4 * std::abs(loss) + 1e-4);
  expect_same_gradients(grads, take_grads(layer.weights));
}

at::Tensor sections_of(const std::vector<std::int64_t>& sizes) {
  std::vector<std::int32_t> ids;
  for (std::size_t s = 0; s < sizes.size(); ++s) ids.insert(ids.end(), sizes[s], static_cast<std::int32_t>(s));
  return torch::tensor(ids, torch::kInt);
}

TEST(StreamedAttentionLayer, SameSectionMatchesTheWholeLayer) {
  Layer layer = make_layer();
  // A section longer than the chunk (90) runs alone; short ones are grouped.
  const at::Tensor section = sections_of({5, 90, 3, 40, 100, 62});
  const nn::StreamedStepResult result = streamed(layer, {0, 0, section}, 64);
  const std::vector<at::Tensor> grads = take_grads(layer.weights);
  attn::LayerSpec spec;
  spec.heads[0].mask = attn::Mask::of(attn::MaskKind::SameSection);
  attn::TokenLayout tokens;
  tokens.section = section.unsqueeze(0);
  const double loss = whole_layer_loss(layer, spec, &tokens);
  EXPECT_NEAR(result.loss, loss, 1e-4 * std::abs(loss) + 1e-4);
  expect_same_gradients(grads, take_grads(layer.weights));
  // [5], [90], [3 + 40], [100], [62]
  EXPECT_EQ(result.chunks, 5);
  EXPECT_EQ(result.largest_rows, 100);
}

TEST(StreamedAttentionLayer, RejectsWhatItCannotStreamExactly) {
  Layer layer = make_layer();
  at::Tensor section = sections_of({100, 100, 100});
  section[150] = 0;  // section 0 comes back inside section 1
  EXPECT_THROW(streamed(layer, {0, 0, section}, 64), Error);
  EXPECT_THROW(streamed(layer, {8, 16, {}}, 16), Error);  // a chunk no longer than the global tokens
  EXPECT_THROW(streamed(layer, {0, 0, sections_of({10})}, 64), Error);  // sections of another length
  EXPECT_THROW(streamed(layer, {4, kLength, {}}, 2 * kLength), Error);  // every token global: dense
}

}  // namespace
}  // namespace strata
