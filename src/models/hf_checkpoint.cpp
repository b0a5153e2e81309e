#include "strata/models/hf_checkpoint.h"

#include <torch/torch.h>

#include <algorithm>
#include <optional>
#include <regex>
#include <set>
#include <tuple>

#include "strata/core/error.h"

namespace strata::models {

namespace {

// ---- tensor names ---------------------------------------------------------------------------

// How a strata tensor sits in the checkpoint: `hf` is its name there; the checkpoint's
// tensor is sliced to `part` of `parts` along its last dimension (GPT-2's packed q, k, v),
// then transposed (Conv1D weights, T5's bias table) to give strata's.
struct Placement {
  std::string hf;
  bool transpose = false;
  int part = -1, parts = 1;
};

struct Rule {
  std::regex strata;
  std::string hf;  // std::regex_replace format: $1 is the layer index
  bool transpose = false;
  int part = -1, parts = 1;
};

std::vector<Rule> rules_of(const HfModel& model) {
  const std::string p = model.prefix;
  auto r = [](const std::string& strata, const std::string& hf, bool transpose = false, int part = -1) {
    return Rule{std::regex("^" + strata + "$"), hf, transpose, part, part >= 0 ? 3 : 1};
  };
  switch (model.family) {
    case HfFamily::Bart:
    case HfFamily::Led: {
      std::vector<Rule> rules;
      if (model.family == HfFamily::Led) {
        for (const auto& [ours, theirs] : {std::pair{"q_proj", "query"}, {"k_proj", "key"}, {"v_proj", "value"},
                                           {"query_global", "query_global"}, {"key_global", "key_global"},
                                           {"value_global", "value_global"}})
          rules.push_back(r(std::string(R"(encoder\.layers\.(\d+)\.self_attn\.)") + ours + R"(\.(weight|bias))",
                            p + "encoder.layers.$1.self_attn.longformer_self_attn." + theirs + ".$2"));
        rules.push_back(r(R"(encoder\.layers\.(\d+)\.self_attn\.out_proj\.(weight|bias))",
                          p + "encoder.layers.$1.self_attn.output.$2"));
      }
      rules.push_back(r("final_logits_bias", "final_logits_bias"));
      rules.push_back(r(R"(lm_head\.weight)", "lm_head.weight"));
      rules.push_back(r(R"((.*))", p + "$1"));  // strata's seq2seq names are BART's
      return rules;
    }
    case HfFamily::T5: {
      // A gated block's two input maps are wi_0 (through the activation) and wi_1.
      const std::string wi = model.config.ffn_gated ? "wi_0" : "wi";
      return {
          r(R"(encoder\.layers\.(\d+)\.fc_gate\.weight)", "encoder.block.$1.layer.1.DenseReluDense.wi_1.weight"),
          r(R"(decoder\.layers\.(\d+)\.fc_gate\.weight)", "decoder.block.$1.layer.2.DenseReluDense.wi_1.weight"),
          r(R"((encoder|decoder)\.layers\.(\d+)\.self_attn\.(q|k|v)_proj\.weight)", "$1.block.$2.layer.0.SelfAttention.$3.weight"),
          r(R"((encoder|decoder)\.layers\.(\d+)\.self_attn\.out_proj\.weight)", "$1.block.$2.layer.0.SelfAttention.o.weight"),
          r(R"((encoder|decoder)\.layers\.(\d+)\.self_attn\.relation_bias)",
            "$1.block.$2.layer.0.SelfAttention.relative_attention_bias.weight", true),
          r(R"((encoder|decoder)\.layers\.(\d+)\.self_attn_layer_norm\.weight)", "$1.block.$2.layer.0.layer_norm.weight"),
          r(R"(decoder\.layers\.(\d+)\.encoder_attn\.(q|k|v)_proj\.weight)", "decoder.block.$1.layer.1.EncDecAttention.$2.weight"),
          r(R"(decoder\.layers\.(\d+)\.encoder_attn\.out_proj\.weight)", "decoder.block.$1.layer.1.EncDecAttention.o.weight"),
          r(R"(decoder\.layers\.(\d+)\.encoder_attn_layer_norm\.weight)", "decoder.block.$1.layer.1.layer_norm.weight"),
          r(R"(encoder\.layers\.(\d+)\.fc1\.weight)", "encoder.block.$1.layer.1.DenseReluDense." + wi + ".weight"),
          r(R"(encoder\.layers\.(\d+)\.fc2\.weight)", "encoder.block.$1.layer.1.DenseReluDense.wo.weight"),
          r(R"(encoder\.layers\.(\d+)\.final_layer_norm\.weight)", "encoder.block.$1.layer.1.layer_norm.weight"),
          r(R"(decoder\.layers\.(\d+)\.fc1\.weight)", "decoder.block.$1.layer.2.DenseReluDense." + wi + ".weight"),
          r(R"(decoder\.layers\.(\d+)\.fc2\.weight)", "decoder.block.$1.layer.2.DenseReluDense.wo.weight"),
          r(R"(decoder\.layers\.(\d+)\.final_layer_norm\.weight)", "decoder.block.$1.layer.2.layer_norm.weight"),
          r(R"((encoder|decoder)\.layer_norm\.weight)", "$1.final_layer_norm.weight"),
          r(R"(shared\.weight)", "shared.weight"),
          r(R"(lm_head\.weight)", "lm_head.weight"),
      };
    }
    case HfFamily::Gpt2: {
      const std::string h = p + "h.$1.";
      std::vector<Rule> rules;
      for (int part = 0; part < 3; ++part) {
        const std::string name = std::string(1, "qkv"[part]) + "_proj";
        rules.push_back(r(R"(decoder\.layers\.(\d+)\.self_attn\.)" + name + R"(\.weight)", h + "attn.c_attn.weight", true, part));
        rules.push_back(r(R"(decoder\.layers\.(\d+)\.self_attn\.)" + name + R"(\.bias)", h + "attn.c_attn.bias", false, part));
      }
      for (const Rule& rule : {r(R"(decoder\.layers\.(\d+)\.self_attn\.out_proj\.weight)", h + "attn.c_proj.weight", true),
                               r(R"(decoder\.layers\.(\d+)\.self_attn\.out_proj\.bias)", h + "attn.c_proj.bias"),
                               r(R"(decoder\.layers\.(\d+)\.self_attn_layer_norm\.(weight|bias))", h + "ln_1.$2"),
                               r(R"(decoder\.layers\.(\d+)\.final_layer_norm\.(weight|bias))", h + "ln_2.$2"),
                               r(R"(decoder\.layers\.(\d+)\.fc1\.weight)", h + "mlp.c_fc.weight", true),
                               r(R"(decoder\.layers\.(\d+)\.fc1\.bias)", h + "mlp.c_fc.bias"),
                               r(R"(decoder\.layers\.(\d+)\.fc2\.weight)", h + "mlp.c_proj.weight", true),
                               r(R"(decoder\.layers\.(\d+)\.fc2\.bias)", h + "mlp.c_proj.bias"),
                               r(R"(decoder\.layer_norm\.(weight|bias))", p + "ln_f.$1"),
                               r(R"(decoder\.embed_positions\.weight)", p + "wpe.weight"),
                               r(R"(embed_tokens\.weight)", p + "wte.weight"), r(R"(lm_head\.weight)", "lm_head.weight")})
        rules.push_back(rule);
      return rules;
    }
    case HfFamily::Bert: {
      const std::string l = p + "encoder.layer.$1.";
      return {
          r(R"(embed_tokens\.weight)", p + "embeddings.word_embeddings.weight"),
          r(R"(encoder\.embed_positions\.weight)", p + "embeddings.position_embeddings.weight"),
          r(R"(encoder\.embed_token_types\.weight)", p + "embeddings.token_type_embeddings.weight"),
          r(R"(encoder\.layernorm_embedding\.(weight|bias))", p + "embeddings.LayerNorm.$1"),
          r(R"(encoder\.layers\.(\d+)\.self_attn\.q_proj\.(weight|bias))", l + "attention.self.query.$2"),
          r(R"(encoder\.layers\.(\d+)\.self_attn\.k_proj\.(weight|bias))", l + "attention.self.key.$2"),
          r(R"(encoder\.layers\.(\d+)\.self_attn\.v_proj\.(weight|bias))", l + "attention.self.value.$2"),
          r(R"(encoder\.layers\.(\d+)\.self_attn\.out_proj\.(weight|bias))", l + "attention.output.dense.$2"),
          r(R"(encoder\.layers\.(\d+)\.self_attn_layer_norm\.(weight|bias))", l + "attention.output.LayerNorm.$2"),
          r(R"(encoder\.layers\.(\d+)\.fc1\.(weight|bias))", l + "intermediate.dense.$2"),
          r(R"(encoder\.layers\.(\d+)\.fc2\.(weight|bias))", l + "output.dense.$2"),
          r(R"(encoder\.layers\.(\d+)\.final_layer_norm\.(weight|bias))", l + "output.LayerNorm.$2"),
          r(R"(pooler\.(weight|bias))", p + "pooler.dense.$1"),
          r(R"(classifier\.(weight|bias))", "classifier.$1"),
      };
    }
  }
  return {};
}

std::optional<Placement> place(const std::vector<Rule>& rules, const std::string& name) {
  for (const Rule& rule : rules)
    if (std::regex_match(name, rule.strata))
      return Placement{std::regex_replace(name, rule.strata, rule.hf), rule.transpose, rule.part, rule.parts};
  return std::nullopt;
}

// Copies of the tied embedding a checkpoint may hold (older transformers wrote them), each
// with the tensor it copies; and buffers transformers keeps that carry no weights.
std::vector<std::pair<std::string, std::string>> tied_copies(const HfModel& model) {
  const std::string p = model.prefix;
  switch (model.family) {
    case HfFamily::Bart:
    case HfFamily::Led: {
      std::vector<std::pair<std::string, std::string>> copies = {{p + "encoder.embed_tokens.weight", p + "shared.weight"},
                                                                 {p + "decoder.embed_tokens.weight", p + "shared.weight"}};
      if (model.config.tie_embeddings) copies.emplace_back("lm_head.weight", p + "shared.weight");
      return copies;
    }
    case HfFamily::T5: {
      std::vector<std::pair<std::string, std::string>> copies = {{"encoder.embed_tokens.weight", "shared.weight"},
                                                                 {"decoder.embed_tokens.weight", "shared.weight"}};
      if (model.config.tie_embeddings) copies.emplace_back("lm_head.weight", "shared.weight");
      return copies;
    }
    case HfFamily::Gpt2:
      if (model.config.tie_embeddings) return {{"lm_head.weight", p + "wte.weight"}};
      return {};
    case HfFamily::Bert: return {};
  }
  return {};
}

bool is_weightless_buffer(const HfModel& model, const std::string& name) {
  static const std::regex gpt2(R"(transformer\.h\.\d+\.attn\.(masked_)?bias)");
  if (model.family == HfFamily::Gpt2) return std::regex_match(name, gpt2);
  if (model.family == HfFamily::Bert) return name == model.prefix + "embeddings.position_ids";
  return false;
}

std::string shape_text(at::IntArrayRef sizes) {
  std::string text = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

}  // namespace

namespace {

// Strata's tensor `name` as the checkpoint holds it (sliced and transposed into strata's
// layout), checked against `sizes`; its name in the checkpoint goes to `used`.
at::Tensor fetch(const HfModel& model, const std::vector<Rule>& rules, const std::map<std::string, at::Tensor>& hf,
                 const std::string& name, at::IntArrayRef sizes, const std::string& source, std::set<std::string>& used) {
  const std::optional<Placement> at = place(rules, name);
  if (!at) throw Error(source + ": strata's tensor '" + name + "' has no place in a " +
                       std::string(hf_family_name(model.family)) + " checkpoint");
  const auto found = hf.find(at->hf);
  if (found == hf.end()) throw Error(source + ": tensor '" + at->hf + "' is missing (strata's " + name + ")");
  used.insert(at->hf);
  at::Tensor t = found->second;
  if (at->part >= 0) {
    const std::int64_t width = t.size(-1) / at->parts;
    t = t.narrow(-1, at->part * width, width);
  }
  if (at->transpose && t.dim() == 2) t = t.t();
  if (t.sizes() != sizes)
    throw Error(source + ": tensor '" + at->hf + "' gives " + shape_text(t.sizes()) + " where strata's " + name +
                " is " + shape_text(sizes));
  return t;
}

}  // namespace

void check_config_against_tensors(const HfModel& model, const std::map<std::string, at::Tensor>& hf,
                                  const std::string& source) {
  const ModelConfig& c = model.config;
  const std::vector<Rule> rules = rules_of(model);
  std::set<std::string> used;
  auto probe = [&](const std::string& name, std::vector<std::int64_t> sizes) {
    fetch(model, rules, hf, name, sizes, source + " (against config.json)", used);
  };
  probe(c.architecture == "seq2seq" ? "shared.weight" : "embed_tokens.weight", {c.vocab_size, c.d_model});
  const bool encoder = c.architecture != "causal_lm", decoder = c.architecture != "encoder";
  for (const auto& [present, field, layers] : {std::tuple{encoder, "encoder_layers", c.encoder_layers},
                                               std::tuple{decoder, "decoder_layers", c.decoder_layers}})
    if (present && layers <= 0)
      throw Error(source + ": config.json gives " + field + " = " + std::to_string(layers) + "; a stack needs layers");
  if (encoder) probe("encoder.layers." + std::to_string(c.encoder_layers - 1) + ".fc1.weight", {c.d_ff, c.d_model});
  if (decoder) probe("decoder.layers." + std::to_string(c.decoder_layers - 1) + ".fc1.weight", {c.d_ff, c.d_model});
  if (c.positions == "learned") {
    if (encoder) probe("encoder.embed_positions.weight", {c.max_positions + c.position_offset, c.d_model});
    const std::int64_t decoder_positions = c.decoder_max_positions > 0 ? c.decoder_max_positions : c.max_positions;
    if (decoder) probe("decoder.embed_positions.weight", {decoder_positions + c.position_offset, c.d_model});
  }
  if (c.token_types > 0) probe("encoder.embed_token_types.weight", {c.token_types, c.d_model});
}

std::map<std::string, at::Tensor> hf_weights_to_strata(const HfModel& model, const std::map<std::string, at::Tensor>& hf,
                                                       const NamedTensorList& expected, const std::string& source) {
  const std::vector<Rule> rules = rules_of(model);
  std::map<std::string, at::Tensor> out;
  std::set<std::string> used;
  for (const auto& [name, like] : expected)
    // No copy where the layout is strata's already: the result shares the checkpoint's storage.
    out[name] = fetch(model, rules, hf, name, like.sizes(), source, used).to(torch::kFloat32).contiguous();
  for (const auto& [copy, original] : tied_copies(model)) {
    const auto c = hf.find(copy);
    if (c == hf.end()) continue;
    used.insert(copy);
    const auto o = hf.find(original);
    if (o == hf.end() || !torch::equal(c->second, o->second))
      throw Error(source + ": tensor '" + copy + "' should be a tied copy of '" + original + "' but differs from it");
  }
  for (const auto& [name, tensor] : hf)
    if (!used.contains(name) && !is_weightless_buffer(model, name))
      throw Error(source + ": tensor '" + name + "' " + shape_text(tensor.sizes()) + " has no place in strata's " +
                  std::string(hf_family_name(model.family)) + " model (" + model.hf_class + ")");
  return out;
}

NamedTensorList strata_weights_to_hf(const HfModel& model, const NamedTensorList& weights) {
  const std::vector<Rule> rules = rules_of(model);
  std::map<std::string, std::vector<std::pair<int, at::Tensor>>> packed;  // GPT-2's q, k, v parts
  NamedTensorList out;
  for (const auto& [name, tensor] : weights) {
    const std::optional<Placement> at = place(rules, name);
    if (!at) throw Error("export: strata's tensor '" + name + "' has no place in a " +
                         std::string(hf_family_name(model.family)) + " checkpoint");
    at::Tensor t = tensor.detach().to(torch::kFloat32);
    if (at->transpose && t.dim() == 2) t = t.t();
    if (at->part >= 0) {
      auto& parts = packed[at->hf];
      parts.emplace_back(at->part, t);
      if (static_cast<int>(parts.size()) < at->parts) continue;
      std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      std::vector<at::Tensor> pieces;
      for (const auto& piece : parts) pieces.push_back(piece.second);
      t = torch::cat(pieces, -1);
    }
    out.emplace_back(at->hf, t.contiguous());
  }
  for (const auto& [name, parts] : packed)
    if (static_cast<int>(parts.size()) != 3) throw Error("export: '" + name + "' is missing some of q, k and v");
  return out;
}

}  // namespace strata::models
