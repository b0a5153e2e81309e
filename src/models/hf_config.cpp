#include "strata/models/hf_config.h"

#include <algorithm>
#include <map>
#include <set>
#include <type_traits>

#include "strata/attn/spec.h"
#include "strata/core/error.h"

namespace strata::models {

using nlohmann::json;

std::string_view hf_family_name(HfFamily family) {
  switch (family) {
    case HfFamily::Bart: return "bart";
    case HfFamily::T5: return "t5";
    case HfFamily::Led: return "led";
    case HfFamily::Gpt2: return "gpt2";
    case HfFamily::Bert: return "bert";
  }
  return "?";
}

namespace {

// ---- config.json --------------------------------------------------------------------------

// Fields every family may carry that do not change the computation strata runs: provenance,
// initialisation, training-time switches, and outputs transformers may return.
const std::set<std::string> kMetadata = {
    "architectures", "transformers_version", "dtype", "torch_dtype", "_name_or_path", "model_type",
    "use_cache", "is_encoder_decoder", "initializer_range", "init_std", "initializer_factor",
    "classifier_dropout", "encoder_layerdrop", "decoder_layerdrop", "layerdrop", "gradient_checkpointing",
    "output_past", "return_dict", "output_hidden_states", "output_attentions", "problem_type",
    "id2label", "label2id", "num_labels", "task_specific_params", "bos_token_id", "eos_token_id",
    "pad_token_id", "decoder_start_token_id", "sep_token_id", "tokenizer_class", "prefix", "_num_labels",
    "classif_dropout", "_from_model_config"};

// Decoding settings that configs written before generation_config.json existed hold.
const char* const kGenerationFields[] = {
    "max_length", "min_length", "max_new_tokens", "no_repeat_ngram_size", "num_beams", "length_penalty",
    "early_stopping", "do_sample", "top_k", "top_p", "temperature", "repetition_penalty", "num_return_sequences",
    "num_beam_groups", "diversity_penalty", "bad_words_ids", "forced_bos_token_id", "forced_eos_token_id",
    "force_bos_token_to_be_generated"};

// Reads a config.json object, field by field: every field must be read, required to hold a
// value, or metadata; finish() names the first that was not.
class HfConfigReader {
 public:
  HfConfigReader(const json& config, std::string source) : config_(config), source_(std::move(source)) {
    if (!config.is_object()) throw Error(source_ + ": expected a JSON object");
  }

  bool has(const std::string& key) const { return config_.contains(key) && !config_.at(key).is_null(); }

  template <class T>
  T get(const std::string& key) {
    used_.insert(key);
    if (!has(key)) throw Error(source_ + ": field '" + key + "' is missing");
    // A size or id must be written as an integer: a float such as 3e40 would not convert.
    constexpr bool integral = std::is_integral_v<T> && !std::is_same_v<T, bool>;
    if (integral && !config_.at(key).is_number_integer())
      throw Error(source_ + ": field '" + key + "' must be an integer, got " + config_.at(key).dump());
    if constexpr (std::is_same_v<T, std::vector<std::int64_t>>)
      for (const json& item : config_.at(key))
        if (!item.is_number_integer())
          throw Error(source_ + ": field '" + key + "' must hold integers, got " + config_.at(key).dump());
    try {
      return config_.at(key).get<T>();
    } catch (const json::exception&) {
      throw Error(source_ + ": field '" + key + "' has the wrong type (" + config_.at(key).dump() + ")");
    }
  }

  template <class T>
  T get(const std::string& key, T fallback) {
    used_.insert(key);
    return has(key) ? get<T>(key) : fallback;
  }

  // A field strata has no setting for: accepted only when it holds `value` (or is absent).
  template <class T>
  void require(const std::string& key, const T& value, const std::string& why) {
    used_.insert(key);
    if (has(key) && get<T>(key) != value)
      throw Error(source_ + ": field '" + key + "' = " + config_.at(key).dump() + " is not supported: " + why);
  }

  // Two fields that strata holds in one setting must agree.
  template <class T>
  T same(const std::string& a, const std::string& b) {
    const T first = get<T>(a);
    if (has(b) && get<T>(b) != first)
      throw Error(source_ + ": fields '" + a + "' and '" + b + "' differ (" + config_.at(a).dump() + " vs " +
                  config_.at(b).dump() + "); strata uses one value for both");
    used_.insert(b);
    return first;
  }

  std::int64_t token_id(const std::string& key, std::int64_t fallback) {
    used_.insert(key);
    return has(key) && config_.at(key).is_number_integer() ? config_.at(key).get<std::int64_t>() : fallback;
  }

  void finish() const {
    for (const auto& [key, value] : config_.items())
      if (!used_.contains(key) && !kMetadata.contains(key))
        throw Error(source_ + ": field '" + key + "' (" + value.dump() + ") is not supported by strata's " +
                    model_type() + " import");
  }

  const std::string& source() const { return source_; }

 private:
  // The model_type for messages, whatever the file holds there.
  std::string model_type() const {
    const auto type = config_.find("model_type");
    return type != config_.end() && type->is_string() ? type->get<std::string>() : "config";
  }

  const json& config_;
  std::string source_;
  std::set<std::string> used_;
};

std::string activation(HfConfigReader& r, const std::string& key) {
  const std::string name = r.get<std::string>(key);
  if (name == "gelu" || name == "relu" || name == "gelu_new") return name;
  throw Error(r.source() + ": field '" + key + "' = \"" + name +
              "\" is not supported (strata has gelu, gelu_new and relu)");
}

attn::LayerSpec spec_json(const std::string& text) { return attn::layer_spec_from_json(json::parse(text)); }

// BART and LED share everything but positions and the encoder's attention.
void read_bart_like(HfConfigReader& r, ModelConfig& c) {
  c.architecture = "seq2seq";
  c.vocab_size = r.get<std::int64_t>("vocab_size");
  c.d_model = r.get<std::int64_t>("d_model");
  c.heads = r.same<std::int64_t>("encoder_attention_heads", "decoder_attention_heads");
  c.d_ff = r.same<std::int64_t>("encoder_ffn_dim", "decoder_ffn_dim");
  c.encoder_layers = r.get<std::int64_t>("encoder_layers");
  c.decoder_layers = r.get<std::int64_t>("decoder_layers");
  c.activation = activation(r, "activation_function");
  c.dropout = r.get<double>("dropout", 0.1);
  c.attention_dropout = r.get<double>("attention_dropout", 0.0);
  c.activation_dropout = r.get<double>("activation_dropout", 0.0);
  c.scale_embedding = r.get<bool>("scale_embedding", false);
  c.tie_embeddings = r.get<bool>("tie_word_embeddings", true);
  c.final_logits_bias = true;
  c.pad_id = r.token_id("pad_token_id", 1);
  c.bos_id = r.token_id("bos_token_id", 0);
  c.eos_id = r.token_id("eos_token_id", 2);
  c.decoder_start_id = r.token_id("decoder_start_token_id", c.eos_id);
  r.require("is_decoder", false, "a decoder-only BART");
  r.require("normalize_before", false, "pre-norm BART variants (mBART) have final norms strata does not map");
  r.require("add_final_layer_norm", false, "mBART's final layer norms");
  r.require("add_bias_logits", false, "a learned logits bias");
  r.require("static_position_embeddings", false, "sinusoidal positions");
  r.require("normalize_embedding", true, "embeddings without their LayerNorm");
  r.require("do_blenderbot_90_layernorm", false, "Blenderbot's layer norms");
}

ModelConfig read_bart(HfConfigReader& r) {
  ModelConfig c;
  read_bart_like(r, c);
  c.max_positions = r.get<std::int64_t>("max_position_embeddings");
  c.position_offset = 2;
  r.require("extra_pos_embeddings", 2, "another position offset than BART's 2");
  r.get<std::int64_t>("num_hidden_layers", c.encoder_layers);  // older configs' alias of encoder_layers
  return c;
}

ModelConfig read_led(HfConfigReader& r, const HfImportOptions& options) {
  ModelConfig c;
  read_bart_like(r, c);
  c.max_positions = r.get<std::int64_t>("max_encoder_position_embeddings");
  c.decoder_max_positions = r.get<std::int64_t>("max_decoder_position_embeddings");
  if (c.decoder_max_positions == c.max_positions) c.decoder_max_positions = 0;
  c.global_projections = true;
  std::vector<std::int64_t> windows;
  if (r.has("attention_window") && json(r.get<json>("attention_window")).is_array()) {
    windows = r.get<std::vector<std::int64_t>>("attention_window");
  } else {
    windows.assign(static_cast<std::size_t>(c.encoder_layers), r.get<std::int64_t>("attention_window"));
  }
  if (static_cast<std::int64_t>(windows.size()) != c.encoder_layers)
    throw Error(r.source() + ": field 'attention_window' has " + std::to_string(windows.size()) + " entries for " +
                std::to_string(c.encoder_layers) + " encoder layers");
  // Longformer: each token sees w / 2 tokens on each side, the global tokens see and are seen
  // by all (through their own projections: global_projections).
  for (const std::int64_t w : windows) {
    if (w <= 0 || w % 2 != 0)
      throw Error(r.source() + ": field 'attention_window' must hold positive even sizes, got " + std::to_string(w));
    const std::string mask = "window(" + std::to_string(w / 2) + "," + std::to_string(w / 2) + ") | global(" +
                             std::to_string(options.global_tokens) + ")";
    c.encoder_attention.push_back(spec_json(R"({"heads": [{"mask": ")" + mask + R"("}]})"));
  }
  return c;
}

attn::LayerSpec t5_spec(std::int64_t buckets, std::int64_t max_distance, bool bidirectional) {
  return spec_json(R"({"bias": {"kind": "t5_buckets", "buckets": )" + std::to_string(buckets) +
                   R"(, "max_distance": )" + std::to_string(max_distance) + R"(, "bidirectional": )" +
                   (bidirectional ? "true" : "false") + "}}");
}

ModelConfig read_t5(HfConfigReader& r) {
  ModelConfig c;
  c.architecture = "seq2seq";
  c.vocab_size = r.get<std::int64_t>("vocab_size");
  c.d_model = r.get<std::int64_t>("d_model");
  c.heads = r.get<std::int64_t>("num_heads");
  if (r.get<std::int64_t>("d_kv") * c.heads != c.d_model)
    throw Error(r.source() + ": d_kv × num_heads differs from d_model; strata's attention splits d_model into heads");
  c.d_ff = r.get<std::int64_t>("d_ff");
  c.encoder_layers = r.get<std::int64_t>("num_layers");
  c.decoder_layers = r.get<std::int64_t>("num_decoder_layers", c.encoder_layers);
  // "relu" (T5), "gated-gelu" (T5 v1.1, FLAN-T5: transformers runs gelu_new), "gated-relu".
  std::string proj = r.get<std::string>("feed_forward_proj", std::string("relu"));
  c.ffn_gated = proj.starts_with("gated-");
  if (c.ffn_gated) proj = proj.substr(6);
  if (c.ffn_gated && proj == "gelu") proj = "gelu_new";
  if (proj != "relu" && proj != "gelu_new" && proj != "gelu")
    throw Error(r.source() + ": field 'feed_forward_proj' = \"" + r.get<std::string>("feed_forward_proj") +
                "\" is not supported (strata has relu, gelu, gelu_new, and their gated forms)");
  c.activation = proj;
  r.require("is_gated_act", c.ffn_gated, "must match feed_forward_proj");
  r.require("dense_act_fn", proj, "must match feed_forward_proj");
  r.require("is_decoder", false, "a decoder-only T5");
  c.dropout = r.get<double>("dropout_rate", 0.1);
  c.attention_dropout = 0.0;
  c.norm = "rms";
  c.norm_eps = r.get<double>("layer_norm_epsilon", 1e-6);
  c.positions = "none";
  c.max_positions = 512;  // the length T5 trained at; relative positions have no table to outgrow
  c.pre_norm = true;
  c.linear_bias = false;
  c.scale_attention = false;
  c.share_relation_bias = true;
  c.tie_embeddings = r.get<bool>("tie_word_embeddings", true);
  // transformers scales the tied decoder output by d_model^-0.5; version 5 names the switch.
  c.scale_decoder_outputs = r.get<bool>("scale_decoder_outputs", c.tie_embeddings);
  const std::int64_t buckets = r.get<std::int64_t>("relative_attention_num_buckets", 32);
  const std::int64_t distance = r.get<std::int64_t>("relative_attention_max_distance", 128);
  c.encoder_attention = {t5_spec(buckets, distance, true)};
  c.decoder_attention = {t5_spec(buckets, distance, false)};
  c.pad_id = r.token_id("pad_token_id", 0);
  c.eos_id = r.token_id("eos_token_id", 1);
  c.decoder_start_id = r.token_id("decoder_start_token_id", c.pad_id);
  c.bos_id = c.pad_id;  // T5 has no bos: generation starts from decoder_start
  return c;
}

ModelConfig read_gpt2(HfConfigReader& r) {
  ModelConfig c;
  c.architecture = "causal_lm";
  c.vocab_size = r.get<std::int64_t>("vocab_size");
  c.d_model = r.get<std::int64_t>("n_embd");
  c.heads = r.get<std::int64_t>("n_head");
  c.d_ff = r.get<std::int64_t>("n_inner", 4 * c.d_model);
  c.decoder_layers = r.get<std::int64_t>("n_layer");
  c.encoder_layers = 0;
  c.max_positions = r.get<std::int64_t>("n_positions");
  r.require("n_ctx", c.max_positions, "must equal n_positions");
  c.activation = activation(r, "activation_function");
  c.norm_eps = r.get<double>("layer_norm_epsilon", 1e-5);
  c.dropout = r.same<double>("resid_pdrop", "embd_pdrop");
  c.attention_dropout = r.get<double>("attn_pdrop", 0.1);
  c.scale_attention = r.get<bool>("scale_attn_weights", true);
  r.require("scale_attn_by_inverse_layer_idx", false, "per-layer attention scaling");
  r.get<bool>("reorder_and_upcast_attn", false);  // float32 here: the same numbers either way
  r.require("add_cross_attention", false, "GPT-2 with cross-attention");
  for (const char* key : {"summary_type", "summary_use_proj", "summary_activation", "summary_proj_to_labels",
                          "summary_first_dropout"})
    r.get<json>(key, json());  // GPT2DoubleHeadsModel's head: no tensors in an LM checkpoint
  c.pre_norm = true;
  c.tie_embeddings = r.get<bool>("tie_word_embeddings", true);
  c.eos_id = r.token_id("eos_token_id", c.vocab_size - 1);
  c.bos_id = r.token_id("bos_token_id", c.eos_id);
  c.pad_id = r.token_id("pad_token_id", c.eos_id);
  c.decoder_start_id = c.bos_id;
  return c;
}

ModelConfig read_bert(HfConfigReader& r, const std::string& hf_class) {
  ModelConfig c;
  c.architecture = "encoder";
  c.vocab_size = r.get<std::int64_t>("vocab_size");
  c.d_model = r.get<std::int64_t>("hidden_size");
  c.heads = r.get<std::int64_t>("num_attention_heads");
  c.d_ff = r.get<std::int64_t>("intermediate_size");
  c.encoder_layers = r.get<std::int64_t>("num_hidden_layers");
  c.decoder_layers = 0;
  c.max_positions = r.get<std::int64_t>("max_position_embeddings");
  c.token_types = r.get<std::int64_t>("type_vocab_size", 2);
  c.activation = activation(r, "hidden_act");
  c.norm_eps = r.get<double>("layer_norm_eps", 1e-12);
  c.dropout = r.get<double>("hidden_dropout_prob", 0.1);
  c.attention_dropout = r.get<double>("attention_probs_dropout_prob", 0.1);
  r.require("position_embedding_type", std::string("absolute"), "relative position embeddings");
  r.require("is_decoder", false, "BERT as a decoder");
  r.require("add_cross_attention", false, "BERT with cross-attention");
  r.require("chunk_size_feed_forward", 0, "chunked feed-forward");
  r.get<bool>("tie_word_embeddings", true);  // ties the MLM head, which these classes do not hold
  c.pooler = true;
  c.head = EncoderHead::Sequence;
  c.num_labels = 0;
  if (hf_class == "BertForSequenceClassification") {
    const json labels = r.get<json>("id2label", json::object());
    c.num_labels = labels.is_object() && !labels.empty() ? static_cast<std::int64_t>(labels.size()) : 2;
    if (c.num_labels == 1) throw Error(r.source() + ": a regression head (one label) is not supported");
  }
  c.pad_id = r.token_id("pad_token_id", 0);
  c.bos_id = c.eos_id = c.decoder_start_id = c.pad_id;  // no tokenizer here says which are [CLS] / [SEP]
  return c;
}

const std::map<std::string, std::pair<HfFamily, std::set<std::string>>>& known_classes() {
  static const std::map<std::string, std::pair<HfFamily, std::set<std::string>>> classes = {
      {"bart", {HfFamily::Bart, {"BartForConditionalGeneration", "BartModel"}}},
      {"t5", {HfFamily::T5, {"T5ForConditionalGeneration"}}},
      {"led", {HfFamily::Led, {"LEDForConditionalGeneration"}}},
      {"gpt2", {HfFamily::Gpt2, {"GPT2LMHeadModel"}}},
      {"bert", {HfFamily::Bert, {"BertModel", "BertForSequenceClassification"}}},
  };
  return classes;
}

std::string prefix_of(HfFamily family, const std::string& hf_class) {
  switch (family) {
    case HfFamily::Bart: return "model.";
    case HfFamily::Led: return "led.";
    case HfFamily::Gpt2: return "transformer.";
    case HfFamily::Bert: return hf_class == "BertModel" ? "" : "bert.";
    case HfFamily::T5: return "";
  }
  return "";
}

}  // namespace

HfModel hf_model_from_config(const json& config, const std::string& source, const HfImportOptions& options) {
  HfConfigReader r(config, source);
  const std::string type = r.get<std::string>("model_type");
  const auto known = known_classes().find(type);
  if (known == known_classes().end())
    throw Error(source + ": model_type '" + type + "' is not one strata imports (known: bart, bert, gpt2, led, t5)");
  HfModel model;
  model.generation = json::object();
  for (const char* key : kGenerationFields)
    if (const json value = r.get<json>(key, json()); !value.is_null()) model.generation[key] = value;
  if (model.generation.contains("force_bos_token_to_be_generated"))
    model.generation["bos_token_id"] = r.get<json>("bos_token_id", json());
  model.family = known->second.first;
  const auto classes = r.get<std::vector<std::string>>("architectures", {});
  model.hf_class = classes.empty() ? *known->second.second.begin() : classes.front();
  if (!known->second.second.contains(model.hf_class))
    throw Error(source + ": architectures[0] '" + model.hf_class + "' is not a " + type + " class strata imports");
  if (model.hf_class == "BartModel") model.hf_class = "BartForConditionalGeneration";  // its tensors, plus a tied head
  switch (model.family) {
    case HfFamily::Bart: model.config = read_bart(r); break;
    case HfFamily::Led: model.config = read_led(r, options); break;
    case HfFamily::T5: model.config = read_t5(r); break;
    case HfFamily::Gpt2: model.config = read_gpt2(r); break;
    case HfFamily::Bert: model.config = read_bert(r, model.hf_class); break;
  }
  r.finish();
  model.prefix = prefix_of(model.family, model.hf_class);
  model.config.check();
  return model;
}

namespace {

bool has_layout_specs(const ModelConfig& c) {
  return !c.decoder_attention.empty() || !c.cross_attention.empty() || !c.pal_attention.empty();
}

void refuse(bool condition, const std::string& what) {
  if (condition) throw Error("export: " + what + " has no Hugging Face equivalent");
}

}  // namespace

namespace {

// LED's one-sided window of each encoder layer, read back from its spec; strata::Error for a
// spec that is not Longformer's window(w, w) | global(N).
std::vector<std::int64_t> led_windows(const ModelConfig& c) {
  std::vector<std::int64_t> windows;
  for (std::int64_t i = 0; i < c.encoder_layers; ++i) {
    const attn::LayerSpec spec = ModelConfig::spec_of(c.encoder_attention, i);
    const attn::Mask& mask = spec.heads.at(0).mask;
    const bool longformer = spec.heads.size() == 1 && mask.kind == attn::MaskKind::Or && mask.operands.size() == 2 &&
                            mask.operands[0].kind == attn::MaskKind::Window &&
                            mask.operands[0].left == mask.operands[0].right &&
                            mask.operands[1].kind == attn::MaskKind::Global && spec.bias.kind == attn::RelationKind::None;
    if (!longformer) throw Error("export: LED encoder layer " + std::to_string(i) + "'s spec is not window(w,w) | global(N)");
    windows.push_back(2 * mask.operands[0].left);
  }
  return windows;
}

}  // namespace

json hf_config_of(const HfModel& model) {
  const ModelConfig& c = model.config;
  json j;
  j["architectures"] = {model.hf_class};
  j["model_type"] = std::string(hf_family_name(model.family));
  j["vocab_size"] = c.vocab_size;
  j["tie_word_embeddings"] = c.tie_embeddings;
  j["dtype"] = "float32";
  j["pad_token_id"] = c.pad_id;
  switch (model.family) {
    case HfFamily::Bart:
    case HfFamily::Led:
      j["d_model"] = c.d_model;
      j["encoder_attention_heads"] = j["decoder_attention_heads"] = c.heads;
      j["encoder_ffn_dim"] = j["decoder_ffn_dim"] = c.d_ff;
      j["encoder_layers"] = c.encoder_layers;
      j["decoder_layers"] = c.decoder_layers;
      j["activation_function"] = c.activation;
      j["dropout"] = c.dropout;
      j["attention_dropout"] = c.attention_dropout;
      j["activation_dropout"] = c.activation_dropout;
      j["bos_token_id"] = c.bos_id;
      j["eos_token_id"] = c.eos_id;
      j["decoder_start_token_id"] = c.decoder_start_id;
      j["is_encoder_decoder"] = true;
      if (model.family == HfFamily::Bart) {
        j["max_position_embeddings"] = c.max_positions;
        j["scale_embedding"] = c.scale_embedding;
        j["forced_eos_token_id"] = nullptr;
      } else {
        j["max_encoder_position_embeddings"] = c.max_positions;
        j["max_decoder_position_embeddings"] = c.decoder_max_positions > 0 ? c.decoder_max_positions : c.max_positions;
        j["attention_window"] = led_windows(c);
      }
      break;
    case HfFamily::T5:
      j["d_model"] = c.d_model;
      j["d_kv"] = c.head_dim();
      j["num_heads"] = c.heads;
      j["d_ff"] = c.d_ff;
      j["num_layers"] = c.encoder_layers;
      j["num_decoder_layers"] = c.decoder_layers;
      j["feed_forward_proj"] = c.ffn_gated ? "gated-" + (c.activation == "gelu_new" ? std::string("gelu") : c.activation)
                                           : c.activation;
      j["dense_act_fn"] = c.activation;
      j["is_gated_act"] = c.ffn_gated;
      j["dropout_rate"] = c.dropout;
      j["layer_norm_epsilon"] = c.norm_eps;
      j["scale_decoder_outputs"] = c.scale_decoder_outputs;
      j["relative_attention_num_buckets"] = ModelConfig::spec_of(c.encoder_attention, 0).bias.buckets;
      j["relative_attention_max_distance"] = ModelConfig::spec_of(c.encoder_attention, 0).bias.max_distance;
      j["eos_token_id"] = c.eos_id;
      j["decoder_start_token_id"] = c.decoder_start_id;
      j["is_encoder_decoder"] = true;
      break;
    case HfFamily::Gpt2:
      j["n_embd"] = c.d_model;
      j["n_head"] = c.heads;
      j["n_inner"] = c.d_ff;
      j["n_layer"] = c.decoder_layers;
      j["n_positions"] = c.max_positions;
      j["activation_function"] = c.activation;
      j["layer_norm_epsilon"] = c.norm_eps;
      j["resid_pdrop"] = j["embd_pdrop"] = c.dropout;
      j["attn_pdrop"] = c.attention_dropout;
      j["scale_attn_weights"] = c.scale_attention;
      j["bos_token_id"] = c.bos_id;
      j["eos_token_id"] = c.eos_id;
      break;
    case HfFamily::Bert:
      j["hidden_size"] = c.d_model;
      j["num_attention_heads"] = c.heads;
      j["intermediate_size"] = c.d_ff;
      j["num_hidden_layers"] = c.encoder_layers;
      j["max_position_embeddings"] = c.max_positions;
      j["type_vocab_size"] = c.token_types;
      j["hidden_act"] = c.activation;
      j["layer_norm_eps"] = c.norm_eps;
      j["hidden_dropout_prob"] = c.dropout;
      j["attention_probs_dropout_prob"] = c.attention_dropout;
      j["position_embedding_type"] = "absolute";
      if (c.num_labels > 0) {
        json labels = json::object();
        for (std::int64_t i = 0; i < c.num_labels; ++i) labels[std::to_string(i)] = "LABEL_" + std::to_string(i);
        j["id2label"] = labels;
      }
      break;
  }
  return j;
}

namespace {

// The model fields a config.json carries: what transformers will build must be what strata
// runs, field for field.
const char* const kExportedFields[] = {
    "architecture", "vocab_size", "d_model", "heads", "d_ff", "encoder_layers", "decoder_layers", "max_positions",
    "pre_norm", "tie_embeddings", "activation", "num_labels", "encoder_attention", "decoder_attention",
    "cross_attention"};

// strata::Error naming the first field of `model` that its config.json would not give back.
void check_exported_config(const HfModel& model) {
  const ModelConfig& c = model.config;
  HfImportOptions options;
  if (model.family == HfFamily::Led) options.global_tokens = attn::global_tokens(ModelConfig::spec_of(c.encoder_attention, 0));
  const json ours = c.to_json();
  const json back = hf_model_from_config(hf_config_of(model), "export", options).config.to_json();
  auto differs = [&](const std::string& field) {
    const bool unused = (field == "encoder_layers" && model.family == HfFamily::Gpt2) ||
                        (field == "decoder_layers" && model.family == HfFamily::Bert) ||
                        (field == "max_positions" && c.positions == "none");
    if (unused || ours.value(field, json()) == back.value(field, json())) return;
    throw Error("export: model." + field + " = " + ours.value(field, json()).dump() + " has no place in " +
                model.hf_class + "'s config.json, which gives " + back.value(field, json()).dump());
  };
  for (const char* field : kExportedFields) differs(field);
  for (const auto& [field, value] : ours.items())
    if (ModelConfig::pretrained_shape_field(field)) differs(field);
}

}  // namespace

HfModel hf_model_of(const ModelConfig& c) {
  refuse(c.prefix_length > 0, "prefix-tuning (model.prefix_length; export the base, keep the adapter file)");
  refuse(c.pal_size > 0, "a PAL beside each layer (model.pal_size)");
  refuse(c.decoder_hibrids.kind != attn::RelationKind::None, "HIBRIDS-DEC (model.decoder_hibrids)");
  refuse(c.copy, "the pointer-generator (model.copy)");
  refuse(c.section_encoder_layers > 0, "HIERENC's section encoder (model.section_encoder_layers)");
  refuse(c.section_relation_head, "MULTITASK's section relation classifier (model.section_relation_head)");
  HfModel model;
  if (c.architecture == "causal_lm") {
    refuse(!c.pre_norm || c.norm != "layer" || c.positions != "learned", "a causal LM other than GPT-2's shape");
    refuse(!c.decoder_attention.empty(), "a structured attention spec (model.decoder_attention)");
    model.family = HfFamily::Gpt2;
    model.hf_class = "GPT2LMHeadModel";
  } else if (c.architecture == "encoder") {
    refuse(c.pre_norm || c.norm != "layer" || c.positions != "learned", "an encoder other than BERT's shape");
    refuse(!c.encoder_attention.empty() || has_layout_specs(c), "a structured attention spec (model.encoder_attention)");
    refuse(c.num_labels > 0 && (c.head != EncoderHead::Sequence || !c.pooler),
           "a classification head other than BERT's pooled sequence head");
    model.family = HfFamily::Bert;
    model.hf_class = c.num_labels > 0 ? "BertForSequenceClassification" : "BertModel";
  } else if (c.architecture == "seq2seq" && c.norm == "rms") {
    model.family = HfFamily::T5;
    model.hf_class = "T5ForConditionalGeneration";
  } else if (c.architecture == "seq2seq" && c.global_projections) {
    model.family = HfFamily::Led;
    model.hf_class = "LEDForConditionalGeneration";
  } else if (c.architecture == "seq2seq") {
    refuse(c.pre_norm, "a pre-norm seq2seq model");
    refuse(!c.encoder_attention.empty() || has_layout_specs(c), "a structured attention spec");
    model.family = HfFamily::Bart;
    model.hf_class = "BartForConditionalGeneration";
  } else {
    throw Error("export: a " + c.architecture + " model has no Hugging Face equivalent (known: seq2seq as BART, "
                "T5 or LED; causal_lm as GPT-2; encoder as BERT)");
  }
  model.config = c;
  model.prefix = prefix_of(model.family, model.hf_class);
  check_exported_config(model);
  return model;
}


std::vector<std::pair<std::string, json>> decode_settings_from_generation_config(const json& generation,
                                                                                 const std::string& source,
                                                                                 bool encoder_decoder) {
  HfConfigReader r(generation, source);
  std::vector<std::pair<std::string, json>> out;
  out.emplace_back("decode.beam_size", r.get<std::int64_t>("num_beams", 1));
  out.emplace_back("decode.do_sample", r.get<bool>("do_sample", false));
  out.emplace_back("decode.length_penalty", r.get<double>("length_penalty", 1.0));
  out.emplace_back("decode.no_repeat_ngram_size", r.get<std::int64_t>("no_repeat_ngram_size", 0));
  out.emplace_back("decode.early_stopping", r.get<bool>("early_stopping", false));
  out.emplace_back("decode.top_k", r.get<std::int64_t>("top_k", 50));
  out.emplace_back("decode.top_p", r.get<double>("top_p", 1.0));
  out.emplace_back("decode.temperature", r.get<double>("temperature", 1.0));
  // transformers' max_length counts an encoder-decoder's start token; strata counts generated tokens.
  if (r.has("max_new_tokens")) {
    out.emplace_back("decode.max_length", r.get<std::int64_t>("max_new_tokens"));
  } else if (r.has("max_length")) {
    out.emplace_back("decode.max_length", r.get<std::int64_t>("max_length") - (encoder_decoder ? 1 : 0));
  }
  if (r.has("min_length")) out.emplace_back("decode.min_length", r.get<std::int64_t>("min_length") - (encoder_decoder ? 1 : 0));
  // Older configs: force_bos_token_to_be_generated forces bos_token_id.
  const bool legacy_bos = r.get<bool>("force_bos_token_to_be_generated", false);
  if (r.has("forced_bos_token_id")) {
    out.emplace_back("decode.forced_bos_id", r.get<std::int64_t>("forced_bos_token_id"));
  } else if (legacy_bos) {
    out.emplace_back("decode.forced_bos_id", r.get<std::int64_t>("bos_token_id"));
  }
  if (r.has("forced_eos_token_id")) {
    const std::int64_t forced = r.get<std::int64_t>("forced_eos_token_id");
    if (r.has("eos_token_id") && r.get<json>("eos_token_id") != json(forced))
      throw Error(source + ": field 'forced_eos_token_id' = " + std::to_string(forced) +
                  " is not eos_token_id; strata forces eos only");
    out.emplace_back("decode.forced_eos", true);
  }
  r.require("repetition_penalty", 1.0, "a repetition penalty");
  r.require("num_return_sequences", 1, "several sequences per input");
  r.require("num_beam_groups", 1, "diverse beam search");
  r.require("diversity_penalty", 0.0, "diverse beam search");
  r.require("bad_words_ids", json(), "banned word lists");
  r.finish();
  return out;
}

}  // namespace strata::models
