#include "strata/models/prefix_file.h"

#include <torch/torch.h>

#include "strata/core/error.h"
#include "strata/core/safetensors.h"
#include "strata/models/prefix_settings.h"
#include "strata/nn/safetensors_torch.h"

namespace strata::models {

namespace {

constexpr const char* kFormat = "strata-prefix/1";
constexpr const char* kFamilies[] = {"encoder", "decoder", "cross"};

std::vector<std::optional<nn::PrefixKv>>& family(nn::PrefixStates& states, std::string_view name) {
  return name == "encoder" ? states.encoder : name == "decoder" ? states.decoder : states.cross;
}

// The fields a prefix must agree on with its base: another value means another backbone.
constexpr const char* kBaseFields[] = {"architecture", "vocab_size", "d_model", "heads", "d_ff",
                                       "encoder_layers", "decoder_layers", "max_positions", "pre_norm",
                                       "tie_embeddings", "activation"};

}  // namespace

void save_prefix_file(const std::filesystem::path& file, Seq2Seq& model) {
  torch::NoGradGuard no_grad;
  nn::PrefixStates states = model->prefix_states();
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const char* name : kFamilies) {
    const auto& layers = family(states, name);
    for (std::size_t i = 0; i < layers.size(); ++i) {
      if (!layers[i]) continue;
      const std::string at = std::string(name) + "." + std::to_string(i);
      tensors.emplace_back(at + ".key", layers[i]->k.squeeze(0));
      tensors.emplace_back(at + ".value", layers[i]->v.squeeze(0));
    }
  }
  save_tensors(file, tensors,
               {{"format", kFormat}, {"model", model->config().to_json().dump()},
                {"backbone_fingerprint", backbone_fingerprint(*model)}});
}

PrefixFile read_prefix_file(const std::filesystem::path& file) {
  const std::string name = file.string();
  const SafetensorsFile raw(file);  // validates the header; load_tensors below copies the data
  const auto& meta = raw.metadata();
  auto field = [&](const char* key) -> const std::string& {
    const auto it = meta.find(key);
    if (it == meta.end()) throw Error(name + ": not a strata prefix file (no '" + std::string(key) + "' in its metadata)");
    return it->second;
  };
  if (field("format") != kFormat)
    throw Error(name + ": prefix file format '" + field("format") + "', this strata reads " + kFormat);
  PrefixFile out;
  nlohmann::json model;
  try {
    model = nlohmann::json::parse(field("model"));
  } catch (const nlohmann::json::exception& e) {
    throw Error(name + ": metadata 'model': malformed JSON: " + e.what());
  }
  out.config = ModelConfig::from_json(model, name + " (metadata 'model')");
  if (out.config.prefix_length == 0) throw Error(name + ": the model it describes has no prefixes");
  out.fingerprint = field("backbone_fingerprint");

  const std::map<std::string, at::Tensor> tensors = load_tensors(file);
  const ModelConfig& c = out.config;
  const std::vector<std::int64_t> shape = {c.heads, c.prefix_length, c.head_dim()};
  auto read = [&](const char* family_name, std::int64_t layers, const at::Tensor& groups) {
    const std::vector<bool> with = prefix_layers(c, layers);
    auto& out_layers = family(out.states, family_name);
    out_layers.resize(with.size());
    for (std::size_t i = 0; i < with.size(); ++i) {
      if (!with[i]) continue;
      const std::string at = std::string(family_name) + "." + std::to_string(i);
      nn::PrefixKv kv;
      for (const auto& [suffix, slot] : {std::pair{".key", &kv.k}, {".value", &kv.v}}) {
        const auto it = tensors.find(at + suffix);
        if (it == tensors.end()) throw Error(name + ": tensor '" + at + suffix + "' is missing");
        if (it->second.sizes() != at::IntArrayRef(shape))
          throw Error(name + ": tensor '" + at + suffix + "' has shape " + c10::str(it->second.sizes()) + ", expected " +
                      c10::str(at::IntArrayRef(shape)));
        *slot = it->second.to(torch::kFloat32).unsqueeze(0);
      }
      kv.segment = groups;
      out_layers[i] = kv;
    }
  };
  auto groups = [&](std::int64_t blocks) { return blocks > 1 ? nn::prefix_groups(c.prefix_length, blocks) : at::Tensor(); };
  read("encoder", c.encoder_layers, groups(c.prefix_encoder_blocks));
  read("decoder", c.decoder_layers, groups(c.prefix_decoder_blocks));
  read("cross", c.decoder_layers, at::Tensor());
  return out;
}

ModelConfig config_with_prefix(const ModelConfig& base, const PrefixFile& prefix, const std::filesystem::path& file) {
  if (base.prefix_length > 0)
    throw Error(file.string() + ": the base already has prefixes (model.prefix_length " + std::to_string(base.prefix_length) +
                "); load a prefix file onto the model it was tuned on");
  const nlohmann::json mine = base.to_json(), tuned = prefix.config.to_json();
  for (const char* field : kBaseFields)
    if (mine.at(field) != tuned.at(field))
      throw Error(file.string() + ": the prefix was tuned on a model with " + field + " " + tuned.at(field).dump() +
                  ", this base has " + mine.at(field).dump());
  return prefix.config;
}

Seq2Seq attach_prefix(const ModelConfig& base_config, const std::filesystem::path& base_source,
                      const std::filesystem::path& file, const std::function<void(Seq2Seq&)>& load_base) {
  const PrefixFile prefix = read_prefix_file(file);
  Seq2Seq model(config_with_prefix(base_config, prefix, file), /*prefix_mlp=*/false);
  load_base(model);
  const std::string fingerprint = backbone_fingerprint(*model);
  if (fingerprint != prefix.fingerprint)
    throw Error(file.string() + ": the prefix was tuned on another base model (backbone fingerprint " +
                prefix.fingerprint + "), not on " + base_source.string() + " (" + fingerprint + ")");
  model->set_fixed_prefix(prefix.states);
  return model;
}

}  // namespace strata::models
