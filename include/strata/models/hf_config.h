#pragma once
// Hugging Face model configs (config.json, generation_config.json) of BART, T5, LED, GPT-2 and
// BERT mapped onto strata's ModelConfig (its pretrained-shape fields say what differs from
// strata's defaults), and back. A field or value strata cannot represent is an error naming
// it, never dropped. No tensors here: models/hf_checkpoint.h maps the weights.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/models/model_config.h"

namespace strata::models {

enum class HfFamily { Bart, T5, Led, Gpt2, Bert };
std::string_view hf_family_name(HfFamily family);  // "bart", "t5", "led", "gpt2", "bert"

struct HfModel {
  HfFamily family = HfFamily::Bart;
  std::string hf_class;  // e.g. "BartForConditionalGeneration", "BertForSequenceClassification"
  ModelConfig config;
  std::string prefix;    // where the base model's tensors live: "model.", "led.", "bert.", "transformer." or ""
  // Decoding settings config.json held (older checkpoints, before generation_config.json):
  // num_beams, max_length, forced_bos_token_id, ...; an empty object for none.
  nlohmann::json generation = nlohmann::json::object();
};

struct HfImportOptions {
  // LED: how many leading tokens of each input are global (its global_attention_mask as
  // strata's spec global(N)); summarisation checkpoints put global attention on token 0.
  std::int64_t global_tokens = 1;
};

// config.json → the model. strata::Error naming `source` and the field for a model_type
// strata does not import, a field it does not know, or a value it cannot represent.
HfModel hf_model_from_config(const nlohmann::json& config, const std::string& source,
                             const HfImportOptions& options = {});
// A strata model → the family and class transformers would load it as (the inverse of
// hf_model_from_config); strata::Error naming what has no Hugging Face equivalent (prefixes,
// PALs, structured specs other than LED's window and T5's buckets, ...).
HfModel hf_model_of(const ModelConfig& config);
// The config.json transformers reads for `model`.
nlohmann::json hf_config_of(const HfModel& model);
// generation_config.json's fields (or HfModel::generation) as strata's decode.* run keys, e.g.
// "decode.beam_size" = num_beams, forced_bos_token_id and forced_eos_token_id included, with
// transformers' defaults for the absent ones; strata::Error naming a field strata cannot
// honour (a repetition penalty, several return sequences, diverse beams, ...).
std::vector<std::pair<std::string, nlohmann::json>> decode_settings_from_generation_config(
    const nlohmann::json& generation, const std::string& source, bool encoder_decoder);

}  // namespace strata::models
