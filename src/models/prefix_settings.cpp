#include "strata/models/prefix_settings.h"

#include <algorithm>

#include "strata/core/error.h"
#include "strata/core/strings.h"

namespace strata::models {

std::int64_t hierarchy_split(const ModelConfig& config, std::int64_t layers) {
  if (config.hierarchy_split <= 0) return (layers + 1) / 2;
  return std::min(config.hierarchy_split, layers);
}

std::vector<bool> prefix_layers(const ModelConfig& config, std::int64_t layers) {
  std::vector<bool> out(static_cast<std::size_t>(layers), false);
  if (config.prefix_length <= 0) return out;
  const std::string& text = config.prefix_layers;
  const std::int64_t split = hierarchy_split(config, layers);
  if (text == "all" || text == "low" || text == "top") {
    for (std::int64_t i = 0; i < layers; ++i)
      out[static_cast<std::size_t>(i)] = text == "all" || (text == "low") == (i < split);
    return out;
  }
  if (trim(text).empty()) throw Error("model.prefix_layers: empty (all, low, top or layer indices such as \"0,5\")");
  return layer_indices("model.prefix_layers", text, layers);
}

namespace {

bool has_prefix_block(const attn::Mask& mask) {
  if (mask.kind == attn::MaskKind::PrefixBlock) return true;
  return std::any_of(mask.operands.begin(), mask.operands.end(), has_prefix_block);
}

// A prefix_block spec on a layer without prefixes would hide nothing and find no slot groups.
void check_blocked_layers(const ModelConfig& config, const std::vector<attn::LayerSpec>& specs,
                          std::int64_t layers, const char* key) {
  const std::vector<bool> with_prefix = prefix_layers(config, layers);
  for (std::int64_t i = 0; i < layers && !specs.empty(); ++i)
    for (const attn::HeadSpec& head : ModelConfig::spec_of(specs, i).heads)
      if (has_prefix_block(head.mask) && !with_prefix[static_cast<std::size_t>(i)])
        throw Error(std::string("model.") + key + ": layer " + std::to_string(i) +
                    " blocks prefixes (prefix_block), but has none (model.prefix_length, model.prefix_layers)");
}

}  // namespace

void check_prefix_design(const ModelConfig& config) {
  if (config.prefix_length < 0)
    throw Error("model.prefix_length: must be 0 (no prefixes) or positive, got " + std::to_string(config.prefix_length));
  for (const auto& [key, value] : {std::pair{"prefix_hidden", config.prefix_hidden},
                                   {"prefix_encoder_blocks", config.prefix_encoder_blocks},
                                   {"prefix_decoder_blocks", config.prefix_decoder_blocks},
                                   {"prefix_decoder_segment", config.prefix_decoder_segment}})
    if (value < 1) throw Error(std::string("model.") + key + ": must be at least 1, got " + std::to_string(value));
  if (config.hierarchy_split < 0)
    throw Error("model.hierarchy_split: must be 0 (half the stack) or positive, got " + std::to_string(config.hierarchy_split));
  for (const auto& [key, blocks] : {std::pair{"prefix_encoder_blocks", config.prefix_encoder_blocks},
                                    {"prefix_decoder_blocks", config.prefix_decoder_blocks}}) {
    if (blocks > 1 && config.prefix_length == 0)
      throw Error(std::string("model.") + key + ": " + std::to_string(blocks) + " blocks, but the model has no prefixes (model.prefix_length)");
    if (blocks > config.prefix_length && config.prefix_length > 0)
      throw Error(std::string("model.") + key + ": " + std::to_string(blocks) + " prefix groups need at least as many prefixes, model.prefix_length is " +
                  std::to_string(config.prefix_length));
  }
  prefix_layers(config, config.encoder_layers);  // throws on a malformed list
  prefix_layers(config, config.decoder_layers);
  check_blocked_layers(config, config.encoder_attention, config.encoder_layers, "encoder_attention");
  check_blocked_layers(config, config.decoder_attention, config.decoder_layers, "decoder_attention");
}

}  // namespace strata::models
