#include "strata/models/adapter_file.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/core/safetensors.h"
#include "strata/models/backbone_fingerprint.h"
#include "strata/models/prefix_settings.h"
#include "strata/models/seq2seq.h"
#include "strata/nn/safetensors_torch.h"

namespace strata::models {
namespace {

constexpr const char* kFormat = "strata-adapter/1";
constexpr const char* kPrefixTensors = "prefix_states.";
constexpr const char* kFamilies[] = {"encoder", "decoder", "cross"};

// The fields an adapter built into the model must agree on with its base: another value
// means another backbone.
constexpr const char* kBaseFields[] = {"architecture", "vocab_size", "d_model", "heads", "d_ff",
                                       "encoder_layers", "decoder_layers", "max_positions", "pre_norm",
                                       "tie_embeddings", "activation"};

nn::LayerPrefixes& family(nn::PrefixStates& states, std::string_view name) {
  return name == "encoder" ? states.encoder : name == "decoder" ? states.decoder : states.cross;
}

// Adds `module` to the entry with these settings, or to a new one.
template <class Options, class Settings>
void add_to_group(std::vector<Options>& groups, const Settings& settings, const std::string& module) {
  for (Options& group : groups)
    if (group.settings == settings) {
      group.targets.push_back(module);
      return;
    }
  groups.push_back({.settings = settings, .targets = {module}});
}

nlohmann::json adapters_json(const AdapterFile& adapters) {
  nlohmann::json out = nlohmann::json::array();
  for (const nn::LoraOptions& o : adapters.lora)
    out.push_back({{"kind", "lora"}, {"r", o.settings.r}, {"alpha", o.settings.alpha},
                   {"dropout", o.settings.dropout}, {"modules", o.targets}});
  for (const nn::BottleneckOptions& o : adapters.bottleneck)
    out.push_back({{"kind", "bottleneck"}, {"size", o.settings.size}, {"activation", o.settings.activation},
                   {"modules", o.targets}});
  if (adapters.model && adapters.model->prefix_length > 0)
    out.push_back({{"kind", "prefix"}, {"length", adapters.model->prefix_length}});
  if (adapters.model && adapters.model->pal_size > 0)
    out.push_back({{"kind", "pal"}, {"size", adapters.model->pal_size}, {"heads", adapters.model->pal_heads}});
  return out;
}

// The "adapters" metadata into `out`; strata::Error naming the file when malformed. Prefix and
// PAL entries only name what the "model" metadata holds.
void read_adapters_json(const std::string& text, const std::string& name, AdapterFile& out) {
  try {
    for (const nlohmann::json& entry : nlohmann::json::parse(text)) {
      const std::string kind = entry.at("kind").get<std::string>();
      if (kind == "prefix" || kind == "pal") {
        if (!out.model) throw Error("a " + kind + " adapter, but no 'model' metadata");
        continue;
      }
      const auto modules = entry.at("modules").get<std::vector<std::string>>();
      if (kind == "lora") {
        nn::LoraSettings s{.r = entry.at("r").get<std::int64_t>(), .alpha = entry.at("alpha").get<double>(),
                           .dropout = entry.at("dropout").get<double>()};
        s.check();
        out.lora.push_back({.settings = s, .targets = modules});
      } else if (kind == "bottleneck") {
        nn::BottleneckSettings s{.size = entry.at("size").get<std::int64_t>(),
                                 .activation = entry.at("activation").get<std::string>()};
        s.check();
        out.bottleneck.push_back({.settings = s, .targets = modules});
      } else {
        throw Error("unknown adapter kind '" + kind + "' (known: lora, bottleneck, prefix, pal)");
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(name + ": metadata 'adapters': malformed: " + e.what());
  } catch (const Error& e) {
    throw Error(name + ": metadata 'adapters': " + e.what());
  }
}

// The prefix states of `config`'s prefixed layers from the file's tensors, which are taken out.
nn::PrefixStates read_prefix_states(std::map<std::string, at::Tensor>& tensors, const ModelConfig& c,
                                    const std::string& name) {
  nn::PrefixStates states;
  const std::vector<std::int64_t> shape = {c.heads, c.prefix_length, c.head_dim()};
  auto read = [&](const char* family_name, std::int64_t layers, const at::Tensor& groups) {
    const std::vector<bool> with = prefix_layers(c, layers);
    nn::LayerPrefixes& out = family(states, family_name);
    out.resize(with.size());
    for (std::size_t i = 0; i < with.size(); ++i) {
      if (!with[i]) continue;
      const std::string at = kPrefixTensors + std::string(family_name) + "." + std::to_string(i);
      nn::PrefixKv kv;
      for (const auto& [suffix, slot] : {std::pair{".key", &kv.k}, {".value", &kv.v}}) {
        const auto it = tensors.find(at + suffix);
        if (it == tensors.end()) throw Error(name + ": tensor '" + at + suffix + "' is missing");
        if (it->second.sizes() != at::IntArrayRef(shape))
          throw Error(name + ": tensor '" + at + suffix + "' has shape " + c10::str(it->second.sizes()) + ", expected " +
                      c10::str(at::IntArrayRef(shape)));
        *slot = it->second.to(torch::kFloat32).unsqueeze(0);
        tensors.erase(it);
      }
      kv.segment = groups;
      out[i] = kv;
    }
  };
  auto groups = [&](std::int64_t blocks) { return blocks > 1 ? nn::prefix_groups(c.prefix_length, blocks) : at::Tensor(); };
  read("encoder", c.encoder_layers, groups(c.prefix_encoder_blocks));
  read("decoder", c.decoder_layers, groups(c.prefix_decoder_blocks));
  read("cross", c.decoder_layers, at::Tensor());
  return states;
}

}  // namespace

void save_adapter_file(const std::filesystem::path& file, torch::nn::Module& model, const ModelConfig& config) {
  AdapterFile adapters;
  for (const auto& [module, linear] : nn::adaptable_linears(model)) {
    if (linear->has_lora()) {
      if (linear->lora_merged())
        throw Error(file.string() + ": cannot save the LoRA of " + module +
                    ": it is merged into the weight (unmerge_lora first)");
      add_to_group(adapters.lora, linear->lora_settings(), module);
    }
    if (linear->bottleneck) add_to_group(adapters.bottleneck, linear->bottleneck->settings(), module);
  }
  if (config.prefix_length > 0 || config.pal_size > 0) adapters.model = config;
  if (adapters.lora.empty() && adapters.bottleneck.empty() && !adapters.model)
    throw Error(file.string() + ": the model has no adapters to save");

  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& item : model.named_parameters())  // the prefix MLP aside: its states stand for it
    if (nn::is_adapter_parameter(item.key()) && !item.key().starts_with("prefix."))
      tensors.emplace_back(item.key(), item.value().detach());
  if (config.prefix_length > 0) {
    auto* seq2seq = dynamic_cast<Seq2SeqImpl*>(&model);
    if (seq2seq == nullptr) throw Error(file.string() + ": prefixes belong to seq2seq models");
    torch::NoGradGuard no_grad;
    nn::PrefixStates states = seq2seq->prefix_states();
    for (const char* name : kFamilies) {
      const nn::LayerPrefixes& layers = family(states, name);
      for (std::size_t i = 0; i < layers.size(); ++i) {
        if (!layers[i]) continue;
        const std::string at = kPrefixTensors + std::string(name) + "." + std::to_string(i);
        tensors.emplace_back(at + ".key", layers[i]->k.squeeze(0));
        tensors.emplace_back(at + ".value", layers[i]->v.squeeze(0));
      }
    }
  }
  std::map<std::string, std::string> metadata = {{"format", kFormat},
                                                 {"adapters", adapters_json(adapters).dump()},
                                                 {"base_fingerprint", backbone_fingerprint(model)}};
  if (adapters.model) metadata["model"] = adapters.model->to_json().dump();
  save_tensors(file, tensors, metadata);
}

AdapterFile read_adapter_file(const std::filesystem::path& file) {
  const std::string name = file.string();
  const SafetensorsFile raw(file);  // validates the header; load_tensors below copies the data
  const auto& meta = raw.metadata();
  auto field = [&](const char* key) -> const std::string& {
    const auto it = meta.find(key);
    if (it == meta.end()) throw Error(name + ": not a strata adapter file (no '" + std::string(key) + "' in its metadata)");
    return it->second;
  };
  if (field("format") != kFormat)
    throw Error(name + ": adapter file format '" + field("format") + "', this strata reads " + kFormat);
  AdapterFile out;
  if (meta.contains("model")) {
    nlohmann::json model;
    try {
      model = nlohmann::json::parse(meta.at("model"));
    } catch (const nlohmann::json::exception& e) {
      throw Error(name + ": metadata 'model': malformed JSON: " + e.what());
    }
    out.model = ModelConfig::from_json(model, name + " (metadata 'model')");
  }
  read_adapters_json(field("adapters"), name, out);
  out.fingerprint = field("base_fingerprint");
  out.tensors = load_tensors(file);
  if (out.model && out.model->prefix_length > 0) out.prefix = read_prefix_states(out.tensors, *out.model, name);
  return out;
}

ModelConfig adapted_config(const ModelConfig& base, const AdapterFile& adapters, const std::filesystem::path& file) {
  if (!adapters.model) return base;
  if (base.prefix_length > 0 || base.pal_size > 0)
    throw Error(file.string() + ": the base has prefixes or PALs of its own (model.prefix_length " +
                std::to_string(base.prefix_length) + ", model.pal_size " + std::to_string(base.pal_size) +
                "); load an adapter file onto the model it was trained on");
  const nlohmann::json mine = base.to_json(), adapted = adapters.model->to_json();
  for (const char* field : kBaseFields)
    if (mine.at(field) != adapted.at(field))
      throw Error(file.string() + ": the adapter was trained on a model with " + field + " " + adapted.at(field).dump() +
                  ", this base has " + mine.at(field).dump());
  return *adapters.model;
}

nn::AdapterReport load_adapter_file(const AdapterFile& adapters, const std::filesystem::path& file,
                                    torch::nn::Module& base) {
  const std::string name = file.string();
  if (nn::has_linear_adapters(base))
    throw Error(name + ": the model has LoRA or bottleneck adapters already; load an adapter file onto the base model alone");
  const std::string fingerprint = backbone_fingerprint(base);
  if (fingerprint != adapters.fingerprint)
    throw Error(name + ": the adapters were trained on another base model (fingerprint " + adapters.fingerprint +
                "), not on this one (" + fingerprint + ")");
  if (adapters.prefix) {
    auto* seq2seq = dynamic_cast<Seq2SeqImpl*>(&base);
    if (seq2seq == nullptr || seq2seq->config().prefix_length != adapters.model->prefix_length)
      throw Error(name + ": holds a prefix: build the model from adapted_config() first");
    seq2seq->set_fixed_prefix(*adapters.prefix);
  }

  nn::AdapterReport report;
  auto add = [&](const nn::AdapterReport& added) {
    report.modules.insert(report.modules.end(), added.modules.begin(), added.modules.end());
    report.parameters += added.parameters;
  };
  for (const nn::LoraOptions& options : adapters.lora) add(nn::add_lora(base, options));
  for (const nn::BottleneckOptions& options : adapters.bottleneck) add(nn::add_bottleneck(base, options));

  torch::NoGradGuard no_grad;
  const auto parameters = base.named_parameters();
  const std::vector<std::string> wanted = nn::adapter_parameter_names(base);
  for (const std::string& tensor : wanted) {
    const auto it = adapters.tensors.find(tensor);
    if (it == adapters.tensors.end()) throw Error(name + ": tensor '" + tensor + "' is missing");
    at::Tensor parameter = parameters[tensor];
    if (it->second.sizes() != parameter.sizes())
      throw Error(name + ": tensor '" + tensor + "' has shape " + c10::str(it->second.sizes()) + ", the adapter's is " +
                  c10::str(parameter.sizes()));
    parameter.copy_(it->second);
  }
  for (const auto& [tensor, value] : adapters.tensors)
    if (std::find(wanted.begin(), wanted.end(), tensor) == wanted.end())
      throw Error(name + ": tensor '" + tensor + "' belongs to none of the adapters its metadata describes");
  return report;
}

nn::AdapterReport load_adapter_file(const std::filesystem::path& file, torch::nn::Module& base) {
  return load_adapter_file(read_adapter_file(file), file, base);
}

}  // namespace strata::models
