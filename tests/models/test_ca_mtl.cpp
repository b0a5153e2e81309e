#include <gtest/gtest.h>
#include <torch/torch.h>

#include "strata/core/error.h"
#include "strata/models/ca_mtl.h"
#include "strata/models/encoder_model.h"

namespace strata::models {
namespace {

ModelConfig tiny_ca_mtl() {
  ModelConfig c;
  c.architecture = "ca_mtl";
  c.vocab_size = 40;
  c.d_model = 32;
  c.heads = 2;
  c.d_ff = 32;
  c.encoder_layers = 2;
  c.max_positions = 16;  // N = d / L = 2 blocks of 8
  c.dropout = 0.0;
  c.tasks = "a:3,b:1";
  return c;
}

// Copies every tensor of `from` into the same name of `to`.
void copy_by_name(const torch::nn::Module& from, torch::nn::Module& to) {
  torch::NoGradGuard no_grad;
  const auto source = from.named_parameters();
  for (auto& p : to.named_parameters())
    if (const auto* found = source.find(p.key())) p.value().copy_(*found);
}

TEST(TaskHeads, ParseAndFormat) {
  const std::vector<TaskHead> heads = parse_task_heads("section:55, jaccard:1");
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_EQ(heads[0], (TaskHead{"section", 55}));
  EXPECT_EQ(heads[1], (TaskHead{"jaccard", 1}));
  EXPECT_EQ(format_task_heads(heads), "section:55,jaccard:1");
  for (const char* bad : {"", "a", "a:0", "a:x", ":3", "a:2,a:3"}) EXPECT_THROW(parse_task_heads(bad), Error) << bad;
}

TEST(CaMtl, ConditionalModulesStartAsThePlainEncoder) {
  // Alignment, the block-diagonal bias and the conditional LayerNorms are the identity at
  // initialisation: with an encoder's weights, CA-MTL (bottleneck off) computes the encoder.
  torch::manual_seed(5);
  ModelConfig config = tiny_ca_mtl();
  config.camtl_bottleneck = false;
  CaMtlModel model(config);
  ModelConfig plain_config = config;
  plain_config.architecture = "encoder";
  plain_config.head = EncoderHead::Token;
  EncoderModel plain(plain_config);
  copy_by_name(*plain, *model);
  model->eval();
  plain->eval();
  const at::Tensor ids = torch::randint(5, 40, {3, 16});
  at::Tensor padding = torch::ones({3, 16}, torch::kBool);
  padding[2].narrow(0, 10, 6).fill_(false);
  const at::Tensor task = torch::tensor({0, 1, 0});
  EXPECT_TRUE(torch::allclose(model->encode(ids, padding, task), plain->encode(ids, padding), 1e-5, 1e-5));
  EXPECT_GT(model->self_attn_norms->size(), 0u);
  EXPECT_EQ(model->attention_biases->size(), 2u);
}

TEST(CaMtl, TheTaskChangesTheOutputOnceTheModulesLearn) {
  torch::manual_seed(6);
  CaMtlModel model(tiny_ca_mtl());
  model->eval();
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->named_parameters())
      if (p.key().starts_with("conditional_")) p.value().normal_(0, 0.3);
  }
  const at::Tensor ids = torch::randint(5, 40, {1, 16}).repeat({2, 1});
  const at::Tensor pooled = model->pooled(ids, torch::ones({2, 16}, torch::kBool), torch::tensor({0, 1}));
  EXPECT_FALSE(torch::allclose(pooled[0], pooled[1], 1e-4, 1e-4));
  EXPECT_EQ(model->head(0, pooled).sizes(), (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(model->head(1, pooled).sizes(), (std::vector<std::int64_t>{2}));  // a regression: one value a row
}

TEST(CaMtl, HardVariantKeepsTheFirstTokenInsideItsBlock) {
  // camtl_attention = hard masks attention to the query's block of L / N = 8 positions, so
  // the first token's vector cannot depend on tokens 8-15, in any layer.
  torch::manual_seed(7);
  ModelConfig config = tiny_ca_mtl();
  config.camtl_attention = "hard";
  CaMtlModel model(config);
  model->eval();
  at::Tensor ids = torch::randint(5, 40, {2, 16});
  ids[1].narrow(0, 0, 8).copy_(ids[0].narrow(0, 0, 8));
  const at::Tensor pooled = model->pooled(ids, torch::ones({2, 16}, torch::kBool), torch::tensor({0, 0}));
  EXPECT_TRUE(torch::allclose(pooled[0], pooled[1], 1e-5, 1e-5));
  config.camtl_attention = "block";
  CaMtlModel soft(config);
  soft->eval();
  const at::Tensor mixed = soft->pooled(ids, torch::ones({2, 16}, torch::kBool), torch::tensor({0, 0}));
  EXPECT_FALSE(torch::allclose(mixed[0], mixed[1], 1e-5, 1e-5));
}

TEST(CaMtl, RejectsInputsNotPaddedToTheBiasLengthAndBadSettings) {
  CaMtlModel model(tiny_ca_mtl());
  EXPECT_THROW(model->encode(torch::ones({1, 8}, torch::kInt64), torch::ones({1, 8}, torch::kBool), torch::tensor({0})),
               Error);
  ModelConfig odd = tiny_ca_mtl();
  odd.max_positions = 24;  // 24 does not divide 32: N must be given
  EXPECT_THROW(CaMtlModel{odd}, Error);
  odd.camtl_blocks = 3;
  EXPECT_NO_THROW(CaMtlModel{odd});
  ModelConfig unknown = tiny_ca_mtl();
  unknown.camtl_attention = "diagonal";
  EXPECT_THROW(CaMtlModel{unknown}, Error);
}

}  // namespace
}  // namespace strata::models
