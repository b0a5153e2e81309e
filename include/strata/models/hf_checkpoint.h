#pragma once
// Hugging Face checkpoints of BART, T5, LED, GPT-2 and BERT (config.json + model.safetensors)
// mapped onto strata's models, both ways: the config onto a ModelConfig (its pretrained-shape
// fields say what differs from strata's defaults), and every tensor's name and layout onto
// strata's (GPT-2's transposed Conv1D weights with q, k and v packed in one, T5's [buckets,
// heads] relative-position table, tied embeddings stored once or several times, Longformer's
// global projections). A field or a tensor strata cannot represent is an error naming it,
// never dropped.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
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
// generation_config.json's fields that strata's decoding has (decode.* run keys, e.g.
// "decode.beam_size" = num_beams), with transformers' defaults for the absent ones; strata::Error
// naming a field strata cannot honour (a repetition penalty, forced tokens, ...).
std::vector<std::pair<std::string, nlohmann::json>> decode_settings_from_generation_config(
    const nlohmann::json& generation, const std::string& source, bool encoder_decoder);

using NamedTensorList = std::vector<std::pair<std::string, at::Tensor>>;

// The checkpoint's tensors under strata's names, for a model whose tensors are `expected`
// (names and shapes). strata::Error naming `source` and the tensor when one is missing, has
// another shape, is left over, or is a tied copy that differs from the tensor it copies.
std::map<std::string, at::Tensor> hf_weights_to_strata(const HfModel& model,
                                                       const std::map<std::string, at::Tensor>& hf,
                                                       const NamedTensorList& expected, const std::string& source);
// The model's tensors under transformers' names and layouts (tied weights once, as
// transformers 5 writes them).
NamedTensorList strata_weights_to_hf(const HfModel& model, const NamedTensorList& weights);

}  // namespace strata::models
