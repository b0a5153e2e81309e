#include "prefix_cases.h"

#include <ATen/ATen.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randn.h>

#include <algorithm>

#include <fmt/format.h>

#include "strata/bench/recipe_model.h"
#include "strata/models/model_layers.h"
#include "strata/models/prefix_settings.h"
#include "strata/nn/multi_head_attention.h"
#include "strata/nn/prefix_tuning.h"
#include "strata/nn/transformer_layers.h"

namespace strata::bench {

namespace {

constexpr std::int64_t kVocab = 1000;
constexpr std::int64_t kPad = 1;

struct CaseRow {
  const char* name;
  const char* recipe;
  const char* label;
};

constexpr CaseRow kCases[] = {
    {"no_prefix", "finetune", "no prefix (reference)"},
    {kPrefixReference, "prefix", "Prefix-tune: P dense prefixes, softmax"},
    {"uniblock", "uniblock", "UniBlock: prefix_block on every layer"},
    {"hierblock", "hierblock", "HierBlock: prefix_block on the lower layers, dense above"},
    {"truncsa", "truncsa", "TruncSA: top-p over the key impact on every layer"},
    {"softsa", "softsa", "SoftSA: Gumbel softmax on every layer (noise drawn)"},
    {"hierblock_softsa", "hierblock-softsa", "HierBlock+SoftSA: prefix_block + Gumbel on the lower layers, dense above"},
};

}  // namespace

std::vector<PrefixCase> prefix_cases(const PrefixBenchOptions& o) {
  const std::vector<std::string> sizes{
      fmt::format("model.encoder_layers={}", o.layers), fmt::format("model.d_model={}", o.d_model),
      fmt::format("model.heads={}", o.heads),           fmt::format("model.d_ff={}", o.d_ff),
      fmt::format("model.max_positions={}", std::max<std::int64_t>(1024, o.length)),
      fmt::format("model.sparse_p={}", o.top_p),        fmt::format("model.sparse_tau={}", o.tau)};
  std::vector<PrefixCase> cases;
  for (const CaseRow& row : kCases) {
    // The recipe's own prefix length and blocks, replaced by the benchmark's where it has them.
    const Config recipe = recipe_config(row.recipe, {});
    std::vector<std::string> overrides = sizes;
    if (recipe.get<std::int64_t>("model.prefix_length") > 0)
      overrides.push_back(fmt::format("model.prefix_length={}", o.prefixes));
    if (recipe.get<std::int64_t>("model.prefix_encoder_blocks") > 1)
      overrides.push_back(fmt::format("model.prefix_encoder_blocks={}", o.blocks));
    PrefixCase c{row.name, row.recipe, row.label, recipe_model(row.recipe, overrides)};
    c.prefix = c.model.prefix_length;
    c.blocks = c.model.prefix_encoder_blocks;
    c.with_prefix = models::prefix_layers(c.model, o.layers);
    for (std::int64_t i = 0; i < o.layers; ++i) {
      c.specs.push_back(models::ModelConfig::spec_of(c.model.encoder_attention, i));
      c.kinds.push_back(layer_kind(c.specs.back(), c.with_prefix[static_cast<std::size_t>(i)]));
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

std::string layer_kind(const attn::LayerSpec& spec, bool prefix) {
  const attn::HeadSpec& head = spec.head(0);
  std::string kind;
  const auto add = [&kind](const std::string& part) { kind += (kind.empty() ? "" : "+") + part; };
  if (head.mask.kind == attn::MaskKind::PrefixBlock) add("prefix_block");
  else if (!(head.mask == attn::Mask::all())) add(attn::to_string(head.mask));
  if (head.normaliser.kind == attn::NormaliserKind::TopP) add("top_p");
  if (head.normaliser.kind == attn::NormaliserKind::Gumbel) add("gumbel");
  if (kind.empty()) return prefix ? "plain" : "plain_no_prefix";
  return kind;
}

std::vector<LayerKind> layer_kinds(const std::vector<PrefixCase>& cases) {
  std::vector<LayerKind> kinds;
  for (const PrefixCase& c : cases)
    for (std::size_t i = 0; i < c.kinds.size(); ++i)
      if (std::none_of(kinds.begin(), kinds.end(), [&](const LayerKind& k) { return k.name == c.kinds[i]; }))
        kinds.push_back({c.kinds[i], c.specs[i], c.with_prefix[i] ? c.prefix : 0, c.blocks});
  return kinds;
}

void PrefixedEncoder::step() {
  encoder->forward(ids, padding, &tokens, &layer_prefixes).square().sum().backward();
  for (at::Tensor& p : prefixes) p.mutable_grad().reset();
}

std::shared_ptr<PrefixedEncoder> build_encoder(const PrefixCase& c, const PrefixBenchOptions& o) {
  at::manual_seed(4321);  // the same weights in every case and process
  auto state = std::make_shared<PrefixedEncoder>();
  state->padding = at::ones({1, o.length}, at::kBool);
  // As the seq2seq model blocks its encoder: input segments and prefix groups when K > 1.
  const bool blocked = c.prefix > 0 && c.blocks > 1;
  if (blocked) state->tokens.segment = nn::encoder_segments(state->padding, o.length, c.blocks);
  const at::Tensor groups = blocked ? nn::prefix_groups(c.prefix, c.blocks) : at::Tensor();
  state->embed = torch::nn::Embedding(kVocab, o.d_model);
  state->encoder = nn::TransformerEncoder(models::stack_options(c.model, models::Stack::Encoder), state->embed);
  models::init_weights(*state->encoder, kPad);
  models::init_weights(*state->embed, kPad);
  for (at::Tensor& p : state->encoder->parameters()) p.requires_grad_(false);
  for (at::Tensor& p : state->embed->parameters()) p.requires_grad_(false);
  const std::int64_t head_dim = o.d_model / o.heads;
  state->layer_prefixes.resize(state->encoder->layers->size());
  for (std::size_t i = 0; i < state->encoder->layers->size(); ++i) {
    if (!c.with_prefix[i]) continue;
    nn::PrefixKv kv;
    kv.k = at::randn({1, o.heads, c.prefix, head_dim}).requires_grad_(true);
    kv.v = at::randn({1, o.heads, c.prefix, head_dim}).requires_grad_(true);
    kv.segment = groups;
    state->prefixes.push_back(kv.k);
    state->prefixes.push_back(kv.v);
    state->layer_prefixes[i] = kv;
  }
  state->encoder->train();
  state->ids = (at::arange(o.length, at::kLong).mul(7919).remainder(kVocab - 4) + 4).unsqueeze(0);
  if (state->prefixes.empty()) {
    // Without prefixes nothing would require a gradient: the position embeddings stand in,
    // so backward runs through the whole stack as in the other cases.
    state->encoder->embed_positions->weight.requires_grad_(true);
    state->prefixes.push_back(state->encoder->embed_positions->weight);
  }
  return state;
}

}  // namespace strata::bench
