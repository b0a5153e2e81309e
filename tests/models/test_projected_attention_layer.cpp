#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>
#include <string>

#include "strata/attn/token_layout.h"
#include "strata/core/error.h"
#include "strata/models/model_layers.h"
#include "strata/nn/projected_attention_layer.h"
#include "strata/nn/transformer_stack.h"
#include "support/expect.h"

namespace strata::nn {
namespace {

constexpr std::int64_t kModel = 16;

AttentionOptions layer_attention(attn::Kernel kernel = attn::Kernel::Fused) {
  AttentionOptions options;
  options.d_model = kModel;
  options.heads = 2;
  options.kernel = kernel;
  return options;
}

PalOptions pal_options(std::int64_t size, std::int64_t heads, attn::LayerSpec spec = {}) {
  PalOptions options;
  options.size = size;
  options.heads = heads;
  options.spec = std::move(spec);
  return options;
}

// A spec whose one head entry (= every head) is the fixed pattern, or the mask.
attn::LayerSpec fixed_spec(attn::FixedPattern pattern) {
  attn::LayerSpec spec;
  spec.heads[0].fixed = pattern;
  return spec;
}
attn::LayerSpec mask_spec(attn::MaskKind kind) {
  attn::LayerSpec spec;
  spec.heads[0].mask = attn::Mask::of(kind);
  return spec;
}

void randomize_up(ProjectedAttentionLayer& pal) {
  torch::NoGradGuard no_grad;
  pal->up->weight.normal_(0.0, 0.5);
  pal->up->bias.normal_(0.0, 0.5);
}

StackOptions stack(bool pre_norm, std::int64_t pal_size) {
  StackOptions options;
  options.layers = 2;
  options.max_positions = 32;
  options.layer.attention = layer_attention();
  options.layer.d_ff = 32;
  options.layer.dropout = 0.0;
  options.layer.pre_norm = pre_norm;
  options.layer.pal = pal_options(pal_size, 2);
  return options;
}

TEST(ProjectedAttentionLayer, ShapeNamesAndZeroUpProjection) {
  torch::manual_seed(1);
  ProjectedAttentionLayer pal(layer_attention(), pal_options(8, 2));
  const at::Tensor x = torch::randn({2, 5, kModel});
  const at::Tensor out = pal(x, at::Tensor());
  EXPECT_EQ(out.sizes(), (std::vector<std::int64_t>{2, 5, kModel}));
  EXPECT_TRUE(out.eq(0).all().item<bool>());  // up starts at zero

  std::set<std::string> names;
  for (const auto& item : pal->named_parameters()) names.insert(item.key());
  EXPECT_EQ(names, (std::set<std::string>{"down.weight", "down.bias", "attn.q_proj.weight", "attn.q_proj.bias",
                                          "attn.k_proj.weight", "attn.k_proj.bias", "attn.v_proj.weight",
                                          "attn.v_proj.bias", "attn.out_proj.weight", "attn.out_proj.bias",
                                          "up.weight", "up.bias"}));
  EXPECT_EQ(pal->down->weight.sizes(), (std::vector<std::int64_t>{8, kModel}));
  EXPECT_EQ(pal->attn->q_proj->weight.sizes(), (std::vector<std::int64_t>{8, 8}));
  EXPECT_EQ(pal->up->weight.sizes(), (std::vector<std::int64_t>{kModel, 8}));
}

TEST(ProjectedAttentionLayer, SizeMustDivideIntoHeads) {
  const std::string message =
      test_support::error_of([] { ProjectedAttentionLayer(layer_attention(), pal_options(10, 4)); });
  EXPECT_NE(message.find("model.pal_size"), std::string::npos) << message;
  EXPECT_NE(message.find("10"), std::string::npos) << message;
}

// Previous-token heads put all weight on key i - 1 (row 0 sees nothing and gives zeros), so the
// PAL is up(out_proj(v shifted one position down)), with v = v_proj(down(x)).
TEST(ProjectedAttentionLayer, PreviousTokenHeadsShiftTheValues) {
  for (const attn::Kernel kernel : {attn::Kernel::Reference, attn::Kernel::Fused}) {
    torch::manual_seed(2);
    ProjectedAttentionLayer pal(layer_attention(kernel),
                                pal_options(8, 2, fixed_spec(attn::FixedPattern::PreviousToken)));
    randomize_up(pal);
    const at::Tensor x = torch::randn({2, 5, kModel});
    torch::NoGradGuard no_grad;
    const at::Tensor values = pal->attn->v_proj(pal->down(x));
    at::Tensor shifted = torch::zeros_like(values);
    shifted.narrow(1, 1, 4).copy_(values.narrow(1, 0, 4));
    const at::Tensor expected = pal->up(pal->attn->out_proj(shifted));
    EXPECT_TRUE(torch::allclose(pal(x, at::Tensor()), expected, 1e-6, 1e-6)) << attn::kernel_name(kernel);
  }
}

// same_sentence with one sentence per token: each query sees only itself. This reads the
// layout, so it also shows the layer handing its layout to the PAL.
TEST(ProjectedAttentionLayer, PatternMasksReadTheLayerLayout) {
  torch::manual_seed(3);
  LayerOptions options = stack(/*pre_norm=*/false, 8).layer;
  options.pal.spec = mask_spec(attn::MaskKind::SameSentence);
  EncoderLayer layer(options);
  randomize_up(layer->pal);
  const at::Tensor x = torch::randn({2, 5, kModel});
  attn::TokenLayout layout;
  layout.sentence = torch::arange(5, torch::kInt32).repeat({2, 1});

  torch::NoGradGuard no_grad;
  const at::Tensor expected = layer->pal->up(layer->pal->attn->out_proj(layer->pal->attn->v_proj(layer->pal->down(x))));
  EXPECT_TRUE(torch::allclose(layer->pal(x, at::Tensor(), &layout), expected, 1e-6, 1e-6));
  EXPECT_EQ(layer(x, at::Tensor(), &layout).sizes(), x.sizes());
  EXPECT_THROW(layer(x, at::Tensor()), Error);  // the PAL's mask needs the layout
}

TEST(ProjectedAttentionLayer, PerLayerSpecsInAStack) {
  StackOptions options = stack(/*pre_norm=*/false, 8);
  options.pal_specs = {fixed_spec(attn::FixedPattern::PreviousToken), fixed_spec(attn::FixedPattern::NextToken)};
  TransformerEncoder encoder(options, torch::nn::Embedding(20, kModel));
  EXPECT_EQ(encoder->layers[0]->as<EncoderLayer>()->pal->attn->spec().head(0).fixed,
            attn::FixedPattern::PreviousToken);
  EXPECT_EQ(encoder->layers[1]->as<EncoderLayer>()->pal->attn->spec().head(1).fixed,
            attn::FixedPattern::NextToken);
  EXPECT_TRUE(encoder->layers[0]->as<EncoderLayer>()->self_attn->spec().is_plain());
}

// A PAL added to a model (after the models' weight initialisation, which must leave `up` at
// zero) gives exactly that model's output, post-norm and pre-norm; a trained `up` changes it.
TEST(ProjectedAttentionLayer, ZeroUpProjectionLeavesTheModelUnchanged) {
  for (const bool pre_norm : {false, true}) {
    torch::manual_seed(4);
    torch::nn::Embedding embed(20, kModel);
    TransformerEncoder base(stack(pre_norm, 0), embed);
    TransformerEncoder with_pal(stack(pre_norm, 8), embed);
    models::init_weights(*base, -1);
    models::init_weights(*with_pal, -1);
    const auto pal_parameters = with_pal->named_parameters();
    EXPECT_TRUE(pal_parameters["layers.0.pal.up.weight"].eq(0).all().item<bool>());
    EXPECT_TRUE(pal_parameters["layers.1.pal.up.bias"].eq(0).all().item<bool>());
    EXPECT_TRUE(pal_parameters["layers.1.pal.down.weight"].ne(0).any().item<bool>());
    {
      torch::NoGradGuard no_grad;
      for (const auto& item : base->named_parameters()) pal_parameters[item.key()].copy_(item.value());
    }
    base->eval();
    with_pal->eval();
    const at::Tensor ids = torch::randint(0, 20, {2, 6});
    const at::Tensor padding = torch::tensor({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, torch::kBool).view({2, 6});
    const at::Tensor expected = base(ids, padding);
    EXPECT_TRUE(torch::allclose(with_pal(ids, padding), expected, 1e-6, 1e-6)) << "pre_norm " << pre_norm;
    randomize_up(with_pal->layers[0]->as<EncoderLayer>()->pal);
    EXPECT_FALSE(torch::allclose(with_pal(ids, padding), expected, 1e-3, 1e-3)) << "pre_norm " << pre_norm;
  }
}

}  // namespace
}  // namespace strata::nn
