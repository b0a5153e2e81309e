#include "strata/recipes/model_outputs.h"

#include <torch/torch.h>

#include <algorithm>

#include "strata/core/error.h"
#include "strata/decode/generate.h"
#include "strata/models/causal_lm.h"
#include "strata/models/encoder_model.h"
#include "strata/models/seq2seq.h"
#include "strata/recipes/architectures.h"

namespace strata::recipes {

using nlohmann::json;

namespace {

// inputs[key] as an int64 [B, L] tensor; strata::Error naming the key for ragged or
// non-integer rows. Undefined when the key is absent or null and not `required`.
at::Tensor id_matrix(const json& inputs, const std::string& key, const std::string& source, bool required) {
  if (!inputs.contains(key) || inputs.at(key).is_null()) {
    if (required) throw Error(source + ": field '" + key + "' is missing");
    return {};
  }
  const json& rows = inputs.at(key);
  if (!rows.is_array() || rows.empty() || !rows[0].is_array() || rows[0].empty())
    throw Error(source + ": field '" + key + "' must be a non-empty list of non-empty rows of integers");
  const std::size_t width = rows[0].size();
  std::vector<std::int64_t> values;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].is_array() || rows[i].size() != width)
      throw Error(source + ": field '" + key + "' row " + std::to_string(i) + " has another length than row 0");
    for (const json& v : rows[i]) {
      if (!v.is_number_integer()) throw Error(source + ": field '" + key + "' row " + std::to_string(i) + " holds " + v.dump());
      values.push_back(v.get<std::int64_t>());
    }
  }
  return torch::tensor(values, torch::kInt64).view({static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(width)});
}

void check_vocabulary(const at::Tensor& ids, const models::ModelConfig& config, const std::string& what) {
  if (ids.defined() && (ids.min().item<std::int64_t>() < 0 || ids.max().item<std::int64_t>() >= config.vocab_size))
    throw Error(what + ": token ids must be in [0, " + std::to_string(config.vocab_size) + ")");
}

json nested(const at::Tensor& t) {
  if (t.dim() == 0) return t.item<double>();
  json out = json::array();
  for (std::int64_t i = 0; i < t.size(0); ++i) out.push_back(nested(t[i]));
  return out;
}

void put(json& out, const std::string& name, const at::Tensor& t) {
  const at::Tensor values = t.detach().to(torch::kFloat64).contiguous();
  out[name] = nested(values);
  out[name + "_shape"] = t.sizes().vec();
}

// LED's global_attention_mask must be what the model's spec says: its first N tokens.
void check_global_mask(const json& inputs, const models::ModelConfig& config, const std::string& source) {
  const at::Tensor mask = id_matrix(inputs, "global_attention_mask", source, false);
  if (!mask.defined()) return;
  const std::int64_t n = config.global_projections ? attn::global_tokens(models::ModelConfig::spec_of(config.encoder_attention, 0)) : 0;
  const at::Tensor expected = torch::arange(mask.size(1)).lt(n).to(torch::kInt64).expand_as(mask);
  if (!torch::equal(mask, expected))
    throw Error(source + ": global_attention_mask must mark the first " + std::to_string(n) +
                " tokens of every row, as the model's spec global(" + std::to_string(n) +
                ") does (import the model with --global-tokens to change N)");
}

// attention_mask as strata's padding (true = real), or undefined for none.
at::Tensor padding_of(const json& inputs, const at::Tensor& ids, const std::string& source) {
  const at::Tensor mask = id_matrix(inputs, "attention_mask", source, false);
  if (!mask.defined()) return {};
  if (mask.sizes() != ids.sizes()) throw Error(source + ": attention_mask has another shape than input_ids");
  return mask.ne(0);
}

}  // namespace

json forward_outputs(const LoadedModel& model, const json& inputs, const std::string& source) {
  torch::NoGradGuard no_grad;
  const models::ModelConfig& config = model.config;
  const at::Tensor ids = id_matrix(inputs, "input_ids", source, true);
  check_vocabulary(ids, config, source + ": input_ids");
  const at::Tensor padding = padding_of(inputs, ids, source);
  json out = json::object();
  if (auto seq2seq = std::dynamic_pointer_cast<models::Seq2SeqImpl>(model.module)) {
    check_global_mask(inputs, config, source);
    const at::Tensor decoder_ids = id_matrix(inputs, "decoder_input_ids", source, true);
    check_vocabulary(decoder_ids, config, source + ": decoder_input_ids");
    const models::EncoderOutput encoded = seq2seq->encode(ids, padding);
    put(out, "logits", seq2seq->logits(seq2seq->decode(decoder_ids, encoded)));
    put(out, "encoder_last_hidden_state", encoded.hidden);
  } else if (auto encoder = std::dynamic_pointer_cast<models::EncoderModelImpl>(model.module)) {
    const at::Tensor types = id_matrix(inputs, "token_type_ids", source, false);
    const at::Tensor hidden = encoder->encode(ids, padding, nullptr, types);
    put(out, "last_hidden_state", hidden);
    if (encoder->pooler) put(out, "pooler_output", encoder->pool(hidden));
    if (encoder->classifier) put(out, "logits", encoder->classify(hidden, ids, padding).logits);
  } else if (auto lm = std::dynamic_pointer_cast<models::LanguageModel>(model.module)) {
    // Causal attention: right padding never reaches a real position, left padding would
    // shift the positions (transformers derives them from the mask; strata does not yet).
    if (padding.defined() && !torch::equal(padding, padding.to(torch::kInt64).cumprod(1).to(torch::kBool)))
      throw Error(source + ": attention_mask pads on the left; strata's language models take right-padded rows");
    auto causal = std::dynamic_pointer_cast<models::CausalLmImpl>(model.module);
    put(out, "logits", causal ? causal->forward(ids, nullptr, padding) : lm->logits(ids));
  } else {
    throw Error(source + ": strata forward does not run a " + config.architecture + " model");
  }
  return out;
}

json generate_outputs(const LoadedModel& model, const json& inputs, const decode::GenerationOptions& options,
                      const std::string& source) {
  torch::NoGradGuard no_grad;
  const models::ModelConfig& config = model.config;
  const Architecture& architecture = find_architecture(config.architecture);
  if (!architecture.stepper) throw Error("a " + config.architecture + " model does not generate");
  decode::GenerationOptions o = options;
  o.eos_id = config.eos_id;
  o.pad_id = config.pad_id;
  json sequences = json::array();
  if (config.architecture == "seq2seq") {
    check_global_mask(inputs, config, source);
    const at::Tensor ids = id_matrix(inputs, "input_ids", source, true);
    check_vocabulary(ids, config, source + ": input_ids");
    o.start_id = config.decoder_start_id;
    const auto stepper = architecture.stepper(model.module, {ids, padding_of(inputs, ids, source), nullptr, true});
    const decode::Sequences generated = decode::generate(*stepper, o);
    std::size_t longest = 0;
    for (const auto& row : generated) longest = std::max(longest, row.size());
    for (const auto& row : generated) {  // padded to one length, as transformers returns them
      std::vector<std::int64_t> full{config.decoder_start_id};
      full.insert(full.end(), row.begin(), row.end());
      full.resize(longest + 1, config.pad_id);
      sequences.push_back(full);
    }
  } else if (inputs.contains("attention_mask")) {
    // One batch of left-padded prompts; each row comes back whole, padding included.
    const at::Tensor ids = id_matrix(inputs, "input_ids", source, true);
    check_vocabulary(ids, config, source + ": input_ids");
    const auto stepper = architecture.stepper(model.module, {ids, padding_of(inputs, ids, source), nullptr, true});
    const decode::Sequences generated = decode::generate(*stepper, o);
    for (std::int64_t row = 0; row < ids.size(0); ++row) {
      std::vector<std::int64_t> full(ids[row].data_ptr<std::int64_t>(), ids[row].data_ptr<std::int64_t>() + ids.size(1));
      full.insert(full.end(), generated[row].begin(), generated[row].end());
      sequences.push_back(full);
    }
  } else {
    // One prompt at a time: rows of different lengths need no padding.
    if (!inputs.contains("input_ids") || !inputs.at("input_ids").is_array())
      throw Error(source + ": field 'input_ids' must be a list of prompts");
    for (std::size_t i = 0; i < inputs.at("input_ids").size(); ++i) {
      json one = json::object();
      one["input_ids"] = json::array();
      one["input_ids"].push_back(inputs.at("input_ids")[i]);
      const at::Tensor ids = id_matrix(one, "input_ids", source + ": prompt " + std::to_string(i), true);
      check_vocabulary(ids, config, source + ": input_ids");
      const auto stepper = architecture.stepper(model.module, {ids, {}, nullptr, true});
      std::vector<std::int64_t> full(ids.data_ptr<std::int64_t>(), ids.data_ptr<std::int64_t>() + ids.numel());
      const decode::Sequences generated = decode::generate(*stepper, o);
      full.insert(full.end(), generated.at(0).begin(), generated.at(0).end());
      sequences.push_back(full);
    }
  }
  return {{"sequences", sequences}};
}

}  // namespace strata::recipes
