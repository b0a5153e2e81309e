#include "strata/analysis/attention_analysis.h"

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "strata/analysis/attention_figure.h"
#include "strata/analysis/attention_spectrum.h"
#include "strata/analysis/encoder_attention.h"
#include "strata/core/files.h"
#include "strata/core/progress.h"
#include "strata/core/safetensors.h"
#include "strata/recipes/loaded_model.h"
#include "analysis_output.h"
#include "seq2seq_inputs.h"

namespace strata::analysis {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

struct LayerMaps {
  std::int64_t prefix_length = 0;  // P of this layer (a design may give prefixes to some layers only)
  std::vector<at::Tensor> maps;    // per example, [n, P + n]
  std::vector<double> prefix_mass, entropy;
  std::vector<SpectrumCurve> curves;  // per example, when P > 0
};

double mean_of(const std::vector<double>& values) {
  double sum = 0;
  for (const double v : values) sum += v;
  return values.empty() ? 0.0 : sum / static_cast<double>(values.size());
}

AttentionFigure layer_figure(const std::vector<Seq2SeqExample>& examples, const LayerMaps& layer, std::size_t l) {
  const std::int64_t prefixes = layer.prefix_length;
  AttentionFigure figure;
  figure.title = fmt::format("encoder.layers.{} self-attention, mean over heads", l);
  figure.legend = prefixes > 0 ? fmt::format("queries down; the {} prefix keys, then the input keys, across (orange "
                                             "line between); white to dark blue from each panel's smallest to its largest weight",
                                             prefixes)
                               : "queries down, keys across; white to dark blue from each panel's smallest to its largest weight";
  for (std::size_t e = 0; e < layer.maps.size(); ++e) {
    const at::Tensor& map = layer.maps[e];
    AttentionPanel panel;
    panel.title = prefixes > 0 ? fmt::format("{} ({:.0f}% on prefixes)", examples[e].id, 100 * layer.prefix_mass[e])
                               : examples[e].id;
    panel.rows = map.size(0);
    panel.cols = map.size(1);
    panel.prefix_length = prefixes;
    panel.values.assign(map.data_ptr<float>(), map.data_ptr<float>() + map.numel());
    figure.panels.push_back(std::move(panel));
  }
  return figure;
}

void write_matrices(const fs::path& file, const std::vector<LayerMaps>& layers, const Json& ids) {
  std::vector<RawTensor> tensors;
  Json prefix_lengths = Json::array();
  for (std::size_t l = 0; l < layers.size(); ++l) {
    prefix_lengths.push_back(layers[l].prefix_length);
    for (std::size_t e = 0; e < layers[l].maps.size(); ++e) {
      const at::Tensor& map = layers[l].maps[e];
      tensors.push_back({fmt::format("layer{}.example{}", l, e), "F32", {map.size(0), map.size(1)},
                         {reinterpret_cast<const std::byte*>(map.data_ptr<float>()),
                          static_cast<std::size_t>(map.numel()) * sizeof(float)}});
    }
  }
  write_safetensors(file, tensors, {{"prefix_lengths", prefix_lengths.dump()}, {"examples", ids.dump()}});
}

}  // namespace

void run_attention_analysis(const AttentionAnalysisOptions& options) {
  recipes::LoadedModel m;
  models::Seq2Seq model = recipes::load_seq2seq(options.model, m, options.adapter);
  const std::vector<Seq2SeqExample> examples = first_examples(options.data, m, options.examples, options.quiet);
  std::vector<LayerMaps> layers(model->encoder->layers->size());
  bool any_prefix = false;
  Progress progress("encoder attention", examples.size(), "examples", options.quiet);
  visit_encoder_attention(*model, examples, [&](const AttentionMap& map) {
    LayerMaps& layer = layers[map.layer];
    layer.prefix_length = map.prefix_length;
    any_prefix = any_prefix || map.prefix_length > 0;
    layer.maps.push_back(map.weights);
    layer.prefix_mass.push_back(prefix_mass(map.weights, map.prefix_length));
    layer.entropy.push_back(mean_row_entropy(map.weights));
    if (map.prefix_length > 0) layer.curves.push_back(prefix_spectrum(map.weights, map.prefix_length));
  }, &progress);
  progress.finish();

  const fs::path out = output_dir(options.out, options.model, "attention");
  Json ids = Json::array(), example_json = Json::array();
  for (const Seq2SeqExample& e : examples) {
    ids.push_back(e.id);
    example_json.push_back({{"id", e.id}, {"tokens", e.source.size()}});
  }
  write_matrices(out / "attention.safetensors", layers, ids);

  Json report;
  report["model"] = m.checkpoint.string();
  report["adapter"] = options.adapter.empty() ? Json(nullptr) : Json(options.adapter);
  report["data"] = options.data;
  report["examples"] = example_json;
  report["matrices"] = "attention.safetensors";
  report["matrix_names"] = "layer{l}.example{e}: [tokens, prefix_length + tokens] float32, mean over heads";
  report["layers"] = Json::array();
  fmt::print("encoder self-attention of {} over {} examples, mean over heads\n", m.checkpoint.string(),
             examples.size());
  fmt::print("{:<6} {:>8} {:>12} {:>15}  files\n", "layer", "prefixes", "prefix mass", "entropy (nats)");
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const std::string stem = fmt::format("layer{}", l);
    const AttentionFigure figure = layer_figure(examples, layers[l], l);
    write_file_atomic(out / (stem + ".svg"), attention_svg(figure));
    write_file_atomic(out / (stem + ".png"), attention_png(figure));
    const double mass = mean_of(layers[l].prefix_mass), entropy = mean_of(layers[l].entropy);
    report["layers"].push_back({{"layer", l},
                                {"prefix_length", layers[l].prefix_length},
                                {"prefix_mass", mass},
                                {"entropy", entropy},
                                {"prefix_mass_per_example", layers[l].prefix_mass},
                                {"entropy_per_example", layers[l].entropy},
                                {"files", {stem + ".svg", stem + ".png"}}});
    fmt::print("{:<6} {:>8} {:>12.4f} {:>15.4f}  {}\n", l, layers[l].prefix_length, mass, entropy,
               (out / (stem + ".svg")).string());
  }
  fmt::print("prefix mass: the mean weight a query puts on the prefix keys; entropy: of a query's row over all keys\n");
  if (any_prefix) {
    std::vector<std::vector<SpectrumCurve>> curves;
    for (const LayerMaps& layer : layers) curves.push_back(layer.curves);
    Json spectrum = {{"model", m.checkpoint.string()}, {"data", options.data}};
    const Json body = to_json(summarize_spectrum(curves, lower_split(m)));  // named: items() of a temporary dangles
    for (const auto& [key, value] : body.items()) spectrum[key] = value;
    write_file_atomic(out / "spectrum.json", spectrum.dump(2) + "\n");
    report["spectrum"] = "spectrum.json";
  }
  write_file_atomic(out / "attention.json", report.dump(2) + "\n");
  fmt::print("wrote {}: attention.json, attention.safetensors{}, layerL.svg and layerL.png per layer\n", out.string(),
             any_prefix ? ", spectrum.json" : "");
}

}  // namespace strata::analysis
