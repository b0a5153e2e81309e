#include "strata/models/prefix_design.h"

#include <algorithm>

#include "strata/core/config.h"
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
  for (std::size_t begin = 0; begin <= text.size();) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string index(trim(std::string_view(text).substr(begin, end - begin)));
    begin = end + 1;
    std::size_t used = 0;
    std::int64_t i = -1;
    try {
      i = std::stoll(index, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != index.size())
      throw Error("model.prefix_layers: '" + text + "' is not all, low, top or a list of layer indices such as \"0,5\"");
    if (i < 0 || i >= layers)
      throw Error("model.prefix_layers: layer " + index + " is outside the stack's " + std::to_string(layers) +
                  " layers (indices from 0)");
    out[static_cast<std::size_t>(i)] = true;
  }
  return out;
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
  if (config.prefix_length > 0 && config.architecture != Architecture::Seq2Seq)
    throw Error("model.prefix_length: prefix-tuning is built for seq2seq models");
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

void declare_prefix_design(ConfigSchema& schema) {
  schema.add("model.prefix_blocking", std::string("all"),
             "which layers block prefixes when model.prefix_*_blocks > 1: all (UniBlock) or lower (HierBlock: below "
             "model.hierarchy_split, dense above)");
  schema.add("model.sparse_attention", std::string("none"),
             "sparse encoder self-attention (seed 000 §4.2): none, truncsa (top-p over the key-impact vector, Eq. 2) or "
             "softsa (Gumbel-softmax, Eq. 3)");
  schema.add("model.sparse_p", 0.95, "TruncSA: the key-impact mass kept, in (0, 1]");
  schema.add("model.sparse_tau", 1.0, "SoftSA: the Gumbel-softmax temperature, > 0");
  schema.add("model.sparse_layers", std::string("all"),
             "which encoder layers are sparse: all, or lower (HTruncSA / HSoftSA: below model.hierarchy_split)");
}

void apply_prefix_design(const Config& run, ModelConfig& config) {
  const std::string blocking = run.get<std::string>("model.prefix_blocking");
  const std::string sparse = run.get<std::string>("model.sparse_attention");
  const std::string sparse_layers = run.get<std::string>("model.sparse_layers");
  const double p = run.get<double>("model.sparse_p"), tau = run.get<double>("model.sparse_tau");
  for (const auto& [key, value] : {std::pair{"prefix_blocking", blocking}, {"sparse_layers", sparse_layers}})
    if (value != "all" && value != "lower")
      throw Error(std::string("model.") + key + ": unknown value '" + value + "' (known: all, lower)");
  attn::Normaliser normaliser;
  if (sparse == "truncsa") {
    if (!(p > 0 && p <= 1)) throw Error("model.sparse_p: TruncSA keeps a mass p in (0, 1], got " + std::to_string(p));
    normaliser = {attn::NormaliserKind::TopP, 1.0, p};
  } else if (sparse == "softsa") {
    if (!(tau > 0)) throw Error("model.sparse_tau: the Gumbel temperature must be > 0, got " + std::to_string(tau));
    normaliser = {attn::NormaliserKind::Gumbel, tau, 1.0};
  } else if (sparse != "none") {
    throw Error("model.sparse_attention: unknown design '" + sparse + "' (known: none, truncsa, softsa)");
  }

  // One stack's specs: layer i blocks when `blocks` > 1 and it is blocked, and takes the
  // normaliser when it is sparse. Nothing when no layer differs from plain.
  auto compile = [&](std::vector<attn::LayerSpec>& specs, const char* key, std::int64_t layers, std::int64_t blocks,
                     bool sparse_stack) {
    const std::int64_t split = hierarchy_split(config, layers);
    const std::vector<bool> with_prefix = prefix_layers(config, layers);
    std::vector<attn::LayerSpec> out;
    bool any = false;
    for (std::int64_t i = 0; i < layers; ++i) {
      attn::HeadSpec head;
      const auto at = static_cast<std::size_t>(i);
      if (blocks > 1 && with_prefix[at] && (blocking == "all" || i < split)) head.mask = attn::Mask::of(attn::MaskKind::PrefixBlock);
      if (sparse_stack && (sparse_layers == "all" || i < split)) head.normaliser = normaliser;
      attn::LayerSpec spec;
      spec.heads = {head};
      any = any || !spec.is_plain();
      out.push_back(spec);
    }
    if (!any) return;
    if (!specs.empty())
      throw Error(std::string("model.") + key + " is set, and so is a prefix design (model.prefix_*_blocks, " +
                  "model.sparse_attention) that compiles into it; give one or the other");
    if (std::all_of(out.begin(), out.end(), [&](const attn::LayerSpec& s) { return s == out.front(); })) out.resize(1);
    specs = std::move(out);
  };
  compile(config.encoder_attention, "encoder_attention", config.encoder_layers, config.prefix_encoder_blocks,
          sparse != "none");
  if (config.architecture == Architecture::Seq2Seq)
    compile(config.decoder_attention, "decoder_attention", config.decoder_layers, config.prefix_decoder_blocks, false);
}

}  // namespace strata::models
