// Head-averaged encoder self-attention maps (seed 000 Figure 1): their shapes with and without
// prefixes, prefixes on some layers only, the summary numbers, and the model left as it was.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "strata/analysis/encoder_attention.h"
#include "strata/core/error.h"
#include "strata/models/seq2seq.h"
#include "strata/nn/multi_head_attention.h"
#include "strata/nn/transformer_layers.h"

namespace strata::analysis {
namespace {

models::Seq2Seq tiny_seq2seq(std::int64_t prefix_length, const std::string& prefix_layers = "all") {
  models::ModelConfig c;
  c.vocab_size = 30;
  c.d_model = 16;
  c.heads = 2;
  c.d_ff = 32;
  c.encoder_layers = 2;
  c.decoder_layers = 1;
  c.max_positions = 32;
  c.prefix_length = prefix_length;
  c.prefix_hidden = 8;
  c.prefix_layers = prefix_layers;
  torch::manual_seed(5);
  return models::Seq2Seq(c);
}

Seq2SeqExample example_of(const std::string& id, std::int32_t tokens) {
  Seq2SeqExample e;
  e.id = id;
  for (std::int32_t p = 0; p < tokens; ++p) {
    e.source.token.push_back(5 + p);
    e.source.position.push_back(p);
    e.source.section.push_back(0);
    e.source.paragraph.push_back(0);
    e.source.sentence.push_back(0);
    e.source.segment.push_back(0);
  }
  e.source.tree.parent = {-1};
  e.source.tree.depth = {0};
  e.source.tree.heading = {""};
  e.target = {7, 1};
  return e;
}

// Every (example, layer) map, in visiting order.
std::vector<AttentionMap> maps_of(models::Seq2Seq& model, const std::vector<Seq2SeqExample>& examples) {
  std::vector<AttentionMap> maps;
  visit_encoder_attention(*model, examples, [&](const AttentionMap& map) { maps.push_back(map); });
  return maps;
}

void expect_rows_sum_to_one(const at::Tensor& map) {
  const at::Tensor sums = map.sum(1);
  for (std::int64_t i = 0; i < sums.size(0); ++i) EXPECT_NEAR(sums[i].item<double>(), 1.0, 1e-5) << "row " << i;
}

TEST(EncoderAttention, MapsWithoutPrefixesAreSquare) {
  models::Seq2Seq model = tiny_seq2seq(0);
  model->train();
  const std::vector<Seq2SeqExample> examples = {example_of("a", 5), example_of("b", 3)};
  const std::vector<AttentionMap> maps = maps_of(model, examples);
  ASSERT_EQ(maps.size(), 4u);
  const std::vector<std::pair<std::size_t, std::size_t>> order = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
  for (std::size_t i = 0; i < maps.size(); ++i) {
    EXPECT_EQ(maps[i].example, order[i].first);
    EXPECT_EQ(maps[i].layer, order[i].second);
    EXPECT_EQ(maps[i].prefix_length, 0);
    const std::int64_t n = maps[i].example == 0 ? 5 : 3;
    EXPECT_EQ(maps[i].weights.sizes(), (std::vector<std::int64_t>{n, n}));
    EXPECT_EQ(maps[i].weights.scalar_type(), torch::kFloat);
    expect_rows_sum_to_one(maps[i].weights);
  }
  // Training mode restored, recording off.
  EXPECT_TRUE(model->is_training());
  for (const auto& layer : *model->encoder->layers)
    EXPECT_FALSE(layer->as<nn::EncoderLayer>()->self_attn->recorded_weights().defined());
}

TEST(EncoderAttention, PrefixColumnsComeFirst) {
  models::Seq2Seq model = tiny_seq2seq(4);
  const std::vector<AttentionMap> maps = maps_of(model, {example_of("a", 6)});
  ASSERT_EQ(maps.size(), 2u);
  for (const AttentionMap& map : maps) {
    EXPECT_EQ(map.prefix_length, 4);
    EXPECT_EQ(map.weights.sizes(), (std::vector<std::int64_t>{6, 10}));
    expect_rows_sum_to_one(map.weights);  // over the P prefix keys and the inputs together
    EXPECT_GT(prefix_mass(map.weights, map.prefix_length), 0.0);
  }
}

TEST(EncoderAttention, PrefixesOnTheTopLayerOnly) {
  models::Seq2Seq model = tiny_seq2seq(3, "top");
  const std::vector<AttentionMap> maps = maps_of(model, {example_of("a", 4)});
  ASSERT_EQ(maps.size(), 2u);
  EXPECT_EQ(maps[0].prefix_length, 0);
  EXPECT_EQ(maps[0].weights.size(1), 4);
  EXPECT_EQ(maps[1].prefix_length, 3);
  EXPECT_EQ(maps[1].weights.size(1), 7);
}

TEST(EncoderAttention, RejectsAnEmptyExample) {
  models::Seq2Seq model = tiny_seq2seq(0);
  EXPECT_THROW(maps_of(model, {example_of("empty", 0)}), Error);
  EXPECT_TRUE(model->is_training());  // a new module trains; the failed call restored that
}

TEST(EncoderAttentionSummary, PrefixMassAndEntropy) {
  // Two queries, one prefix column: 0.5 and 1 on it.
  const at::Tensor map = torch::tensor({0.5f, 0.5f, 1.0f, 0.0f}).view({2, 2});
  EXPECT_NEAR(prefix_mass(map, 1), 0.75, 1e-7);
  EXPECT_EQ(prefix_mass(map, 0), 0.0);
  // ln 2 for the even row, 0 for the certain one (0 · log 0 = 0).
  EXPECT_NEAR(mean_row_entropy(map), std::log(2.0) / 2, 1e-7);
}

}  // namespace
}  // namespace strata::analysis
