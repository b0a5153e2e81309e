#include "strata/models/section_encoder.h"

#include <torch/torch.h>

namespace strata::models {

SectionStates pool_sections(const at::Tensor& hidden, const at::Tensor& padding, const at::Tensor& section,
                            std::int64_t sections) {
  const std::int64_t batch = hidden.size(0), d = hidden.size(2);
  const at::Tensor real = padding.to(hidden.scalar_type()).unsqueeze(-1);  // [B, L, 1]
  const at::Tensor index = section.to(torch::kLong);
  const at::Tensor sums = torch::zeros({batch, sections, d}, hidden.options())
                              .scatter_add(1, index.unsqueeze(-1).expand({batch, index.size(1), d}), hidden * real);
  const at::Tensor counts =
      torch::zeros({batch, sections}, hidden.options()).scatter_add(1, index, real.squeeze(-1));
  return {sums / counts.clamp_min(1).unsqueeze(-1), counts.gt(0)};
}

namespace {

// The layout of a sequence of sections: item s is section s, with the tokens' tree.
attn::TokenLayout section_layout(const attn::TokenLayout& tokens, std::int64_t batch, std::int64_t sections) {
  attn::TokenLayout out;
  out.section = torch::arange(sections, torch::kInt32).unsqueeze(0).expand({batch, sections}).contiguous();
  out.path_len = tokens.path_len;
  out.lvl_diff = tokens.lvl_diff;
  out.section_depth = tokens.section_depth;
  return out;
}

}  // namespace

SectionEncoderImpl::SectionEncoderImpl(nn::LayerOptions layer, std::int64_t count, const attn::Relation& hibrids)
    : hibrids_(hibrids.kind != attn::RelationKind::None) {
  layer.attention.spec = {};  // sections attend to each other densely, HIBRIDS biasing it when on
  layer.attention.spec.bias = hibrids;
  layer.pal.size = 0;
  layers = register_module("layers", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < count; ++i) layers->push_back(nn::EncoderLayer(layer));
  if (layer.pre_norm) layer_norm = register_module("layer_norm", nn::block_norm(layer));
}

SectionStates SectionEncoderImpl::forward(const at::Tensor& hidden, const at::Tensor& padding,
                                          const attn::TokenLayout& layout, std::int64_t sections) {
  const std::int64_t batch = hidden.size(0);
  SectionStates states = pool_sections(hidden, padding, layout.section.expand({batch, -1}), sections);
  const attn::TokenLayout tree = hibrids_ ? section_layout(layout, batch, sections) : attn::TokenLayout{};
  at::Tensor x = states.hidden;
  for (const auto& module : *layers)
    x = module->as<nn::EncoderLayerImpl>()->forward(x, states.present, hibrids_ ? &tree : nullptr);
  if (layer_norm) x = layer_norm(x);
  states.hidden = x.masked_fill(states.present.logical_not().unsqueeze(-1), 0);
  return states;
}

}  // namespace strata::models
