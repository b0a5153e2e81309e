#include <gtest/gtest.h>
#include <set>
#include <torch/torch.h>

#include "strata/decode/generate.h"
#include "strata/decode/model_steppers.h"
#include "strata/models/causal_lm.h"
#include "strata/models/seq2seq.h"
#include "strata/nn/kv_cache.h"

namespace strata::decode {
namespace {

models::ModelConfig tiny(const std::string& architecture) {
  models::ModelConfig c;
  c.architecture = architecture;
  c.vocab_size = 50;
  c.d_model = 32;
  c.heads = 4;
  c.d_ff = 64;
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.max_positions = 64;
  c.dropout = 0.0;
  return c;
}

GenerationOptions options(std::int64_t beam, bool sample) {
  GenerationOptions o;
  o.max_length = 20;
  o.beam_size = beam;
  o.do_sample = sample;
  o.no_repeat_ngram_size = beam > 1 ? 3 : 0;
  o.seed = 9;
  o.start_id = 0;
  o.eos_id = 1;
  o.pad_id = 2;
  return o;
}

// Cached and uncached decoding must give the same sequences: greedy, beam (which reorders
// the cache) and sampling, on a batch of sources with padding.
TEST(Seq2SeqStepper, CachedAndUncachedDecodingGiveIdenticalOutputs) {
  torch::manual_seed(1);
  models::Seq2Seq model(tiny("seq2seq"));
  model->eval();
  torch::NoGradGuard no_grad;
  const at::Tensor source = torch::randint(3, 50, {3, 9}, torch::kInt64);
  at::Tensor padding = torch::ones({3, 9}, torch::kBool);
  padding[1].narrow(0, 6, 3).fill_(false);
  for (const auto& [beam, sample] : {std::pair{1, false}, {4, false}, {1, true}}) {
    Seq2SeqStepper cached(model, model->encode(source, padding), /*use_cache=*/true);
    Seq2SeqStepper uncached(model, model->encode(source, padding), /*use_cache=*/false);
    const Sequences a = generate(cached, options(beam, sample));
    const Sequences b = generate(uncached, options(beam, sample));
    EXPECT_EQ(a, b) << "beam " << beam << " sample " << sample;
    EXPECT_EQ(a.size(), 3u);
  }
}

// Beam search's first reorder makes each input K rows; its later ones move rows within an
// input's K, which leaves the cross keys and values where they were (no copy); one that moves a
// row to another input copies them again, row for row.
TEST(KvCache, ReordersWithinAnInputLeaveTheCrossKeysAndValuesUncopied) {
  nn::KvCache cache(2);
  for (nn::LayerKvCache& layer : cache.layers) {
    layer.cross_k = torch::arange(2 * 3 * 4, torch::kFloat).view({2, 1, 3, 4});
    layer.cross_v = layer.cross_k + 100;
    layer.self_k = torch::randn({2, 1, 1, 4});
  }
  const auto rows = [](std::vector<std::int64_t> r) { return torch::tensor(r, torch::kLong); };
  const at::Tensor inputs_k = cache.layers[0].cross_k.clone();
  cache.reorder(rows({0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(cache.cross_copies, 3);
  EXPECT_TRUE(cache.layers[1].cross_k.equal(inputs_k.index_select(0, rows({0, 0, 0, 1, 1, 1}))));

  const at::Tensor within = rows({2, 0, 1, 5, 5, 3});
  const at::Tensor self_before = cache.layers[0].self_k.clone();
  const void* cross_before = cache.layers[0].cross_v.data_ptr();
  EXPECT_TRUE(cache.keeps_cross_rows(within));
  EXPECT_TRUE(cache.reorder(within));
  EXPECT_EQ(cache.layers[0].cross_v.data_ptr(), cross_before);
  EXPECT_TRUE(cache.layers[0].self_k.equal(self_before.index_select(0, within)));

  const at::Tensor across = rows({3, 0, 1, 2, 4, 5});  // row 0 takes input 1's
  EXPECT_FALSE(cache.keeps_cross_rows(across));
  EXPECT_FALSE(cache.reorder(across));
  EXPECT_TRUE(cache.layers[0].cross_k[0].equal(inputs_k[1]));
  EXPECT_TRUE(cache.layers[1].cross_v[3].equal(inputs_k[0] + 100));
  EXPECT_EQ(cache.cross_copies, 1);
  EXPECT_FALSE(cache.keeps_cross_rows(within));
}

// Outside autograd the cached keys grow in a buffer: a step appends its positions in place and
// the cache is a view of the buffer's start; a cache made anew by a reorder, or a copy of a
// cache (whose view still lies in the original's buffer), starts a buffer of its own.
TEST(KvCache, StepsAppendInPlaceAndAReorderedOrCopiedCacheStartsAfresh) {
  torch::NoGradGuard no_grad;
  const at::Tensor steps = torch::randn({2, 3, 40, 4});
  nn::LayerKvCache layer;
  std::vector<const void*> starts;
  for (std::int64_t t = 0; t < 40; t += 5) {
    layer.self_k = nn::append_positions(layer.self_k_buffer, layer.self_k, steps.narrow(2, t, 5));
    ASSERT_TRUE(layer.self_k.equal(steps.narrow(2, 0, t + 5))) << t;
    starts.push_back(layer.self_k.data_ptr());
  }
  // Capacity 16, then 40 (2 x 20) from the step that reached 20: two buffers in 8 steps.
  EXPECT_EQ(std::set<const void*>(starts.begin(), starts.end()).size(), 2u);

  nn::KvCache cache(1);
  cache.layers[0] = layer;  // a copy: its self_k is a view of `layer`'s buffer, its buffer empty
  cache.layers[0].self_k = nn::append_positions(cache.layers[0].self_k_buffer, cache.layers[0].self_k,
                                                steps.narrow(2, 0, 1));
  EXPECT_NE(cache.layers[0].self_k.data_ptr(), layer.self_k.data_ptr());
  EXPECT_TRUE(layer.self_k.equal(steps));

  cache.reorder(torch::tensor({1, 0}, torch::kLong));
  const at::Tensor next = torch::randn({2, 3, 1, 4});
  const at::Tensor expected = torch::cat({cache.layers[0].self_k, next}, 2);
  cache.layers[0].self_k = nn::append_positions(cache.layers[0].self_k_buffer, cache.layers[0].self_k, next);
  EXPECT_TRUE(cache.layers[0].self_k.equal(expected));
}

TEST(CausalLmStepper, CachedAndUncachedDecodingGiveIdenticalOutputsAndContinueEachPrompt) {
  torch::manual_seed(2);
  models::CausalLm model(tiny("causal_lm"));
  model->eval();
  torch::NoGradGuard no_grad;
  const at::Tensor prompts = torch::randint(3, 50, {2, 5}, torch::kInt64);
  for (const std::int64_t beam : {1, 3}) {
    CausalLmStepper cached(model.ptr(), prompts, true);
    CausalLmStepper uncached(model.ptr(), prompts, false);
    EXPECT_EQ(generate(cached, options(beam, false)), generate(uncached, options(beam, false))) << "beam " << beam;
  }
  // Greedy's first token continues each prompt: the argmax of the full-prompt logits.
  CausalLmStepper stepper(model.ptr(), prompts, true);
  const Sequences greedy = generate(stepper, options(1, false));
  const at::Tensor expected = model->forward(prompts).select(1, -1).argmax(-1);
  EXPECT_EQ(greedy[0][0], expected[0].item<std::int64_t>());
  EXPECT_EQ(greedy[1][0], expected[1].item<std::int64_t>());
}

}  // namespace
}  // namespace strata::decode
