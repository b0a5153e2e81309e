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

SectionEncoderImpl::SectionEncoderImpl(nn::LayerOptions layer, std::int64_t count) {
  layer.attention.spec = {};  // sections attend to each other densely
  layer.pal.size = 0;
  layers = register_module("layers", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < count; ++i) layers->push_back(nn::EncoderLayer(layer));
  if (layer.pre_norm) layer_norm = register_module("layer_norm", nn::block_norm(layer));
}

SectionStates SectionEncoderImpl::forward(const at::Tensor& hidden, const at::Tensor& padding,
                                          const at::Tensor& section, std::int64_t sections) {
  SectionStates states = pool_sections(hidden, padding, section, sections);
  at::Tensor x = states.hidden;
  for (const auto& module : *layers) x = module->as<nn::EncoderLayerImpl>()->forward(x, states.present);
  if (layer_norm) x = layer_norm(x);
  states.hidden = x.masked_fill(states.present.logical_not().unsqueeze(-1), 0);
  return states;
}

}  // namespace strata::models
