#include "strata/models/model_config.h"

#include <algorithm>
#include <type_traits>

#include "strata/models/prefix_settings.h"
#include "strata/core/config.h"
#include "strata/core/error.h"
#include "strata/core/strings.h"

namespace strata::models {

namespace {

// Whether a field is set by users in [model] (true) or taken from the tokenizer when a run
// starts (false); both are saved in config.json.
enum class Origin { User, Tokenizer };

// Every scalar field once, so JSON, the schema and the run config cannot drift apart.
template <class C, class F>
void visit_fields(C& c, F&& f) {
  f("vocab_size", c.vocab_size, Origin::Tokenizer, "token vocabulary size");
  f("d_model", c.d_model, Origin::User, "hidden size");
  f("heads", c.heads, Origin::User, "attention heads per layer (must divide d_model)");
  f("d_ff", c.d_ff, Origin::User, "feed-forward inner size");
  f("encoder_layers", c.encoder_layers, Origin::User, "encoder layers (seq2seq, encoder)");
  f("decoder_layers", c.decoder_layers, Origin::User, "decoder layers (seq2seq, causal_lm)");
  f("max_positions", c.max_positions, Origin::User, "learned positions: the longest input");
  f("dropout", c.dropout, Origin::User, "dropout on embeddings and residual branches");
  f("attention_dropout", c.attention_dropout, Origin::User, "dropout on attention probabilities");
  f("activation_dropout", c.activation_dropout, Origin::User, "dropout after the FFN activation");
  f("pre_norm", c.pre_norm, Origin::User, "LayerNorm before each block (GPT-2) instead of after (BART)");
  f("tie_embeddings", c.tie_embeddings, Origin::User, "output projection shares the token embedding");
  f("activation", c.activation, Origin::User, "FFN activation: gelu or relu");
  f("attention_kernel", c.attention_kernel, Origin::User, "attention kernel: fused (tiled, block-sparse) or reference (dense libtorch ops)");
  f("num_labels", c.num_labels, Origin::User, "encoder: classes of the classification head");
  f("pal_size", c.pal_size, Origin::User, "encoder: hidden size of a projected attention layer (PAL) beside each layer; 0 = none");
  f("pal_heads", c.pal_heads, Origin::User, "encoder: heads of each PAL (must divide pal_size)");
  f("prefix_length", c.prefix_length, Origin::User, "seq2seq prefix-tuning (seed 000): prefix keys/values per layer; 0 = none");
  f("prefix_hidden", c.prefix_hidden, Origin::User, "prefix-tuning: hidden size of the reparameterising MLP");
  f("prefix_layers", c.prefix_layers, Origin::User,
    "prefix-tuning: layers of each stack with prefixes: all, low, top (split at model.hierarchy_split) or indices from 0, e.g. \"0,5\"");
  f("prefix_encoder_blocks", c.prefix_encoder_blocks, Origin::User,
    "prefix blocking (seed 000 §4.1): input segments = prefix groups in the encoder; 1 = no blocking");
  f("prefix_decoder_blocks", c.prefix_decoder_blocks, Origin::User, "prefix blocking: output segments = prefix groups in the decoder");
  f("prefix_decoder_segment", c.prefix_decoder_segment, Origin::User,
    "prefix blocking: output positions per decoder segment (the last segment takes the rest)");
  f("hierarchy_split", c.hierarchy_split, Origin::User,
    "hierarchical designs (HierBlock, HTruncSA, HSoftSA): layers below this one are the lower ones; 0 = half of each stack, rounded up");
  f("bst_window", c.bst_window, Origin::User, "bst_lm: W, the tokens of a block (SLIDE attends to its own block and the one before)");
  f("bst_memory", c.bst_memory, Origin::User,
    "bst_lm: how a block reads the one before: window (SLIDE, trained through) or xl (a Transformer-XL cache, no gradient through it)");
  f("bst_layers", c.bst_layers, Origin::User, "bst_lm: the BST layers, indices from 0 (e.g. \"1,3\"); the rest are SLIDE layers; \"\" = none");
  f("bst_context", c.bst_context, Origin::User, "bst_lm: context states: sh (single-head), mh (multi-head), mf (multi-filter), or recurrent (the Block-Recurrent Transformer baseline: bst_filters state vectors carried block to block, no SSM)");
  f("bst_kernel", c.bst_kernel, Origin::User, "bst_lm: the SSM kernel: s4d or unstructured (Eq. 5.4)");
  f("bst_states", c.bst_states, Origin::User, "bst_lm: S4D's state size N (N / 2 complex modes)");
  f("bst_filters", c.bst_filters, Origin::User, "bst_lm: S, the context states a block reads under mf (recurrent: the state vectors)");
  f("bst_filter_length", c.bst_filter_length, Origin::User,
    "bst_lm: the training length the unstructured kernel's t in [0, 1] spans");
  f("bst_ssm_width", c.bst_ssm_width, Origin::User, "bst_lm: the SSM's channels; 0 = d_model / 4 (mf: d_model / 8)");
  f("tasks", c.tasks, Origin::User,
    "ca_mtl: its tasks and their classes, \"name:classes,...\" (1 = regression); \"\" = from the training suite");
  f("camtl_attention", c.camtl_attention, Origin::User,
    "ca_mtl: conditional attention bias: block (block-diagonal), full (one L x L block, FBA), hard (block, masked to the block) or none");
  f("camtl_blocks", c.camtl_blocks, Origin::User, "ca_mtl: N, the bias's blocks; 0 = d_model / max_positions (the thesis's N = d / L)");
  f("camtl_alignment", c.camtl_alignment, Origin::User, "ca_mtl: conditional alignment (FiLM of the embeddings)");
  f("camtl_cln", c.camtl_cln, Origin::User, "ca_mtl: conditional LayerNorms in the upper half of the layers (from hierarchy_split)");
  f("camtl_bottleneck", c.camtl_bottleneck, Origin::User, "ca_mtl: conditional bottleneck in the top layer");
  f("lstm_hidden", c.lstm_hidden, Origin::User, "sent_clf, sent_ptr: units per direction of the token- and sentence-level BiLSTMs");
  f("lstm_layers", c.lstm_layers, Origin::User, "sent_clf, sent_ptr: layers of each BiLSTM");
  f("norm", c.norm, Origin::User, "block norm: layer (LayerNorm) or rms (scale only, T5)");
  f("norm_eps", c.norm_eps, Origin::User, "the norms' epsilon");
  f("positions", c.positions, Origin::User, "position embeddings: learned, or none (a relative-position bias in the attention spec instead)");
  f("position_offset", c.position_offset, Origin::User, "rows of the position table before position 0 (BART: 2)");
  f("decoder_max_positions", c.decoder_max_positions, Origin::User, "the decoder's longest input when it differs from max_positions; 0 = the same");
  f("scale_embedding", c.scale_embedding, Origin::User, "token embeddings times sqrt(d_model)");
  f("scale_attention", c.scale_attention, Origin::User, "attention scores divided by sqrt(head dim) (T5: false)");
  f("linear_bias", c.linear_bias, Origin::User, "biases in the attention and feed-forward projections (T5: false)");
  f("final_logits_bias", c.final_logits_bias, Origin::User, "a fixed bias added to the logits (BART, LED)");
  f("scale_decoder_outputs", c.scale_decoder_outputs, Origin::User, "decoder output times d_model^-0.5 before the tied output projection (T5)");
  f("share_relation_bias", c.share_relation_bias, Origin::User, "each stack's layers share its first layer's relation-bias table (T5)");
  f("token_types", c.token_types, Origin::User, "encoder: rows of a token-type (segment) embedding (BERT: 2); 0 = none");
  f("pooler", c.pooler, Origin::User, "encoder: the sequence head reads tanh(dense(first token)) (BERT's pooler)");
  f("global_projections", c.global_projections, Origin::User, "encoder: global tokens attend through their own projections (Longformer, LED)");
  f("ffn_gated", c.ffn_gated, Origin::User, "feed-forward block act(fc1 x) * fc_gate(x) (T5 v1.1, FLAN-T5)");
  f("section_encoder_layers", c.section_encoder_layers, Origin::User,
    "seq2seq HIERENC (seed 001 §5.2, after Rohde et al. 2021): Transformer layers over each section's mean-pooled "
    "token states after the encoder; the decoder cross-attends to the tokens, then the sections; 0 = none");
  f("section_relation_head", c.section_relation_head, Origin::User,
    "seq2seq MULTITASK (seed 001 §5.2): a bilinear classifier predicts each section pair's HIBRIDS_S relation "
    "(parent, child, sibling, ...) from the encoder's mean-pooled section vectors; its mean cross-entropy is added "
    "to the summary's loss with equal weight");
  f("copy", c.copy, Origin::User,
    "seq2seq: a pointer-generator: each output token mixes the vocabulary distribution with a copy of the source's "
    "tokens, weighted by a copy attention, through a learned gate (See et al. 2017)");
  f("marker_id", c.marker_id, Origin::Tokenizer, "encoder marker head: the marker token id");
  f("segment_markers", c.segment_markers, Origin::Tokenizer,
    "causal_lm: token ids that open a segment, in segment order (the TLM's part markers); \"\" = none");
  f("pad_id", c.pad_id, Origin::Tokenizer, "padding token id");
  f("bos_id", c.bos_id, Origin::Tokenizer, "start-of-sequence token id");
  f("eos_id", c.eos_id, Origin::Tokenizer, "end-of-sequence token id");
  f("decoder_start_id", c.decoder_start_id, Origin::Tokenizer, "seq2seq: first decoder input");
}

EncoderHead parse_head(const std::string& name, const std::string& where) {
  if (name == "token") return EncoderHead::Token;
  if (name == "marker") return EncoderHead::Marker;
  if (name == "sequence") return EncoderHead::Sequence;
  throw Error(where + ": unknown head '" + name + "' (known: token, marker, sequence)");
}

// The structured-attention fields: config key, member, and help.
template <class C, class F>
void visit_specs(C& c, F&& f) {
  f("encoder_attention", c.encoder_attention, "encoder self-attention");
  f("decoder_attention", c.decoder_attention, "decoder self-attention");
  f("cross_attention", c.cross_attention, "decoder cross-attention");
  f("pal_attention", c.pal_attention, "PAL attention");
}

// The tree relations that sit outside the layer specs (HIBRIDS-DEC; HIBRIDS in HIERENC's
// section layers): name and help for the run key `model.NAME` and the config.json field.
template <class C, class F>
void visit_relations(C& c, F&& f) {
  f("decoder_hibrids", c.decoder_hibrids,
    "HIBRIDS-DEC (seed 001 Eq. 3): \"\" for off, or a relation as JSON, e.g. "
    "{\"kind\": \"hibrids\", \"max_path\": 4, \"max_level\": 2}");
  f("section_encoder_hibrids", c.section_encoder_hibrids,
    "HIBRIDS in HIERENC's section layers (seed 001 Table 5): \"\" for off, or a tree relation as JSON; the "
    "sections' self-attention adds its learned bias for each pair's relation (needs model.section_encoder_layers)");
}

std::vector<attn::LayerSpec> specs_from(const nlohmann::json& json, const std::string& key) {
  if (json.is_null()) return {};
  try {
    return attn::layer_specs_from_json(json);
  } catch (const Error& e) {
    throw Error(key + ": " + e.what());
  }
}

attn::Relation relation_from(const nlohmann::json& json, const std::string& key) {
  if (json.is_null()) return {};
  try {
    return attn::relation_from_json(json);
  } catch (const Error& e) {
    throw Error(key + ": " + e.what());
  }
}

}  // namespace

std::vector<bool> layer_indices(const std::string& field, const std::string& text, std::int64_t layers) {
  std::vector<bool> out(static_cast<std::size_t>(layers), false);
  if (trim(text).empty()) return out;
  for (std::size_t begin = 0; begin <= text.size();) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string index(trim(std::string_view(text).substr(begin, end - begin)));
    begin = end + 1;
    const std::optional<std::int64_t> parsed = parse_int64(index);
    if (!parsed) throw Error(field + ": '" + text + "' is not a list of layer indices such as \"0,5\"");
    const std::int64_t i = *parsed;
    if (i < 0 || i >= layers)
      throw Error(field + ": layer " + index + " is outside the stack's " + std::to_string(layers) +
                  " layers (indices from 0)");
    out[static_cast<std::size_t>(i)] = true;
  }
  return out;
}

std::vector<std::int64_t> segment_marker_ids(const ModelConfig& config) {
  std::vector<std::int64_t> ids;
  const std::string& text = config.segment_markers;
  if (trim(text).empty()) return ids;
  for (std::size_t begin = 0; begin <= text.size();) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::optional<std::int64_t> id = parse_int64(trim(std::string_view(text).substr(begin, end - begin)));
    begin = end + 1;
    if (!id || *id < 0 || *id >= config.vocab_size)
      throw Error("model.segment_markers: '" + text + "' is not a list of token ids below the vocabulary size " +
                  std::to_string(config.vocab_size) + " such as \"5,6,7,8\"");
    ids.push_back(*id);
  }
  return ids;
}

attn::LayerSpec ModelConfig::spec_of(const std::vector<attn::LayerSpec>& specs, std::int64_t layer) {
  if (specs.empty()) return {};
  return specs.size() == 1 ? specs[0] : specs.at(static_cast<std::size_t>(layer));
}

bool ModelConfig::pretrained_shape_field(std::string_view name) {
  for (const char* field : {"norm", "norm_eps", "positions", "position_offset", "decoder_max_positions",
                            "scale_embedding", "scale_attention", "linear_bias", "final_logits_bias",
                            "scale_decoder_outputs", "share_relation_bias", "token_types", "pooler",
                            "global_projections", "ffn_gated"})
    if (name == field) return true;
  return false;
}

std::string encoder_head_name(EncoderHead head) {
  switch (head) {
    case EncoderHead::Token: return "token";
    case EncoderHead::Marker: return "marker";
    case EncoderHead::Sequence: return "sequence";
  }
  return "?";
}

void ModelConfig::check() const {
  auto positive = [](const char* field, std::int64_t value) {
    if (value <= 0) throw Error(std::string("model.") + field + ": must be positive, got " + std::to_string(value));
  };
  positive("vocab_size", vocab_size);
  positive("d_model", d_model);
  positive("heads", heads);
  positive("d_ff", d_ff);
  positive("max_positions", max_positions);
  positive("lstm_hidden", lstm_hidden);
  positive("lstm_layers", lstm_layers);
  segment_marker_ids(*this);
  if (d_model % heads != 0)
    throw Error("model.heads: " + std::to_string(heads) + " does not divide model.d_model " + std::to_string(d_model));
  if (norm != "layer" && norm != "rms") throw Error("model.norm: '" + norm + "' is not a norm (known: layer, rms)");
  if (!(norm_eps > 0)) throw Error("model.norm_eps: must be positive");
  if (positions != "learned" && positions != "none")
    throw Error("model.positions: '" + positions + "' is not a kind of positions (known: learned, none)");
  if (position_offset < 0) throw Error("model.position_offset: must be >= 0");
  if (decoder_max_positions < 0) throw Error("model.decoder_max_positions: must be >= 0 (0 = max_positions)");
  if (token_types < 0) throw Error("model.token_types: must be >= 0 (0 = none)");
  if (num_labels < 0) throw Error("model.num_labels: must be >= 0");
  // Far past any real model; a config that claims more is a mistake (and checking its
  // per-layer settings would take minutes).
  constexpr std::int64_t kMaxLayers = 1000;
  for (const auto& [field, layers] : {std::pair{"encoder_layers", encoder_layers}, {"decoder_layers", decoder_layers}})
    if (layers > kMaxLayers)
      throw Error(std::string("model.") + field + ": " + std::to_string(layers) + " is more than " +
                  std::to_string(kMaxLayers) + " layers");
  if (architecture.empty()) throw Error("model.architecture: empty (known: `strata train --help` lists them)");
  for (const auto& [field, p] : {std::pair{"dropout", dropout}, {"attention_dropout", attention_dropout},
                                 {"activation_dropout", activation_dropout}})
    if (p < 0 || p >= 1) throw Error(std::string("model.") + field + ": must be in [0, 1), got " + std::to_string(p));
  auto layers_of = [&](const std::vector<attn::LayerSpec>& specs, const char* field, std::int64_t layers) {
    if (specs.size() > 1 && static_cast<std::int64_t>(specs.size()) != layers)
      throw Error(std::string("model.") + field + ": " + std::to_string(specs.size()) +
                  " layer specs for " + std::to_string(layers) + " layers (give one spec for every layer, or one per layer)");
  };
  layers_of(encoder_attention, "encoder_attention", encoder_layers);
  layers_of(decoder_attention, "decoder_attention", decoder_layers);
  layers_of(cross_attention, "cross_attention", decoder_layers);
  layers_of(pal_attention, "pal_attention", encoder_layers);
  if (pal_size < 0) throw Error("model.pal_size: must be 0 (no PAL) or positive, got " + std::to_string(pal_size));
  if (pal_size > 0) {
    positive("pal_heads", pal_heads);
    if (pal_size % pal_heads != 0)
      throw Error("model.pal_heads: " + std::to_string(pal_heads) + " does not divide model.pal_size " + std::to_string(pal_size));
  } else if (!pal_attention.empty()) {
    throw Error("model.pal_attention: set, but model.pal_size is 0 (no PAL)");
  }
  check_prefix_design(*this);
  for (std::int64_t i = 0; i < decoder_layers; ++i)
    if (attn::is_tree_relation(spec_of(cross_attention, i).bias.kind))
      throw Error("model.cross_attention: a tree relation needs the query's section, which summary tokens "
                  "do not have; HIBRIDS on the decoder is model.decoder_hibrids");
  visit_relations(*this, [](const char* name, const attn::Relation& relation, const char*) {
    if (relation.kind == attn::RelationKind::None) return;
    if (!attn::is_tree_relation(relation.kind))
      throw Error(std::string("model.") + name + ": needs a tree relation (hibrids or hibrids_selected), got " +
                  std::string(attn::relation_name(relation.kind)));
    attn::LayerSpec probe;
    probe.bias = relation;
    attn::validate(probe);
  });
  if (decoder_hibrids.kind != attn::RelationKind::None && decoder_layers < 2)
    throw Error("model.decoder_hibrids: needs at least 2 decoder layers");
  if (section_encoder_hibrids.kind != attn::RelationKind::None && section_encoder_layers <= 0)
    throw Error("model.section_encoder_hibrids: set, but model.section_encoder_layers is 0 (no HIERENC)");
  for (const auto& [field, id] : {std::pair{"pad_id", pad_id}, {"bos_id", bos_id}, {"eos_id", eos_id},
                                  {"decoder_start_id", decoder_start_id}})
    if (id < 0 || id >= vocab_size)
      throw Error(std::string("model.") + field + ": " + std::to_string(id) + " is outside the vocabulary of " +
                  std::to_string(vocab_size));
}

nlohmann::json ModelConfig::to_json() const {
  nlohmann::json json;
  json["architecture"] = architecture;
  json["head"] = encoder_head_name(head);
  visit_fields(*this, [&](const char* name, const auto& value, Origin, const char*) { json[name] = value; });
  visit_specs(*this, [&](const char* name, const std::vector<attn::LayerSpec>& specs, const char*) {
    if (specs.empty()) return;
    nlohmann::json list = nlohmann::json::array();
    for (const attn::LayerSpec& spec : specs) list.push_back(attn::to_json(spec));
    json[name] = list;
  });
  visit_relations(*this, [&](const char* name, const attn::Relation& relation, const char*) {
    if (relation.kind != attn::RelationKind::None) json[name] = attn::to_json(relation);
  });
  return json;
}

ModelConfig ModelConfig::from_json(const nlohmann::json& json, const std::string& source) {
  if (!json.is_object()) throw Error(source + ": model config: expected a JSON object");
  auto field = [&](const char* name) -> const nlohmann::json& {
    if (!json.contains(name)) throw Error(source + ": model config: missing field '" + std::string(name) + "'");
    return json.at(name);
  };
  ModelConfig config;
  try {
    config.architecture = field("architecture").get<std::string>();
    config.head = parse_head(field("head").get<std::string>(), source);
    visit_fields(config, [&](const char* name, auto& value, Origin, const char*) {
      // Fields added after config.json files already existed keep their defaults when absent.
      const std::string_view n = name;
      const bool added_later = n == "pal_size" || n == "pal_heads" || n.starts_with("prefix_") || n == "hierarchy_split" ||
                               n.starts_with("bst_") || n == "tasks" || n.starts_with("camtl_") || n == "segment_markers" ||
                               ModelConfig::pretrained_shape_field(n);
      if (added_later && !json.contains(name)) return;
      value = field(name).get<std::remove_reference_t<decltype(value)>>();
    });
    // Optional: configs written before structured attention have none.
    visit_specs(config, [&](const char* name, std::vector<attn::LayerSpec>& specs, const char*) {
      if (json.contains(name)) specs = specs_from(json.at(name), source + ": " + name);
    });
    visit_relations(config, [&](const char* name, attn::Relation& relation, const char*) {
      if (json.contains(name)) relation = relation_from(json.at(name), source + ": " + name);
    });
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": model config: " + e.what());
  }
  config.check();
  return config;
}

void ModelConfig::declare(ConfigSchema& schema) {
  const ModelConfig defaults;
  schema.add("model.architecture", defaults.architecture,
             "a registered architecture: seq2seq (BART-like), causal_lm (GPT-2-like), encoder (BERT-like), ... "
             "(`strata train --help` lists them)");
  schema.add("model.head", encoder_head_name(defaults.head), "encoder head: token, marker or sequence");
  visit_fields(defaults, [&](const char* name, const auto& value, Origin origin, const char* help) {
    if (origin != Origin::User) return;
    schema.add(std::string("model.") + name, value, help);
  });
  visit_specs(defaults, [&](const char* name, const auto&, const char* what) {
    schema.add(std::string("model.") + name, std::string(),
               std::string("structured ") + what + " (docs/attention.md): \"\" for plain, a JSON spec " +
                   "(one for every layer, or an array with one per layer), or the path of a JSON file");
  });
  visit_relations(defaults, [&](const char* name, const attn::Relation&, const char* help) {
    schema.add(std::string("model.") + name, std::string(), help);
  });
}

ModelConfig ModelConfig::from_config(const Config& run) {
  ModelConfig config;
  config.architecture = run.get<std::string>("model.architecture");
  config.head = parse_head(run.get<std::string>("model.head"), "model.head");
  visit_fields(config, [&](const char* name, auto& value, Origin origin, const char*) {
    if (origin == Origin::User) value = run.get<std::decay_t<decltype(value)>>(std::string("model.") + name);
  });
  visit_specs(config, [&](const char* name, std::vector<attn::LayerSpec>& specs, const char*) {
    const std::string key = std::string("model.") + name;
    specs = specs_from(json_setting(run.get<std::string>(key), key), key);
  });
  visit_relations(config, [&](const char* name, attn::Relation& relation, const char*) {
    const std::string key = std::string("model.") + name;
    relation = relation_from(json_setting(run.get<std::string>(key), key), key);
  });
  return config;
}

}  // namespace strata::models

namespace strata::models {

void check_stacks(const ModelConfig& config, const std::string& architecture, const Stacks& stacks) {
  config.check();
  if (config.architecture != architecture)
    throw Error("model.architecture: a " + architecture + " model was asked for, the config says '" +
                config.architecture + "'");
  auto needs = [&](bool present, const char* field, std::int64_t layers) {
    if (present && layers <= 0)
      throw Error(std::string("model.") + field + ": must be positive, got " + std::to_string(layers));
  };
  needs(stacks.encoder, "encoder_layers", config.encoder_layers);
  needs(stacks.decoder, "decoder_layers", config.decoder_layers);
  if (config.pal_size > 0 && !stacks.pals)
    throw Error("model.pal_size: PALs belong to encoder models, this model is a " + architecture);
  if (config.prefix_length > 0 && !stacks.prefixes)
    throw Error("model.prefix_length: prefix-tuning is built for seq2seq models, this model is a " + architecture);
  if (config.decoder_hibrids.kind != attn::RelationKind::None && !stacks.cross_attention)
    throw Error("model.decoder_hibrids: needs a seq2seq model (cross-attention), this model is a " + architecture);
  if (config.section_encoder_layers > 0 && !stacks.cross_attention)
    throw Error("model.section_encoder_layers: HIERENC needs a seq2seq model (cross-attention), this model is a " +
                architecture);
}

}  // namespace strata::models
