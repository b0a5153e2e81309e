// Prefix-tuning on the seq2seq model (seed 000): TruncSA and SoftSA over prefix + input keys
// against direct implementations, prefix files on their base and on others, and the design
// keys' errors.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

#include <filesystem>

#include "strata/attn/counter_random.h"
#include "strata/core/config.h"
#include "strata/models/prefix_settings.h"
#include "strata/models/adapter_file.h"
#include "strata/models/seq2seq.h"
#include "support/expect.h"

namespace strata::models {
namespace {

using test_support::error_of;

ModelConfig small_prefixed(std::int64_t prefixes = 5) {
  ModelConfig c;
  c.vocab_size = 40;
  c.d_model = 16;
  c.heads = 2;
  c.d_ff = 16;
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.max_positions = 32;
  c.dropout = 0.0;
  c.prefix_length = prefixes;
  c.prefix_hidden = 8;
  return c;
}

// 4 prefixes in 2 groups, blocked in the encoder: each source segment sees its own group.
ModelConfig blocked_prefixed() {
  ModelConfig c = small_prefixed(4);
  c.prefix_encoder_blocks = 2;
  attn::LayerSpec blocked;
  blocked.heads[0].mask = attn::Mask::of(attn::MaskKind::PrefixBlock);
  c.encoder_attention = {blocked};
  return c;
}

ModelConfig with_normaliser(ModelConfig c, attn::Normaliser normaliser) {
  attn::LayerSpec spec;
  spec.heads[0].normaliser = normaliser;
  c.encoder_attention = {spec};
  return c;
}

// Encoder layer 0's self-attention over [prefix; x] written with tensor ops, from the
// module's own projections: scores, softmax(s / tau) with `noise` added first, then for
// TruncSA the key-impact mask of Eq. 2 multiplied in. x: [1, L, d].
at::Tensor direct_attention(nn::MultiHeadAttention& mha, const nn::PrefixKv& prefix, const at::Tensor& x,
                            const attn::Normaliser& normaliser, const at::Tensor& noise) {
  const std::int64_t L = x.size(1), H = 2, Dh = 8;
  auto heads = [&](const at::Tensor& t) { return t.view({1, L, H, Dh}).transpose(1, 2); };
  const at::Tensor q = heads(mha->q_proj(x));
  const at::Tensor k = torch::cat({prefix.k, heads(mha->k_proj(x))}, 2);
  const at::Tensor v = torch::cat({prefix.v, heads(mha->v_proj(x))}, 2);
  at::Tensor s = torch::matmul(q, k.transpose(-1, -2)) / std::sqrt(static_cast<double>(Dh));  // [1, H, L, P + L]
  if (noise.defined()) s = s + noise;
  at::Tensor a = torch::softmax(s / normaliser.tau, -1);
  if (normaliser.kind == attn::NormaliserKind::TopP) {
    const at::Tensor impact = a.sum(2, /*keepdim=*/true) / a.sum({2, 3}, /*keepdim=*/true);  // [1, H, 1, N]
    const auto [sorted, order] = impact.sort(/*stable=*/true, /*dim=*/-1, /*descending=*/true);
    // Keep the fewest largest keys whose mass reaches p: a key is kept while the mass before it is below p.
    const at::Tensor before = sorted.cumsum(-1) - sorted;
    const at::Tensor keep = torch::zeros_like(impact).scatter(-1, order, (before < normaliser.p).to(impact.dtype()));
    a = a * keep;
  }
  const at::Tensor o = torch::matmul(a, v).transpose(1, 2).reshape({1, L, H * Dh});
  return mha->out_proj(o);
}

void check_layer_zero(const attn::Normaliser& normaliser, bool training, const char* kernel = "fused") {
  torch::manual_seed(11);
  ModelConfig config = with_normaliser(small_prefixed(), normaliser);
  config.attention_kernel = kernel;
  Seq2Seq model(config);
  model->train(training);
  const nn::PrefixStates states = model->prefix_states();
  auto mha = model->encoder->layers[0]->as<nn::EncoderLayer>()->self_attn;
  {  // distinct key impacts: BART's initialisation gives nearly uniform attention and near ties
    torch::NoGradGuard no_grad;
    mha->q_proj->weight.normal_(0, 0.5);
    mha->k_proj->weight.normal_(0, 0.5);
  }
  const at::Tensor x = torch::randn({1, 7, 16});
  at::Tensor noise;
  if (training) {  // the module draws its counter seed from the default generator: draw it the same way
    torch::manual_seed(5);
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    const std::uint64_t seed = generator.get<at::CPUGeneratorImpl>()->random64();
    noise = torch::empty({1, 2, 7, 12});
    for (std::int64_t h = 0; h < 2; ++h)
      for (std::int64_t i = 0; i < 7; ++i)
        for (std::int64_t n = 0; n < 12; ++n) noise[0][h][i][n] = attn::counter_gumbel(seed, 0, h, i, n);
    torch::manual_seed(5);
  }
  const at::Tensor got = mha->self_attention(x, at::Tensor(), /*causal=*/false, nullptr, {.prefix = &*states.encoder[0]});
  const at::Tensor want = direct_attention(mha, *states.encoder[0], x, normaliser, noise);
  EXPECT_TRUE(torch::allclose(got, want, 1e-4, 1e-5)) << kernel << ": " << (got - want).abs().max().item<double>();
}

TEST(PrefixTuning, TruncSaOverPrefixAndInputKeysMatchesADirectImplementation) {
  for (const double p : {0.5, 0.8, 0.95, 1.0}) {
    SCOPED_TRACE(p);
    for (const char* kernel : {"fused", "reference"}) check_layer_zero({attn::NormaliserKind::TopP, 1.0, p}, false, kernel);
  }
}

TEST(PrefixTuning, SoftSaMatchesADirectImplementation) {
  for (const double tau : {1.0, 0.1}) {
    SCOPED_TRACE(tau);
    for (const char* kernel : {"fused", "reference"}) {
      check_layer_zero({attn::NormaliserKind::Gumbel, tau, 1.0}, /*training=*/true, kernel);   // Gumbel noise, Eq. 3
      check_layer_zero({attn::NormaliserKind::Gumbel, tau, 1.0}, /*training=*/false, kernel);  // softmax(s / tau)
    }
  }
}

// The MLP maps P embeddings to 2 * layers * d per family (Li & Liang's reparameterisation).
TEST(PrefixTuning, ReparameterisationHasTheSizesOfLiAndLiang) {
  ModelConfig c = small_prefixed(5);
  c.prefix_layers = "1";
  Seq2Seq model(c);
  std::int64_t count = 0;
  for (const auto& p : model->prefix->named_parameters()) count += p.value().numel();
  const std::int64_t family = 5 * 16 + (16 * 8 + 8) + (8 * 2 * 1 * 16 + 2 * 16);  // embedding, fc1, fc2
  EXPECT_EQ(count, 3 * family);
  const nn::PrefixStates states = model->prefix_states();
  EXPECT_FALSE(states.encoder[0].has_value());
  ASSERT_TRUE(states.cross[1].has_value());
  EXPECT_EQ(states.cross[1]->k.sizes(), (std::vector<std::int64_t>{1, 2, 5, 8}));
}

// An adapter file holds what the prefix MLP produced: on its base it gives the tuned model's
// outputs; on another base of the same size, or one of another size, it is refused.
TEST(PrefixTuning, PrefixAdapterFilesLoadOntoTheirBaseOnly) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "strata-prefix-file-test";
  std::filesystem::create_directories(dir);
  torch::manual_seed(1);
  const ModelConfig tuned_config = blocked_prefixed();
  Seq2Seq tuned(tuned_config);
  tuned->eval();
  ModelConfig base_config = small_prefixed(0);
  Seq2Seq base(base_config);
  auto copy_base = [&](Seq2Seq& into, Seq2Seq& from) {  // the backbone's weights, the prefix MLP aside
    torch::NoGradGuard no_grad;
    for (const auto& p : from->named_parameters()) into->named_parameters()[p.key()].copy_(p.value());
  };
  copy_base(tuned, base);
  const std::filesystem::path file = dir / "adapter.safetensors";
  save_adapter_file(file, *tuned, tuned_config);
  const AdapterFile read = read_adapter_file(file);
  ASSERT_TRUE(read.model && read.prefix);
  EXPECT_TRUE(read.tensors.empty());  // the states alone: no MLP, no other adapter

  Seq2Seq loaded(adapted_config(base_config, read, file));
  EXPECT_EQ(loaded->config().prefix_encoder_blocks, 2);
  copy_base(loaded, base);
  load_adapter_file(read, file, *loaded);
  loaded->eval();
  EXPECT_FALSE(loaded->prefix);  // the MLP is gone: the file's states are the prefix
  EXPECT_EQ(loaded->named_parameters().size(), base->named_parameters().size());
  const at::Tensor source = torch::randint(5, 40, {2, 6}, torch::kInt64);
  const at::Tensor target = torch::randint(5, 40, {2, 3}, torch::kInt64);
  attn::TokenLayout layout;  // the data's even split into the 2 segments the prefix groups read
  layout.segment = nn::encoder_segments(at::Tensor(), 6, 2).expand({2, 6}).contiguous();
  {
    torch::NoGradGuard no_grad;
    EXPECT_TRUE(torch::allclose(loaded->forward(source, at::Tensor(), target, &layout),
                                tuned->forward(source, at::Tensor(), target, &layout), 1e-5, 1e-6));
  }

  Seq2Seq other(adapted_config(base_config, read, file));  // the same size, other weights
  const std::string foreign = error_of([&] { load_adapter_file(read, file, *other); });
  EXPECT_NE(foreign.find("trained on another base model"), std::string::npos) << foreign;
  ModelConfig wider = base_config;
  wider.d_model = 32;
  const std::string size = error_of([&] { adapted_config(wider, read, file); });
  EXPECT_NE(size.find("d_model 16, this base has 32"), std::string::npos) << size;
  const std::string prefixed_base = error_of([&] { adapted_config(tuned_config, read, file); });
  EXPECT_NE(prefixed_base.find("prefixes or PALs of its own"), std::string::npos) << prefixed_base;
  std::filesystem::remove_all(dir);
}

// The prefix keys and values travel with the encoder's output: decoding one encoding reads its
// own prefixes even after the model encoded something else with other prefix weights (no
// state left on the attention modules between encode() and decode()).
TEST(PrefixTuning, PrefixesPassFromEncodingToDecodingExplicitly) {
  torch::manual_seed(3);
  Seq2Seq model(small_prefixed());
  model->eval();
  torch::NoGradGuard no_grad;
  const at::Tensor source = torch::randint(5, 40, {2, 6}, torch::kInt64);
  const at::Tensor target = torch::randint(5, 40, {2, 4}, torch::kInt64);
  const EncoderOutput first = model->encode(source, at::Tensor());
  ASSERT_TRUE(first.prefixes.has_value());
  const at::Tensor want = model->decode(target, first);
  for (at::Tensor& p : model->prefix->parameters()) p.normal_();
  const EncoderOutput second = model->encode(source, at::Tensor());
  EXPECT_TRUE(torch::equal(model->decode(target, first), want));
  EXPECT_FALSE(torch::allclose(model->decode(target, second), want));
  EncoderOutput stripped = first;
  stripped.prefixes.reset();  // without them the decoder's prefixed layers see no prefix slots
  EXPECT_FALSE(torch::allclose(model->decode(target, stripped), want));
}

// Blocked prefixes read the layout's segments, which the data cut: a layout cut into another
// number of segments than the model's prefix groups is refused, naming the key to set.
TEST(PrefixTuning, BlockedPrefixesRefuseALayoutCutIntoOtherSegments) {
  Seq2Seq model(blocked_prefixed());
  EXPECT_TRUE(model->uses_layout());
  const at::Tensor source = torch::randint(5, 40, {1, 6}, torch::kInt64);
  EXPECT_NE(error_of([&] { model->encode(source, at::Tensor()); }).find("no source layout"), std::string::npos);
  attn::TokenLayout one;
  one.segment = torch::zeros({1, 6}, torch::kInt32);
  EXPECT_NE(error_of([&] { model->encode(source, at::Tensor(), &one); }).find("data.segments = 2"), std::string::npos);
  attn::TokenLayout three;
  three.segment = nn::encoder_segments(at::Tensor(), 6, 3);
  EXPECT_NE(error_of([&] { model->encode(source, at::Tensor(), &three); }).find("reach 2"), std::string::npos);
  attn::TokenLayout two;
  two.segment = nn::encoder_segments(at::Tensor(), 6, 2);
  EXPECT_EQ(error_of([&] { model->encode(source, at::Tensor(), &two); }), "(no error)");
}

// Blocking splits each item's real tokens evenly; a document shorter than the block count
// leaves groups without queries (the documented fallback), never an error.
TEST(PrefixTuning, SegmentsSplitEvenlyAndShortDocumentsFallBack) {
  const at::Tensor padding = torch::tensor({1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0}, torch::kBool).view({2, 7});
  EXPECT_TRUE(torch::equal(nn::encoder_segments(padding, 7, 3),
                           torch::tensor({0, 0, 0, 1, 1, 2, 2, 0, 2, 2, 2, 2, 2, 2}, torch::kInt32).view({2, 7})));
  EXPECT_TRUE(torch::equal(nn::prefix_groups(5, 2), torch::tensor({0, 0, 0, 1, 1}, torch::kInt32)));
  EXPECT_TRUE(torch::equal(nn::decoder_segments(1, 3, 4, 2, 3), torch::tensor({{1, 2, 2, 2}}, torch::kInt32)));
}

}  // namespace
}  // namespace strata::models
