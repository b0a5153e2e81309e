#include "strata/recipes/designs.h"

#include <algorithm>

#include "strata/attn/patterns.h"
#include "strata/core/edit_distance.h"
#include "strata/core/error.h"
#include "strata/models/prefix_settings.h"
#include "strata/recipes/adapters.h"
#include "strata/train/run_config.h"

namespace strata::recipes {

namespace {

void declare_pattern_injection(ConfigSchema& schema) {
  schema.add("model.inject_patterns", std::string(),
             "patterns injected into attention heads (seed 003 §4.3), comma-separated: matching_token, "
             "intra_sentence, intra_context, previous_token, next_token, or names from model.pattern_definitions");
  schema.add("model.inject_heads", std::int64_t(0),
             "heads per layer that take a pattern (head h takes pattern h mod count); 0 = one head per pattern, -1 = every head");
  schema.add("model.inject_into", std::string("encoder"), "where patterns go: encoder (its heads) or pal (the PAL heads)");
  schema.add("model.pattern_definitions", std::string(),
             "user-defined patterns composed by name: JSON {\"name\": \"intra_sentence & matching_token\"} or a JSON file");
}

// model.inject_patterns (seed 003 §4.3): the spec that injects the listed patterns into
// model.inject_heads heads of every layer of model.inject_into, or nothing when no pattern is
// listed.
void apply_pattern_injection(const Config& run, models::ModelConfig& config) {
  const std::string list = run.get<std::string>("model.inject_patterns");
  const std::int64_t patterned = run.get<std::int64_t>("model.inject_heads");
  const std::string target = run.get<std::string>("model.inject_into");
  if (target != "encoder" && target != "pal")
    throw Error("model.inject_into: unknown target '" + target + "' (known: encoder, pal)");
  if (list.find_first_not_of(" \t,") == std::string::npos) {
    if (patterned != 0) throw Error("model.inject_heads: " + std::to_string(patterned) + " heads, but model.inject_patterns lists no pattern");
    return;
  }
  attn::PatternSet known;
  const nlohmann::json definitions = json_setting(run.get<std::string>("model.pattern_definitions"), "model.pattern_definitions");
  if (!definitions.is_null()) known.define(definitions);
  std::vector<attn::Pattern> patterns;
  try {
    patterns = known.parse_list(list);
  } catch (const Error& e) {
    throw Error(std::string("model.inject_patterns: ") + e.what());
  }
  const bool pal = target == "pal";
  const std::int64_t heads = pal ? config.pal_heads : config.heads;
  const std::int64_t k = patterned == 0 ? static_cast<std::int64_t>(patterns.size()) : patterned < 0 ? heads : patterned;
  if (k > heads)
    throw Error("model.inject_heads: " + std::to_string(k) + " patterned heads, but each " + (pal ? "PAL" : "layer") +
                " has " + std::to_string(heads) + " heads");
  std::vector<attn::LayerSpec>& specs = pal ? config.pal_attention : config.encoder_attention;
  if (!specs.empty())
    throw Error("model.inject_patterns: model." + std::string(pal ? "pal_attention" : "encoder_attention") +
                " is set too; give one or the other");
  try {
    specs = {attn::inject_patterns(patterns, k, heads)};
  } catch (const Error& e) {
    throw Error(std::string("model.inject_patterns: ") + e.what());
  }
}


// Seed 000's prompt designs (§4): UniBlock / HierBlock blocking of prefixes and TruncSA /
// SoftSA sparsity (and their hierarchical forms), compiled together because they share the
// layers' specs (hierblock-softsa sets both on the same heads).
void declare_prefix_attention(ConfigSchema& schema) {
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

void apply_prefix_attention(const Config& run, models::ModelConfig& config) {
  // Blocked prefixes read each source token's segment from the layout, which data.segments cuts.
  const std::int64_t segments = run.get<std::int64_t>("data.segments");
  if (config.prefix_encoder_blocks > 1 && segments != 0 && segments != config.prefix_encoder_blocks)
    throw Error("data.segments = " + std::to_string(segments) + " but model.prefix_encoder_blocks = " +
                std::to_string(config.prefix_encoder_blocks) +
                ": the encoder's prefix groups are read by the layout's segments, so the two must agree "
                "(leave data.segments at 0 to follow the model)");
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
    const std::int64_t split = models::hierarchy_split(config, layers);
    const std::vector<bool> with_prefix = models::prefix_layers(config, layers);
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
  if (config.decoder_layers > 0 && config.architecture == "seq2seq")
    compile(config.decoder_attention, "decoder_attention", config.decoder_layers, config.prefix_decoder_blocks, false);
}


}  // namespace

const std::vector<Design>& designs() {
  static const std::vector<Design> all = {
      {"pattern_injection", "003 §4.3", "patterns injected into attention heads as masks or fixed heads",
       declare_pattern_injection, apply_pattern_injection},
      {"prefix_attention", "000 §4", "UniBlock / HierBlock prefix blocking and TruncSA / SoftSA sparse attention",
       declare_prefix_attention, apply_prefix_attention, {"model.prefix_encoder_blocks", "model.prefix_decoder_blocks"}},
  };
  return all;
}

const Design& find_design(const std::string& name) {
  std::vector<std::string> names;
  for (const Design& design : designs()) {
    if (design.name == name) return design;
    names.push_back(design.name);
  }
  const auto suggestion = closest_match(name, names);
  throw Error("unknown design '" + name + "'" + (suggestion ? ", did you mean '" + *suggestion + "'?" : std::string()));
}

std::vector<std::string> design_keys(const Design& design) {
  ConfigSchema schema;
  design.declare(schema);
  std::vector<std::string> keys;
  for (const ConfigKey& key : schema.keys()) keys.push_back(key.key);
  keys.insert(keys.end(), design.reads.begin(), design.reads.end());
  return keys;
}

ConfigSchema run_schema() {
  ConfigSchema schema = train::run_schema();
  for (const Design& design : designs()) design.declare(schema);
  declare_adapter_keys(schema);
  return schema;
}

models::ModelConfig model_config(const Config& run) {
  models::ModelConfig config = models::ModelConfig::from_config(run);
  for (const Design& design : designs()) design.apply(run, config);
  return config;
}

}  // namespace strata::recipes
