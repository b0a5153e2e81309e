// The seq2seq model with structured attention from its config: HIBRIDS on the encoder
// (relation tables in self-attention) and on the decoder (HIBRIDS-DEC, seed 001 Eq. 3).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <random>

#include "strata/core/error.h"
#include "strata/models/seq2seq.h"
#include "strata/nn/hibrids_decoder_bias.h"

namespace strata::models {
namespace {

// Tree: root(0) ─ A(1) ─ A.1(2), A.2(3); root ─ B(4). Tokens walk through the sections in order.
Layout layout_of(std::int64_t length, std::mt19937& rng) {
  Layout layout;
  layout.tree.parent = {-1, 0, 1, 1, 0};
  layout.tree.depth = {0, 1, 2, 2, 1};
  layout.tree.heading.assign(5, "");
  std::int32_t section = 0;
  for (std::int64_t p = 0; p < length; ++p) {
    if (p > 0 && rng() % 3 == 0) section = std::min(section + 1, 4);
    layout.token.push_back(static_cast<std::int32_t>(3 + rng() % 30));
    layout.position.push_back(static_cast<std::int32_t>(p));
    layout.section.push_back(section);
    layout.paragraph.push_back(section);
    layout.sentence.push_back(static_cast<std::int32_t>(p / 3));
    layout.segment.push_back(0);
  }
  return layout;
}

ModelConfig hibrids_config(attn::RelationKind kind) {
  ModelConfig c;
  c.vocab_size = 40;
  c.d_model = 16;
  c.heads = 2;
  c.d_ff = 32;
  c.encoder_layers = 2;
  c.decoder_layers = 3;
  c.max_positions = 64;
  c.dropout = 0.0;
  attn::LayerSpec encoder;
  encoder.heads[0].mask = attn::Mask::window(3, 3) || attn::Mask::global(1);
  encoder.bias = {.kind = kind, .max_path = 2, .max_level = 1};
  c.encoder_attention = {encoder};
  c.decoder_hibrids = {.kind = kind, .max_path = 2, .max_level = 1};
  return c;
}

bool is_table(const std::string& name) {
  return name.find("relation_bias") != std::string::npos || name == "decoder.hibrids_bias";
}

void randomize_tables(Seq2Seq& model) {
  torch::NoGradGuard no_grad;
  for (auto& p : model->named_parameters())
    if (is_table(p.key())) p.value().normal_();
}

// The same model without its bias tables (the window base), with the same weights.
Seq2Seq base_twin(Seq2Seq& hibrids) {
  ModelConfig without = hibrids->config();
  without.encoder_attention[0].bias = {};
  without.decoder_hibrids = {};
  Seq2Seq plain(without);
  torch::NoGradGuard no_grad;
  const auto source = hibrids->named_parameters();
  for (auto& p : plain->named_parameters()) p.value().copy_(source[p.key()]);
  return plain;
}

struct Batch {
  std::vector<Layout> layouts;
  at::Tensor source, padding, target;
  attn::TokenLayout layout;
};

Batch batch_of(std::mt19937& rng) {
  Batch b;
  b.layouts = {layout_of(9, rng), layout_of(6, rng)};
  b.source = torch::full({2, 9}, 2, torch::kInt64);
  b.padding = torch::zeros({2, 9}, torch::kBool);
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::size_t p = 0; p < b.layouts[i].size(); ++p) {
      b.source[i][static_cast<std::int64_t>(p)] = b.layouts[i].token[p];
      b.padding[i][static_cast<std::int64_t>(p)] = true;
    }
  b.layout = attn::batch_layouts({&b.layouts[0], &b.layouts[1]}, 9);
  b.target = torch::randint(3, 40, {2, 5}, torch::kInt64);
  return b;
}

// Eq. 3 literally: b[t, j] = Σ_l a[t, l] · table[h, rel(section(l), section(j))].
at::Tensor direct_decoder_bias(const at::Tensor& a, const attn::TokenLayout& m, const at::Tensor& table,
                               const attn::Relation& relation) {
  const at::Tensor ids = attn::section_relation_ids(relation, m.path_len, m.lvl_diff, m.section_depth);
  const std::int64_t batch = a.size(0), length = a.size(3);
  std::vector<at::Tensor> rows;
  for (std::int64_t b = 0; b < batch; ++b) {
    at::Tensor pair_ids = torch::empty({length, length}, torch::kInt64);  // [l, j]
    for (std::int64_t l = 0; l < length; ++l)
      for (std::int64_t j = 0; j < length; ++j)
        pair_ids[l][j] = ids[b][m.section[b][l].item<std::int64_t>()][m.section[b][j].item<std::int64_t>()];
    const at::Tensor pair_bias = table.index_select(1, pair_ids.flatten()).view({-1, length, length});  // [H, l, j]
    rows.push_back(torch::matmul(a[b], pair_bias));  // [H, T, j]
  }
  return torch::stack(rows);
}

TEST(HibridsDecoderBias, EqualsTheSumOverSourceTokensWithItsGradients) {
  std::mt19937 rng(3);
  for (attn::RelationKind kind : {attn::RelationKind::Hibrids, attn::RelationKind::HibridsSelected}) {
    const Batch batch = batch_of(rng);
    const attn::Relation relation{.kind = kind, .max_path = 2, .max_level = 1};
    const at::Tensor a0 = torch::softmax(torch::randn({2, 2, 4, 9}, torch::kDouble), -1);
    const at::Tensor t0 = torch::randn({2, attn::relation_count(relation)}, torch::kDouble);
    const at::Tensor weight = torch::randn({2, 2, 4, 9}, torch::kDouble);
    at::Tensor a1 = a0.clone().requires_grad_(), t1 = t0.clone().requires_grad_();
    at::Tensor a2 = a0.clone().requires_grad_(), t2 = t0.clone().requires_grad_();
    const at::Tensor got = nn::hibrids_decoder_bias(a1, batch.layout, t1, relation);
    const at::Tensor want = direct_decoder_bias(a2, batch.layout, t2, relation);
    EXPECT_TRUE(torch::allclose(got, want, 1e-12, 1e-12)) << attn::relation_name(kind);
    (got * weight).sum().backward();
    (want * weight).sum().backward();
    EXPECT_TRUE(torch::allclose(a1.grad(), a2.grad(), 1e-12, 1e-12));
    EXPECT_TRUE(torch::allclose(t1.grad(), t2.grad(), 1e-12, 1e-12));
  }
}

// Beam search over one document: its layout (batch 1) serves every beam's row.
TEST(HibridsDecoderBias, AOneItemLayoutServesEveryRow) {
  std::mt19937 rng(8);
  const Batch batch = batch_of(rng);
  const attn::Relation relation{.kind = attn::RelationKind::Hibrids, .max_path = 2, .max_level = 1};
  const attn::TokenLayout one = attn::select_items(batch.layout, torch::tensor({1}, torch::kLong));
  const attn::TokenLayout repeated = attn::select_items(batch.layout, torch::tensor({1, 1, 1}, torch::kLong));
  const at::Tensor a = torch::softmax(torch::randn({3, 2, 4, 9}, torch::kDouble), -1);
  const at::Tensor table = torch::randn({2, attn::relation_count(relation)}, torch::kDouble);
  EXPECT_TRUE(torch::allclose(nn::hibrids_decoder_bias(a, one, table, relation),
                              nn::hibrids_decoder_bias(a, repeated, table, relation), 1e-12, 1e-12));
  const attn::TokenLayout two = attn::select_items(batch.layout, torch::tensor({0, 1}, torch::kLong));
  EXPECT_THROW(nn::hibrids_decoder_bias(a, two, table, relation), Error);  // 2 layouts for 3 rows
}

TEST(StructuredSeq2Seq, TablesAreNamedSizedAndStartAtZero) {
  Seq2Seq model(hibrids_config(attn::RelationKind::Hibrids));
  const auto params = model->named_parameters();
  for (const char* name : {"encoder.layers.0.self_attn.relation_bias", "encoder.layers.1.self_attn.relation_bias",
                           "decoder.hibrids_bias"}) {
    ASSERT_TRUE(params.contains(name)) << name;
    EXPECT_EQ(params[name].sizes(), (std::vector<std::int64_t>{2, 15})) << name;  // (2·2+1)·(2·1+1)
    EXPECT_EQ(params[name].abs().sum().item<double>(), 0.0);
  }
  EXPECT_FALSE(params.contains("decoder.layers.0.encoder_attn.relation_bias"));
  EXPECT_TRUE(model->uses_layout());
}

TEST(StructuredSeq2Seq, NeedsTheLayoutItReads) {
  Seq2Seq model(hibrids_config(attn::RelationKind::Hibrids));
  std::mt19937 rng(1);
  const Batch batch = batch_of(rng);
  EXPECT_THROW(model->encode(batch.source, batch.padding), Error);
}

TEST(StructuredSeq2Seq, BiasGradientsReachBothTablesAndKernelsAgree) {
  std::mt19937 rng(5);
  const Batch batch = batch_of(rng);
  std::map<std::string, at::Tensor> grads[2];
  at::Tensor logits[2];
  for (int k = 0; k < 2; ++k) {
    torch::manual_seed(7);
    ModelConfig c = hibrids_config(attn::RelationKind::Hibrids);
    c.attention_kernel = k == 0 ? "fused" : "reference";
    Seq2Seq model(c);
    randomize_tables(model);  // nonzero tables, so the bias changes the scores
    logits[k] = model->forward(batch.source, batch.padding, batch.target, &batch.layout);
    logits[k].pow(2).sum().backward();
    for (const auto& p : model->named_parameters())
      if (is_table(p.key())) grads[k][p.key()] = p.value().grad().clone();
  }
  EXPECT_TRUE(torch::allclose(logits[0], logits[1], 1e-4, 1e-5));
  ASSERT_EQ(grads[0].size(), 3u);
  for (const auto& [name, g] : grads[0]) {
    EXPECT_GT(g.abs().sum().item<double>(), 0.0) << name;
    EXPECT_TRUE(torch::allclose(g, grads[1][name], 1e-3, 1e-4)) << name;
  }
}

TEST(StructuredSeq2Seq, CachedStepsEqualTheFullDecoderPass) {
  std::mt19937 rng(9);
  const Batch batch = batch_of(rng);
  for (attn::RelationKind kind : {attn::RelationKind::Hibrids, attn::RelationKind::HibridsSelected}) {
    torch::manual_seed(2);
    Seq2Seq model(hibrids_config(kind));
    model->eval();
    torch::NoGradGuard no_grad;
    randomize_tables(model);
    const EncoderOutput encoded = model->encode(batch.source, batch.padding, &batch.layout);
    const at::Tensor full = model->logits(model->decode(batch.target, encoded));
    nn::KvCache cache = model->new_cache();
    for (int64_t t = 0; t < 5; ++t) {
      const at::Tensor step = model->logits(model->decode(batch.target.narrow(1, t, 1), encoded, &cache));
      EXPECT_TRUE(torch::allclose(step.squeeze(1), full.select(1, t), 1e-5, 1e-5)) << "step " << t;
    }
  }
}

TEST(StructuredSeq2Seq, ZeroTablesGiveThePlainWindowModel) {
  // HIBRIDS starts at zero: the same weights without the tables compute the same logits.
  std::mt19937 rng(11);
  const Batch batch = batch_of(rng);
  torch::manual_seed(3);
  Seq2Seq hibrids(hibrids_config(attn::RelationKind::Hibrids));
  Seq2Seq plain = base_twin(hibrids);
  const at::Tensor a = hibrids->forward(batch.source, batch.padding, batch.target, &batch.layout);
  const at::Tensor b = plain->forward(batch.source, batch.padding, batch.target, &batch.layout);
  EXPECT_TRUE(torch::allclose(a, b, 1e-5, 1e-6));
}

TEST(StructuredSeq2Seq, ADocumentWithoutHeadingsReducesHibridsToTheBase) {
  // One section: every pair has the same relation, so each row's bias is a constant that
  // softmax removes, whatever the tables hold.
  std::mt19937 rng(13);
  Batch batch = batch_of(rng);
  for (Layout& layout : batch.layouts) {
    layout.tree.parent = {-1};
    layout.tree.depth = {0};
    layout.tree.heading = {""};
    std::fill(layout.section.begin(), layout.section.end(), 0);
  }
  batch.layout = attn::batch_layouts({&batch.layouts[0], &batch.layouts[1]}, 9);
  torch::manual_seed(4);
  Seq2Seq hibrids(hibrids_config(attn::RelationKind::Hibrids));
  Seq2Seq plain = base_twin(hibrids);
  randomize_tables(hibrids);
  const at::Tensor a = hibrids->forward(batch.source, batch.padding, batch.target, &batch.layout);
  const at::Tensor b = plain->forward(batch.source, batch.padding, batch.target, &batch.layout);
  EXPECT_TRUE(torch::allclose(a, b, 1e-4, 1e-5));
}

TEST(StructuredSeq2Seq, ConfigCarriesSpecsAndRejectsWhatCannotRun) {
  const ModelConfig c = hibrids_config(attn::RelationKind::HibridsSelected);
  const ModelConfig back = ModelConfig::from_json(c.to_json(), "config.json");
  EXPECT_EQ(back.encoder_attention, c.encoder_attention);
  EXPECT_EQ(back.decoder_hibrids, c.decoder_hibrids);
  ModelConfig bad = c;
  bad.cross_attention = {c.encoder_attention[0]};  // a tree relation on summary tokens
  EXPECT_THROW(bad.check(), Error);
  bad = c;
  bad.encoder_attention = {c.encoder_attention[0], c.encoder_attention[0], c.encoder_attention[0]};
  EXPECT_THROW(bad.check(), Error);  // 3 specs for 2 layers
  bad = c;
  bad.decoder_hibrids = {.kind = attn::RelationKind::T5Buckets};
  EXPECT_THROW(bad.check(), Error);
}

}  // namespace
}  // namespace strata::models

namespace strata::models {
namespace {

ModelConfig hierenc_config() {
  ModelConfig c = hibrids_config(attn::RelationKind::Hibrids);
  c.encoder_attention[0].bias = {};
  c.decoder_hibrids = {};
  c.section_encoder_layers = 2;
  return c;
}

TEST(SectionEncoder, PoolsEachSectionsRealTokensByTheirMean) {
  // One item: tokens in sections 0, 0, 2, then a padding token (section 0); section 1 is empty.
  const at::Tensor hidden = torch::tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 100.0, 100.0}, torch::kDouble).view({1, 4, 2});
  const at::Tensor padding = torch::tensor({true, true, true, false}).view({1, 4});
  const at::Tensor section = torch::tensor({0, 0, 2, 0}, torch::kInt32).view({1, 4});
  const SectionStates s = pool_sections(hidden, padding, section, 3);
  EXPECT_TRUE(torch::equal(s.hidden, torch::tensor({2.0, 3.0, 0.0, 0.0, 5.0, 6.0}, torch::kDouble).view({1, 3, 2})));
  EXPECT_TRUE(torch::equal(s.present, torch::tensor({true, false, true}).view({1, 3})));
}

TEST(SectionEncoder, DecoderReadsTokensThenSectionsAndGradientsReachIt) {
  std::mt19937 rng(5);
  torch::manual_seed(5);
  const Batch batch = batch_of(rng);
  Seq2Seq model(hierenc_config());
  EXPECT_THROW(model->encode(batch.source, batch.padding, nullptr), Error);
  const EncoderOutput encoded = model->encode(batch.source, batch.padding, &batch.layout);
  const std::int64_t sections = batch.layout.section_depth.size(1);
  ASSERT_EQ(encoded.hidden.size(1), 9 + sections);
  // The memory mask: each item's real tokens, then the sections its tokens fall in.
  for (std::int64_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(torch::equal(encoded.padding[i].slice(0, 0, 9), batch.padding[i]));
    for (std::int64_t s = 0; s < sections; ++s) {
      const bool used = batch.layout.section[i].masked_select(batch.padding[i]).eq(s).any().item<bool>();
      EXPECT_EQ(encoded.padding[i][9 + s].item<bool>(), used) << i << " " << s;
    }
  }
  const at::Tensor hidden = model->decode(batch.target, encoded);
  hidden.pow(2).sum().backward();
  for (const auto& p : model->named_parameters())
    if (p.key().rfind("section_encoder.", 0) == 0 && p.key().find("bias") == std::string::npos)
      EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0) << p.key();
  // The section states change what the decoder reads: removing them changes its output.
  EncoderOutput tokens_only = encoded;
  tokens_only.hidden = encoded.hidden.slice(1, 0, 9);
  tokens_only.padding = encoded.padding.slice(1, 0, 9);
  EXPECT_FALSE(torch::allclose(model->decode(batch.target, tokens_only), hidden.detach()));
}

// Table 5: HIBRIDS in the section layers adds table[h, relation(section q, section k)] to
// the sections' attention scores. Checked against the same layers without the relation,
// given that bias by hand (one table row for every head, so one bias serves them all).
TEST(SectionEncoder, HibridsBiasesTheSectionsAttentionByTheirTreeRelation) {
  std::mt19937 rng(13);
  const Batch batch = batch_of(rng);
  const attn::Relation relation{.kind = attn::RelationKind::Hibrids, .max_path = 2, .max_level = 1};
  ModelConfig c = hierenc_config();
  c.section_encoder_hibrids = relation;
  EXPECT_EQ(ModelConfig::from_json(c.to_json(), "config.json").section_encoder_hibrids, relation);
  torch::manual_seed(4);
  Seq2Seq model(c);
  model->eval();
  const auto params = model->named_parameters();
  const char* table_name = "section_encoder.layers.1.self_attn.relation_bias";
  ASSERT_TRUE(params.contains(table_name));
  EXPECT_EQ(params[table_name].sizes(), (std::vector<std::int64_t>{2, 15}));
  const at::Tensor row = torch::randn({attn::relation_count(relation)});
  {
    torch::NoGradGuard no_grad;
    for (const auto& p : params)
      if (p.key().find("section_encoder.") == 0 && is_table(p.key())) p.value().copy_(row.expand({2, -1}));
  }
  ModelConfig plain_config = hierenc_config();
  Seq2Seq plain(plain_config);
  plain->eval();
  {
    torch::NoGradGuard no_grad;
    for (auto& p : plain->named_parameters()) p.value().copy_(params[p.key()]);
  }
  torch::NoGradGuard no_grad;
  const std::int64_t sections = batch.layout.section_depth.size(1);
  const at::Tensor hidden = model->encoder(batch.source, batch.padding, &batch.layout);
  const SectionStates got = model->section_encoder(hidden, batch.padding, batch.layout, sections);

  const at::Tensor ids = attn::section_relation_ids(relation, batch.layout.path_len, batch.layout.lvl_diff,
                                                    batch.layout.section_depth);
  nn::LayerConditioning bias;
  bias.attention_bias = row.index_select(0, ids.flatten().to(torch::kLong)).view({2, 1, sections, sections});
  const SectionStates pooled = pool_sections(hidden, batch.padding, batch.layout.section, sections);
  at::Tensor x = pooled.hidden;
  for (const auto& layer : *plain->section_encoder->layers)
    x = layer->as<nn::EncoderLayerImpl>()->forward(x, pooled.present, nullptr, nullptr, &bias);
  if (plain->section_encoder->layer_norm) x = plain->section_encoder->layer_norm(x);  // pre-norm only
  x = x.masked_fill(pooled.present.logical_not().unsqueeze(-1), 0);
  EXPECT_TRUE(torch::allclose(got.hidden, x, 1e-5, 1e-5));
  // And the bias matters: the plain layers give another result.
  EXPECT_FALSE(torch::allclose(plain->section_encoder(hidden, batch.padding, batch.layout, sections).hidden, x,
                               1e-3, 1e-3));
}

TEST(SectionEncoder, HibridsNeedsTheSectionLayersAndATreeRelation) {
  ModelConfig c = hierenc_config();
  c.section_encoder_hibrids = {.kind = attn::RelationKind::T5Buckets, .buckets = 8, .max_distance = 16};
  EXPECT_THROW(c.check(), Error);
  c.section_encoder_hibrids = {.kind = attn::RelationKind::Hibrids, .max_path = 2, .max_level = 1};
  c.section_encoder_layers = 0;
  EXPECT_THROW(c.check(), Error);
}

TEST(SectionEncoder, RefusesWhatReadsTheSourceAsTokensInTheDecoder) {
  ModelConfig with_copy = hierenc_config();
  with_copy.copy = true;
  EXPECT_THROW(Seq2Seq{with_copy}, Error);
  ModelConfig multitask_with_copy = hierenc_config();
  multitask_with_copy.section_encoder_layers = 0;
  multitask_with_copy.section_relation_head = true;
  multitask_with_copy.copy = true;
  EXPECT_THROW(Seq2Seq{multitask_with_copy}, Error);
  ModelConfig with_decoder_hibrids = hierenc_config();
  with_decoder_hibrids.decoder_hibrids = {.kind = attn::RelationKind::Hibrids, .max_path = 2, .max_level = 1};
  EXPECT_THROW(Seq2Seq{with_decoder_hibrids}, Error);
}

}  // namespace
}  // namespace strata::models

namespace strata::models {
namespace {

// The relation loss by hand: every ordered pair of present sections, the classifier's
// cross-entropy against the HIBRIDS_S relation of the tree.
TEST(SectionRelationHead, LossIsTheMeanCrossEntropyOverPresentSectionPairs) {
  std::mt19937 rng(11);
  torch::manual_seed(11);
  const Batch batch = batch_of(rng);
  ModelConfig c = hierenc_config();
  c.section_encoder_layers = 0;
  c.section_relation_head = true;
  Seq2Seq model(c);
  model->eval();
  const EncoderOutput encoded = model->encode(batch.source, batch.padding, &batch.layout);
  const at::Tensor loss = model->section_relation_loss(encoded, batch.layout);
  const attn::Relation selected{.kind = attn::RelationKind::HibridsSelected};
  const at::Tensor ids = attn::section_relation_ids(selected, batch.layout.path_len, batch.layout.lvl_diff,
                                                    batch.layout.section_depth);
  const std::int64_t sections = batch.layout.section_depth.size(1);
  double total = 0;
  int count = 0;
  for (std::int64_t b = 0; b < 2; ++b) {
    const SectionStates pooled = pool_sections(encoded.hidden.slice(0, b, b + 1), batch.padding.slice(0, b, b + 1),
                                               batch.layout.section.slice(0, b, b + 1), sections);
    for (std::int64_t i = 0; i < sections; ++i)
      for (std::int64_t j = 0; j < sections; ++j) {
        if (!pooled.present[0][i].item<bool>() || !pooled.present[0][j].item<bool>()) continue;
        const at::Tensor scores =
            model->relation_classifier(pooled.hidden[0][i].unsqueeze(0), pooled.hidden[0][j].unsqueeze(0))[0];
        total -= torch::log_softmax(scores, 0)[ids[b][i][j].item<std::int64_t>()].item<double>();
        ++count;
      }
  }
  ASSERT_GT(count, 4);
  EXPECT_NEAR(loss.item<double>(), total / count, 1e-5);
  loss.backward();
  EXPECT_GT(model->relation_classifier->weight.grad().abs().sum().item<double>(), 0);
  EXPECT_GT(model->encoder->named_parameters()[0].value().grad().abs().sum().item<double>(), 0);
}

}  // namespace
}  // namespace strata::models
