#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>
#include <tuple>

#include "strata/attn/spec.h"
#include "strata/core/error.h"
#include "strata/data/lm_examples.h"
#include "strata/models/bst_lm.h"
#include "strata/models/collate.h"
#include "strata/models/causal_lm.h"
#include "strata/models/encoder_model.h"
#include "strata/models/seq2seq.h"

namespace strata::models {
namespace {

ModelConfig tiny(const std::string& architecture, bool pre_norm = false) {
  ModelConfig c;
  c.architecture = architecture;
  c.vocab_size = 40;
  c.d_model = 16;
  c.heads = 2;
  c.d_ff = 32;
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.max_positions = 64;
  c.dropout = 0.0;
  c.pre_norm = pre_norm;
  return c;
}

std::set<std::string> names(const torch::nn::Module& m) {
  std::set<std::string> out;
  for (const auto& p : m.named_parameters()) out.insert(p.key());
  return out;
}

TEST(CollateLm, PromptTokensAreReadButNotLabelled) {
  // Block 0: prompt 5 6 7, completion 8 9; block 1: no prompt.
  const std::vector<std::vector<std::int32_t>> blocks = {
      {as_prompt_token(5), as_prompt_token(6), as_prompt_token(7), 8, 9}, {3, 4, 2}};
  const std::vector<std::size_t> rows = {0, 1};
  const LmBatch batch = collate_lm(blocks, rows, /*pad_id=*/0);
  const auto inputs = batch.inputs.accessor<std::int64_t, 2>();
  const auto labels = batch.labels.accessor<std::int64_t, 2>();
  const std::vector<std::int64_t> inputs0 = {5, 6, 7, 8}, labels0 = {kIgnoreLabel, kIgnoreLabel, 8, 9};
  const std::vector<std::int64_t> inputs1 = {3, 4, 0, 0}, labels1 = {4, 2, kIgnoreLabel, kIgnoreLabel};
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(inputs[0][t], inputs0[t]) << t;
    EXPECT_EQ(labels[0][t], labels0[t]) << t;
    EXPECT_EQ(inputs[1][t], inputs1[t]) << t;
    EXPECT_EQ(labels[1][t], labels1[t]) << t;
  }
  EXPECT_EQ(batch.tokens, 4);  // 8, 9 and 4, 2: the loss's denominator
}

TEST(Seq2Seq, ParametersCarryBartNames) {
  Seq2Seq model(tiny("seq2seq"));
  const auto n = names(*model);
  for (const char* expected :
       {"shared.weight", "encoder.embed_positions.weight", "encoder.layernorm_embedding.weight",
        "encoder.layers.0.self_attn.q_proj.weight", "encoder.layers.1.final_layer_norm.bias",
        "decoder.layers.0.encoder_attn.k_proj.weight", "decoder.layers.1.encoder_attn_layer_norm.weight",
        "decoder.layers.1.fc2.weight"})
    EXPECT_TRUE(n.count(expected)) << expected;
  EXPECT_FALSE(n.count("lm_head.weight"));  // tied
  EXPECT_FALSE(n.count("encoder.embed_tokens.weight"));  // shared, named once
}

TEST(Seq2Seq, UntiedAndPreNormVariantsHaveTheirOwnPieces) {
  ModelConfig c = tiny("seq2seq", /*pre_norm=*/true);
  c.tie_embeddings = false;
  Seq2Seq model(c);
  const auto n = names(*model);
  EXPECT_TRUE(n.count("lm_head.weight"));
  EXPECT_TRUE(n.count("encoder.layer_norm.weight"));
  EXPECT_FALSE(n.count("encoder.layernorm_embedding.weight"));
}

TEST(Seq2Seq, PaddingDoesNotChangeTheRealTokensResults) {
  torch::manual_seed(1);
  Seq2Seq model(tiny("seq2seq"));
  model->eval();
  const at::Tensor source = torch::tensor({5, 6, 7, 1}, torch::kInt64).view({1, 4});
  const at::Tensor padded = torch::tensor({5, 6, 7, 1, 2, 2}, torch::kInt64).view({1, 6});
  const at::Tensor mask = torch::tensor({1, 1, 1, 1, 0, 0}, torch::kBool).view({1, 6});
  const at::Tensor target = torch::tensor({0, 9, 10}, torch::kInt64).view({1, 3});
  const at::Tensor plain = model->forward(source, at::Tensor(), target);
  const at::Tensor with_padding = model->forward(padded, mask, target);
  EXPECT_TRUE(torch::allclose(plain, with_padding, 1e-5, 1e-5));
}

// A top-p cross-attention (TruncSA on the decoder's side) keeps the keys its queries vote for:
// a target padded into a batch gets what it gets alone once the decoder's padding is passed,
// since the padded positions do not vote.
TEST(Seq2Seq, PaddedTargetPositionsDoNotVoteInTopPCrossAttention) {
  torch::manual_seed(3);
  ModelConfig c = tiny("seq2seq");
  attn::LayerSpec top_p;
  top_p.heads[0].normaliser = {.kind = attn::NormaliserKind::TopP, .p = 0.5};
  c.cross_attention = {top_p};
  Seq2Seq model(c);
  model->eval();
  {  // distinct key impacts: the initialisation gives nearly uniform attention and near ties
    torch::NoGradGuard no_grad;
    for (auto& layer : *model->decoder->layers) {
      layer->as<nn::DecoderLayer>()->encoder_attn->q_proj->weight.normal_(0, 0.5);
      layer->as<nn::DecoderLayer>()->encoder_attn->k_proj->weight.normal_(0, 0.5);
    }
  }
  torch::NoGradGuard no_grad;
  const at::Tensor source = torch::randint(3, 40, {2, 7}, torch::kInt64);
  const at::Tensor targets = torch::randint(3, 40, {2, 6}, torch::kInt64);  // row 1: 2 real, 4 padded
  const at::Tensor padding = torch::tensor({1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, torch::kBool).view({2, 6});
  const at::Tensor alone = model->forward(source.narrow(0, 1, 1), at::Tensor(), targets.narrow(0, 1, 1).narrow(1, 0, 2));
  const at::Tensor batched = model->forward(source, at::Tensor(), targets, nullptr, padding);
  EXPECT_TRUE(torch::allclose(batched[1].narrow(0, 0, 2), alone[0], 1e-5, 1e-5));
  const at::Tensor voting = model->forward(source, at::Tensor(), targets);  // every position votes
  EXPECT_FALSE(torch::allclose(voting[1].narrow(0, 0, 2), alone[0], 1e-5, 1e-5));
}

TEST(Seq2Seq, CachedStepsEqualTheFullDecoderPass) {
  for (bool pre_norm : {false, true}) {
    torch::manual_seed(2);
    Seq2Seq model(tiny("seq2seq", pre_norm));
    model->eval();
    torch::NoGradGuard no_grad;
    const at::Tensor source = torch::randint(3, 40, {2, 7}, torch::kInt64);
    const at::Tensor target = torch::randint(3, 40, {2, 5}, torch::kInt64);
    const EncoderOutput encoded = model->encode(source, at::Tensor());
    const at::Tensor full = model->logits(model->decode(target, encoded));
    nn::KvCache cache = model->new_cache();
    for (int64_t t = 0; t < 5; ++t) {
      const at::Tensor step = model->logits(model->decode(target.narrow(1, t, 1), encoded, &cache));
      EXPECT_TRUE(torch::allclose(step.squeeze(1), full.select(1, t), 1e-5, 1e-5)) << "step " << t;
    }
    EXPECT_EQ(cache.length, 5);
  }
}

TEST(Seq2Seq, CacheReorderFollowsTheChosenRows) {
  torch::manual_seed(3);
  Seq2Seq model(tiny("seq2seq"));
  model->eval();
  torch::NoGradGuard no_grad;
  const at::Tensor source = torch::randint(3, 40, {2, 6}, torch::kInt64);
  const EncoderOutput encoded = model->encode(source, at::Tensor());
  nn::KvCache cache = model->new_cache();
  model->decode(torch::tensor({0, 0}, torch::kInt64).view({2, 1}), encoded, &cache);
  // Keep row 1 twice: both rows must now behave as row 1 of the swapped-in source.
  cache.reorder(torch::tensor({1, 1}, torch::kInt64));
  const EncoderOutput twice{encoded.hidden.index_select(0, torch::tensor({1, 1})), at::Tensor()};
  const at::Tensor next = model->decode(torch::tensor({7, 7}, torch::kInt64).view({2, 1}), twice, &cache);
  const at::Tensor full = model->decode(torch::tensor({0, 7}, torch::kInt64).view({1, 2}),
                                        {encoded.hidden.narrow(0, 1, 1), at::Tensor()});
  EXPECT_TRUE(torch::allclose(next[0][0], full[0][1], 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(next[1][0], full[0][1], 1e-5, 1e-5));
}

TEST(Seq2Seq, LearnsToCopyItsInput) {
  torch::manual_seed(4);
  ModelConfig c = tiny("seq2seq");
  c.d_model = 32;
  c.d_ff = 64;
  Seq2Seq model(c);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(3e-3));
  const at::Tensor source = torch::randint(3, 40, {16, 6}, torch::kInt64);
  const at::Tensor inputs = torch::cat({torch::zeros({16, 1}, torch::kInt64), source.narrow(1, 0, 5)}, 1);
  double first = 0, last = 0;
  for (int step = 0; step < 150; ++step) {
    optimizer.zero_grad();
    const at::Tensor logits = model->forward(source, at::Tensor(), inputs);
    const at::Tensor loss = torch::cross_entropy_loss(logits.reshape({-1, 40}), source.reshape({-1}));
    loss.backward();
    optimizer.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_GT(first, 3.0);  // ~ln(40) at the start
  EXPECT_LT(last, 0.3);
}

// model.copy: the scores are log-probabilities of g · softmax(logits) + (1 - g) · copy, where
// copy gives each source id the copy attention's weight on its positions (padding none), and
// the copy attention favours, by copy_follow, the positions after the decoder input's token,
// and each position by copy_position's value for its log2 bucket.
TEST(Seq2Seq, ThePointerGeneratorMixesTheVocabularyWithCopiesOfTheSource) {
  torch::manual_seed(6);
  ModelConfig c = tiny("seq2seq", /*pre_norm=*/true);
  c.copy = true;
  Seq2Seq model(c);
  model->eval();
  torch::NoGradGuard no_grad;
  model->copy_follow.fill_(2.5);
  model->copy_position.copy_(torch::arange(Seq2SeqImpl::kCopyPositionBuckets, torch::kFloat).mul(-0.7));
  const at::Tensor source = torch::tensor({{5, 9, 5, 12, 1}, {7, 8, 1, 0, 0}}, torch::kInt64);
  const at::Tensor padding = torch::tensor({{1, 1, 1, 1, 1}, {1, 1, 1, 0, 0}}, torch::kBool);
  const at::Tensor inputs = torch::tensor({{5, 9, 3, 12}, {7, 8, 4, 4}}, torch::kInt64);
  const EncoderOutput encoded = model->encode(source, padding);
  const at::Tensor hidden = model->decode(inputs, encoded);
  const at::Tensor scores = model->next_token_scores(hidden, encoded, inputs);
  ASSERT_EQ(scores.sizes(), (std::vector<std::int64_t>{2, 4, 40}));
  EXPECT_TRUE(torch::allclose(scores.exp().sum(-1), torch::ones({2, 4}), 1e-5, 1e-5));

  // The copy attention by hand: softmax over the real source positions of q · k / √d, plus
  // copy_follow where the position before holds the input token (input 5 → positions 1 and 3),
  // and -0.7 × bucket: positions 0 | 1, 2 | 3, 4 are buckets 0, 1, 2.
  const float position_bias[5] = {0.0f, -0.7f, -0.7f, -1.4f, -1.4f};
  at::Tensor bias = torch::zeros({2, 4, 5});
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 4; ++t)
      for (int j = 0; j < 5; ++j) {
        bias[b][t][j] = position_bias[j];
        if (j > 0 && source[b][j - 1].item<std::int64_t>() == inputs[b][t].item<std::int64_t>())
          bias[b][t][j] += 2.5;
      }
  const at::Tensor q = model->copy_query(hidden), k = model->copy_key(encoded.hidden);
  const at::Tensor weights = torch::softmax(
      (torch::matmul(q, k.transpose(1, 2)).div(std::sqrt(16.0)) + bias).masked_fill(padding.logical_not().unsqueeze(1), -1e9), -1);
  const at::Tensor context = torch::matmul(weights, k);
  const at::Tensor gate = torch::sigmoid(model->copy_gate(torch::cat({hidden, context}, -1)));
  at::Tensor copy = torch::zeros({2, 4, 40});
  for (int b = 0; b < 2; ++b)
    for (int j = 0; j < 5; ++j)
      if (padding[b][j].item<bool>()) copy[b].select(1, source[b][j].item<std::int64_t>()) += weights[b].select(1, j);
  const at::Tensor expected = gate * torch::softmax(model->logits(hidden), -1) + (1 - gate) * copy;
  EXPECT_TRUE(torch::allclose(scores.exp(), expected, 1e-5, 1e-6));
  EXPECT_FALSE(torch::allclose(model->next_token_scores(hidden, encoded), scores, 1e-3, 1e-3)) << "no inputs, no bias";

  // Training reads the labels' probabilities alone: the same numbers, 0 where ignored.
  const at::Tensor labels = torch::tensor({{5, 12, 3, -100}, {8, 7, -100, -100}}, torch::kInt64);
  const at::Tensor at_labels = scores.gather(2, labels.clamp_min(0).unsqueeze(2)).squeeze(2).masked_fill(labels.lt(0), 0);
  EXPECT_TRUE(torch::allclose(model->label_log_probs(hidden, encoded, labels, inputs), at_labels, 1e-5, 1e-6));
  // Decoding steps read the same, one position at a time (the stepper's [B, d] and [B, 1] form).
  EXPECT_TRUE(torch::allclose(model->next_token_scores(hidden.select(1, 2), encoded, inputs.narrow(1, 2, 1)),
                              scores.select(1, 2), 1e-5, 1e-6));
  // Without model.copy, the scores are the logits.
  Seq2Seq plain(tiny("seq2seq", true));
  plain->eval();
  const EncoderOutput plain_encoded = plain->encode(source, padding);
  const at::Tensor plain_hidden = plain->decode(inputs, plain_encoded);
  EXPECT_TRUE(torch::equal(plain->next_token_scores(plain_hidden, plain_encoded, inputs), plain->logits(plain_hidden)));
}

TEST(CausalLm, CachedStepsEqualTheFullPassAndThereIsNoCrossAttention) {
  torch::manual_seed(5);
  CausalLm model(tiny("causal_lm", /*pre_norm=*/true));
  model->eval();
  EXPECT_FALSE(names(*model).count("decoder.layers.0.encoder_attn.q_proj.weight"));
  torch::NoGradGuard no_grad;
  const at::Tensor ids = torch::randint(3, 40, {3, 6}, torch::kInt64);
  const at::Tensor full = model->forward(ids);
  nn::KvCache cache = model->new_cache();
  const at::Tensor first = model->forward(ids.narrow(1, 0, 4), &cache);  // a prompt, then steps
  EXPECT_TRUE(torch::allclose(first, full.narrow(1, 0, 4), 1e-5, 1e-5));
  for (int64_t t = 4; t < 6; ++t)
    EXPECT_TRUE(torch::allclose(model->forward(ids.narrow(1, t, 1), &cache).squeeze(1), full.select(1, t), 1e-5, 1e-5));
}

TEST(CausalLm, AFutureTokenDoesNotChangeEarlierLogits) {
  torch::manual_seed(6);
  CausalLm model(tiny("causal_lm"));
  model->eval();
  at::Tensor ids = torch::randint(3, 40, {1, 5}, torch::kInt64);
  const at::Tensor before = model->forward(ids);
  ids[0][4] = (ids[0][4].item<int64_t>() + 1) % 40;
  EXPECT_TRUE(torch::allclose(model->forward(ids).narrow(1, 0, 4), before.narrow(1, 0, 4), 1e-6, 1e-6));
}

// The TLM's parts as segments: markers 4 [INTRO], 5 [EXTRACT], 6 [SUMMARY], 7 [REST]; the
// intro and extract read a window of one token back, the summary everything before it.
ModelConfig tiny_segmented() {
  ModelConfig c = tiny("causal_lm", /*pre_norm=*/true);
  c.segment_markers = "4,5,6,7";
  attn::LayerSpec spec;
  spec.heads[0].mask = attn::parse_mask("causal & (window(1,0) | query_segment(2))");
  c.decoder_attention = {spec};
  return c;
}

TEST(CausalLm, SegmentMasksReadThePartsTheMarkersOpen) {
  torch::manual_seed(8);
  CausalLm model(tiny_segmented());
  model->eval();
  torch::NoGradGuard no_grad;
  //                                      intro:  0   1   2   3   4  extract: 5  6  summary: 7  8  9
  const at::Tensor ids = torch::tensor({4, 10, 11, 12, 13, 5, 14, 6, 15, 16}, torch::kInt64).view({1, -1});
  at::Tensor changed = ids.clone();
  changed[0][1] = 20;
  const at::Tensor before = model->forward(ids), after = model->forward(changed);
  // Two layers of a one-back window: position 4 reads tokens 2-4 only; the summary reads all.
  EXPECT_TRUE(torch::allclose(before.select(1, 4), after.select(1, 4), 1e-6, 1e-6));
  EXPECT_FALSE(torch::allclose(before.select(1, 8), after.select(1, 8), 1e-4, 1e-4));
  ModelConfig dense_config = tiny_segmented();
  dense_config.decoder_attention.clear();
  CausalLm dense(dense_config);
  dense->eval();
  EXPECT_FALSE(torch::allclose(dense->forward(ids).select(1, 4), dense->forward(changed).select(1, 4), 1e-4, 1e-4));

  // Cached decoding from the summary marker on reads the same parts as the full pass.
  nn::KvCache cache = model->new_cache();
  EXPECT_TRUE(torch::allclose(model->forward(ids.narrow(1, 0, 8), &cache), before.narrow(1, 0, 8), 1e-5, 1e-5));
  for (std::int64_t t = 8; t < 10; ++t)
    EXPECT_TRUE(torch::allclose(model->forward(ids.narrow(1, t, 1), &cache).squeeze(1), before.select(1, t), 1e-5, 1e-5));

  // A window without markers continues the last part (the rest): it reads locally too.
  const at::Tensor rest = torch::tensor({10, 11, 12, 13, 14}, torch::kInt64).view({1, -1});
  at::Tensor rest_changed = rest.clone();
  rest_changed[0][0] = 20;
  EXPECT_TRUE(torch::allclose(model->forward(rest).select(1, 4), model->forward(rest_changed).select(1, 4), 1e-6, 1e-6));
}

TEST(CausalLm, ALayoutMaskWithoutSegmentMarkersIsNamed) {
  ModelConfig c = tiny_segmented();
  c.segment_markers = "";
  try {
    CausalLm model(c);
    FAIL() << "built a causal_lm whose mask reads segments it cannot know";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.segment_markers"), std::string::npos) << e.what();
  }
  c.segment_markers = "4,x";
  try {
    c.check();
    FAIL() << "accepted a malformed marker list";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.segment_markers: '4,x'"), std::string::npos) << e.what();
  }
}

ModelConfig tiny_bst(const std::string& layers, const std::string& context, const std::string& kernel) {
  ModelConfig c = tiny("bst_lm", /*pre_norm=*/true);
  c.heads = 4;
  c.bst_layers = layers;
  c.bst_context = context;
  c.bst_kernel = kernel;
  c.bst_window = 4;
  c.bst_states = 8;
  c.bst_filters = 3;
  c.bst_filter_length = 16;
  return c;
}

TEST(BstLm, NoLogProbabilityReadsTheFuture) {
  // Changing every token after position k leaves the log-probabilities up to k as they were:
  // SLIDE alone, and a BST layer of every kind first and last.
  for (const auto& [layers, context, kernel] :
       std::vector<std::tuple<std::string, std::string, std::string>>{{"", "sh", "s4d"},
                                                                      {"0", "sh", "s4d"},
                                                                      {"1", "mh", "s4d"},
                                                                      {"0,1", "mf", "s4d"},
                                                                      {"0", "sh", "unstructured"},
                                                                      {"1", "mh", "unstructured"},
                                                                      {"0", "mf", "unstructured"},
                                                                      {"1", "recurrent", "s4d"}}) {
    torch::manual_seed(11);
    BstLm model(tiny_bst(layers, context, kernel));
    model->eval();
    const std::string name = "layers '" + layers + "' " + context + " " + kernel;
    at::Tensor ids = torch::randint(3, 40, {2, 19}, torch::kInt64);
    const at::Tensor before = torch::log_softmax(model->forward(ids), -1);
    ids.narrow(1, 10, 9).random_(3, 40);
    const at::Tensor after = torch::log_softmax(model->forward(ids), -1);
    EXPECT_TRUE(torch::allclose(after.narrow(1, 0, 10), before.narrow(1, 0, 10), 1e-5, 1e-5)) << name;
    EXPECT_FALSE(torch::allclose(after.narrow(1, 10, 9), before.narrow(1, 10, 9), 1e-3, 1e-3)) << name;
  }
  // The Transformer-XL baseline (SLIDE with the previous block as a cache), in training mode
  // with gradients on, where it takes its own path.
  ModelConfig xl_config = tiny_bst("", "sh", "s4d");
  xl_config.bst_memory = "xl";
  BstLm xl(xl_config);
  xl->train();  // tiny() has no dropout
  at::Tensor ids = torch::randint(3, 40, {2, 19}, torch::kInt64);
  const at::Tensor before = xl->forward(ids);
  ids.narrow(1, 10, 9).random_(3, 40);
  const at::Tensor after = xl->forward(ids);
  EXPECT_TRUE(torch::allclose(after.narrow(1, 0, 10), before.narrow(1, 0, 10), 1e-5, 1e-5)) << "xl";
  xl_config.bst_memory = "lstm";
  EXPECT_THROW(BstLm{xl_config}, Error);
}

TEST(BstLm, RunsFarPastItsTrainingLengthAndNamesBadSettings) {
  torch::manual_seed(12);
  BstLm model(tiny_bst("0", "sh", "unstructured"));
  model->eval();
  const at::Tensor logits = model->forward(torch::randint(3, 40, {1, 16 * 16}, torch::kInt64));
  EXPECT_TRUE(logits.isfinite().all().item<bool>());
  EXPECT_EQ(bst_layer_indices(tiny_bst("0,1", "sh", "s4d")), (std::vector<std::int64_t>{0, 1}));
  try {
    BstLm bad(tiny_bst("2", "sh", "s4d"));
    FAIL() << "a BST layer outside the stack was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.bst_layers: layer 2 is outside"), std::string::npos) << e.what();
  }
  EXPECT_THROW(BstLm{tiny_bst("0", "xx", "s4d")}, Error);
  EXPECT_THROW(BstLm{tiny_bst("0", "sh", "s5")}, Error);
  nn::KvCache wrong(1);  // a cache made for another stack
  EXPECT_THROW(model->logits(torch::ones({1, 2}, torch::kInt64), &wrong), Error);
}

TEST(BstLm, CachedDecodingEqualsTheFullPass) {
  // Fed in pieces through the cache (a prompt, single tokens, pieces that start mid-block and
  // cross block boundaries), every position's logits are the full pass's: the SLIDE keys kept
  // from the previous block, the SSM carried by its recurrence (S4D) or re-convolved
  // (unstructured), MF's context read at the right block end. Then beam search's reordering
  // of the cache keeps each row's own state.
  const std::vector<std::int64_t> pieces{5, 1, 1, 3, 1, 4, 1, 2, 1, 6};  // 25 tokens, blocks of 4
  for (const auto& [layers, context, kernel] :
       std::vector<std::tuple<std::string, std::string, std::string>>{{"", "sh", "s4d"},
                                                                      {"0", "sh", "s4d"},
                                                                      {"0,1", "mh", "s4d"},
                                                                      {"0,1", "mf", "s4d"},
                                                                      {"1", "sh", "unstructured"},
                                                                      {"0", "mf", "unstructured"}}) {
    torch::manual_seed(13);
    BstLm model(tiny_bst(layers, context, kernel));
    model->eval();
    torch::NoGradGuard no_grad;
    const std::string name = "layers '" + layers + "' " + context + " " + kernel;
    const at::Tensor ids = torch::randint(3, 40, {2, 25}, torch::kInt64);
    const at::Tensor full = model->forward(ids);
    nn::KvCache cache = model->new_cache();
    std::vector<at::Tensor> steps;
    std::int64_t at = 0;
    for (std::int64_t n : pieces) {
      steps.push_back(model->logits(ids.narrow(1, at, n), &cache));
      at += n;
    }
    EXPECT_EQ(cache.length, 25) << name;
    EXPECT_TRUE(torch::allclose(torch::cat(steps, 1), full, 1e-4, 1e-4))
        << name << ": max difference " << (torch::cat(steps, 1) - full).abs().max().item<double>();
    // Swap the rows; the next token continues each row's own sequence.
    const at::Tensor swapped = ids.flip(0), next = torch::randint(3, 40, {2, 1}, torch::kInt64);
    cache.reorder(torch::tensor({1, 0}, torch::kInt64));
    const at::Tensor stepped = model->logits(next, &cache).select(1, 0);
    const at::Tensor whole = model->forward(torch::cat({swapped, next}, 1)).select(1, 25);
    EXPECT_TRUE(torch::allclose(stepped, whole, 1e-4, 1e-4)) << name << " after reorder";
  }
}

TEST(EncoderModel, HeadsGiveOneVectorPerTokenMarkerOrSequence) {
  torch::manual_seed(7);
  ModelConfig c = tiny("encoder");
  c.num_labels = 3;
  c.marker_id = 4;
  const at::Tensor ids = torch::tensor({9, 8, 4, 7, 4, 2, 9, 4, 2, 2, 2, 2}, torch::kInt64).view({2, 6});
  const at::Tensor padding = ids != 2;
  c.head = EncoderHead::Token;
  EXPECT_EQ(EncoderModel(c)->forward(ids, padding).logits.sizes(), (std::vector<int64_t>{2, 6, 3}));
  c.head = EncoderHead::Sequence;
  EXPECT_EQ(EncoderModel(c)->forward(ids, padding).logits.sizes(), (std::vector<int64_t>{2, 3}));
  c.head = EncoderHead::Marker;
  const Classification markers = EncoderModel(c)->forward(ids, padding);
  EXPECT_EQ(markers.logits.sizes(), (std::vector<int64_t>{3, 3}));
  EXPECT_TRUE(markers.positions.equal(torch::tensor({0, 2, 0, 4, 1, 1}, torch::kInt64).view({3, 2})));
}

TEST(ModelConfig, JsonRoundTripAndErrorsNameTheField) {
  ModelConfig c = tiny("causal_lm");
  c.attention_dropout = 0.25;
  const ModelConfig back = ModelConfig::from_json(c.to_json(), "config.json");
  EXPECT_EQ(back.to_json(), c.to_json());
  nlohmann::json bad = c.to_json();
  bad["heads"] = 3;
  try {
    ModelConfig::from_json(bad, "run/config.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.heads"), std::string::npos) << e.what();
  }
  bad = c.to_json();
  bad.erase("d_ff");
  EXPECT_THROW(ModelConfig::from_json(bad, "x"), Error);
}

TEST(ModelConfig, BuildingAnotherArchitectureIsAnError) {
  EXPECT_THROW(Seq2Seq{tiny("causal_lm")}, Error);
  EXPECT_THROW(CausalLm{tiny("encoder")}, Error);
}

}  // namespace
}  // namespace strata::models
