#include "strata/analysis/global_relevance.h"

#include <torch/torch.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "strata/attn/patterns.h"
#include "strata/core/error.h"
#include "strata/core/progress.h"
#include "strata/core/strings.h"
#include "strata/core/utf8.h"
#include "strata/data/token_batches.h"
#include "strata/nn/multi_head_attention.h"
#include "strata/text/tokenizer.h"

namespace strata::analysis {

namespace {

std::string relevance_shape_of(const at::Tensor& t) {
  std::string out = "[";
  for (std::int64_t d = 0; d < t.dim(); ++d) out += std::string(d ? ", " : "") + std::to_string(t.size(d));
  return out + "]";
}

// Token classes [B, L] int32 of the batch's ids through the table (ids outside it: 0).
at::Tensor classes_of(const at::Tensor& ids, const at::Tensor& table) {
  if (!table.defined()) return {};
  const std::int64_t vocab = table.size(0);
  const at::Tensor on_device = table.to(ids.device());
  const at::Tensor inside = (ids >= 0).logical_and(ids < vocab);
  const at::Tensor looked_up = on_device.index_select(0, ids.clamp(0, vocab - 1).reshape({-1})).view(ids.sizes());
  return looked_up.masked_fill(inside.logical_not(), 0);
}

}  // namespace

AttentionRecording::AttentionRecording(torch::nn::Module& model, const std::vector<NamedAttention>& layers)
    : model_(model), layers_(layers), was_training_(model.is_training()) {
  model_.eval();
}

AttentionRecording::~AttentionRecording() {
  for (const NamedAttention& layer : layers_) layer.module->record_weights(false);
  model_.train(was_training_);
}

void AttentionRecording::restart() {
  for (const NamedAttention& layer : layers_) layer.module->record_weights(true);
}

at::Tensor global_relevance_sums(const at::Tensor& weights, const at::Tensor& predicate, const at::Tensor& lengths) {
  if (weights.dim() != 4 || weights.size(2) != weights.size(3))
    throw Error(std::string("global relevance: attention weights must be [B, H, L, L], got ") +
                relevance_shape_of(weights));
  const std::int64_t batch = weights.size(0), length = weights.size(2);
  if (predicate.dim() != 3 || predicate.size(0) != batch || predicate.size(1) != length ||
      predicate.size(2) != length)
    throw Error(std::string("global relevance: the pattern predicate is ") + relevance_shape_of(predicate) +
                ", the weights " + relevance_shape_of(weights) + " need [" + std::to_string(batch) + ", " +
                std::to_string(length) + ", " + std::to_string(length) + "]");
  if (lengths.dim() != 1 || lengths.size(0) != batch)
    throw Error(std::string("global relevance: lengths must be [") + std::to_string(batch) + "], got " +
                relevance_shape_of(lengths));
  const at::Tensor real_lengths = lengths.to(weights.device(), torch::kLong);
  const at::Tensor real =
      torch::arange(length, real_lengths.options()).unsqueeze(0) < real_lengths.unsqueeze(1);  // [B, L]
  const at::Tensor counted =
      predicate.to(weights.device(), torch::kBool).logical_and(real.unsqueeze(2)).logical_and(real.unsqueeze(1));
  const at::Tensor sums = weights.masked_fill(counted.unsqueeze(1).logical_not(), 0)
                              .sum({2, 3}, /*keepdim=*/false, torch::kDouble);  // [B, H]
  return sums / real_lengths.clamp_min(1).to(torch::kDouble).unsqueeze(1);
}

bool is_punctuation_text(std::string_view text) {
  text = trim(text);
  if (text.empty()) return false;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) return false;
    if (!is_unicode_punctuation(utf8_decode_at(text, i, length))) return false;
    i += length;
  }
  return true;
}

std::vector<std::int32_t> token_class_table(const Tokenizer& tokenizer) {
  std::vector<std::int32_t> table(static_cast<std::size_t>(std::max(tokenizer.vocab_size(), 0)), 0);
  for (std::int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    const std::int32_t one[] = {id};
    if (is_punctuation_text(tokenizer.decode(one))) table[id] |= attn::kPunctuationClass;
  }
  for (const std::string& piece : tokenizer.specials().all())
    if (const auto id = tokenizer.piece_to_id(piece); id && *id >= 0 && *id < tokenizer.vocab_size())
      table[*id] = attn::kSpecialTokenClass;  // a special token is never punctuation as well
  return table;
}

void summarize_relevance(PatternRelevance& relevance, std::size_t top) {
  double sum = 0, squares = 0;
  std::size_t count = 0;
  for (const std::vector<double>& row : relevance.matrix)
    for (const double v : row) {
      sum += v;
      ++count;
    }
  relevance.mean = count > 0 ? sum / static_cast<double>(count) : 0.0;
  for (const std::vector<double>& row : relevance.matrix)
    for (const double v : row) squares += (v - relevance.mean) * (v - relevance.mean);
  relevance.std = count > 0 ? std::sqrt(squares / static_cast<double>(count)) : 0.0;
  relevance.kept = false;
  for (const std::vector<double>& row : relevance.matrix)
    for (const double v : row)
      if (v > relevance.mean + 3 * relevance.std && relevance.std > 0) relevance.kept = true;
  relevance.top = top_heads(relevance.matrix, top);
}

std::vector<NamedAttention> encoder_self_attention(torch::nn::Module& model) {
  std::vector<NamedAttention> out;
  for (NamedAttention& layer : attention_modules(model))
    if (layer.name.starts_with("encoder.layers.") && layer.name.ends_with(".self_attn")) out.push_back(layer);
  if (out.empty())
    throw Error("global relevance reads the encoder's self-attention, and this model has none (encoder and "
                "seq2seq models have one; a causal LM has not)");
  return out;
}

GlobalRelevance global_relevance(torch::nn::Module& model, AnalysisBatchSource& source,
                                 std::span<const std::size_t> costs, const std::vector<NamedAttention>& layers,
                                 const std::vector<attn::Pattern>& patterns, const RelevanceOptions& options) {
  if (patterns.empty()) throw Error("global relevance: no pattern to evaluate");
  if (layers.empty()) throw Error("global relevance: no attention module to analyse");
  const std::size_t examples = options.max_examples > 0 ? std::min(options.max_examples, costs.size()) : costs.size();
  if (examples == 0) throw Error("global relevance: the task has no validation examples (give validation data)");
  const BatchPlan batches = plan_batches_in_order(costs.first(examples), options.max_tokens);
  const at::Tensor table = options.token_classes.empty()
                               ? at::Tensor()
                               : torch::tensor(options.token_classes, torch::kInt32);

  // totals[p][l]: Σ over examples of each head's term, [H] double.
  std::vector<std::vector<at::Tensor>> totals(patterns.size());
  for (auto& row : totals)
    for (const NamedAttention& layer : layers) row.push_back(torch::zeros({layer.module->heads()}, torch::kDouble));

  AttentionRecording recording(model, layers);
  torch::NoGradGuard no_grad;
  for (const std::vector<std::size_t>& rows : batches) {
    recording.restart();
    const AnalysisBatch batch = source.analysis_batch(train::Split::Valid, rows);
    if (!batch.ids.defined() || !batch.padding.defined() || !batch.forward)
      throw Error("global relevance: the task's analysis batch lacks its ids, padding or forward");
    batch.forward();
    const at::Tensor lengths = batch.padding.to(torch::kBool).sum(1);
    const attn::PatternInputs inputs{&batch.layout, classes_of(batch.ids, table)};
    for (std::size_t p = 0; p < patterns.size(); ++p) {
      at::Tensor predicate;
      try {
        predicate = attn::pattern_predicate(patterns[p], inputs);
      } catch (const Error& e) {
        throw Error(std::string("pattern '") + patterns[p].name + "': " + e.what());
      }
      for (std::size_t l = 0; l < layers.size(); ++l) {
        const at::Tensor& weights = layers[l].module->recorded_weights();
        if (!weights.defined())
          throw Error(std::string("global relevance: ") + layers[l].name +
                      " recorded no attention weights (the analysis batch's forward does not run it)");
        totals[p][l] += global_relevance_sums(weights, predicate, lengths).sum(0).cpu();
      }
    }
    if (options.progress) options.progress->add(rows.size());
  }

  GlobalRelevance result;
  result.examples = static_cast<std::int64_t>(examples);
  for (const NamedAttention& layer : layers) result.layers.push_back(layer.name);
  for (std::size_t p = 0; p < patterns.size(); ++p) {
    PatternRelevance relevance;
    relevance.pattern = patterns[p].name;
    for (const at::Tensor& total : totals[p]) {
      const at::Tensor mean = (total / static_cast<double>(examples)).contiguous();
      relevance.matrix.emplace_back(mean.data_ptr<double>(), mean.data_ptr<double>() + mean.numel());
    }
    summarize_relevance(relevance, options.top);
    result.patterns.push_back(std::move(relevance));
  }
  return result;
}

nlohmann::ordered_json to_json(const GlobalRelevance& relevance) {
  using Json = nlohmann::ordered_json;
  Json patterns = Json::array();
  for (const PatternRelevance& p : relevance.patterns) {
    Json top = Json::array();
    for (const RankedHead& head : p.top)
      top.push_back({{"layer", head.layer},
                     {"layer_name", relevance.layers.at(head.layer)},
                     {"head", head.head},
                     {"value", head.value}});
    patterns.push_back({{"name", p.pattern},
                        {"matrix", p.matrix},
                        {"mean", p.mean},
                        {"std", p.std},
                        {"threshold", p.mean + 3 * p.std},
                        {"kept", p.kept},
                        {"top", top}});
  }
  return {{"examples", relevance.examples}, {"layers", relevance.layers}, {"patterns", patterns}};
}

}  // namespace strata::analysis
