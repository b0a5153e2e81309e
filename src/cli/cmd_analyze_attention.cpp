// strata analyze attention: a seq2seq model's encoder self-attention per layer, averaged over
// heads, as seed 000 draws it to show how much the queries read the prefix keys (§4 Figure 1,
// A.4 Figure 6): figures, the raw matrices and a per-layer summary.
// strata analyze spectrum: the normalised cumulative singular values of the attention on the
// prefix keys (§6.3, A.7 Figure 7), lower and upper encoder layers, one curve per model.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attention_figure.h"
#include "commands.h"
#include "strata/analysis/attention_spectrum.h"
#include "strata/analysis/encoder_attention.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/progress.h"
#include "strata/core/safetensors.h"
#include "strata/data/seq2seq_examples.h"
#include "strata/eval/svg_plot.h"
#include "strata/models/prefix_design.h"
#include "strata/train/model_dir.h"
#include "strata/train/run_config.h"

namespace strata::cli {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// A seq2seq model with its checkpoint, config and tokenizer.
struct Model {
  train::LoadedModel info;
  models::Seq2Seq model{nullptr};
};

// `prefix_file`, when given, is a tuned prefix file loaded onto the base model at `path`.
Model load_model(const std::string& path, const std::string& prefix_file = "") {
  Model m;
  m.model = train::load_seq2seq(path, m.info, prefix_file);
  return m;
}

// Layers [0, split) are the lower ones: the model's own split (model.hierarchy_split), so a
// hierarchical design's halves are the ones it treats apart.
std::size_t lower_split(const Model& m) {
  return static_cast<std::size_t>(models::hierarchy_split(m.info.config, m.info.config.encoder_layers));
}

// The first `count` examples of `data`, cut as the model was trained; fewer when the file has
// fewer, which is said on stderr.
std::vector<Seq2SeqExample> first_examples(const std::string& data, const Model& m, std::size_t count, bool quiet) {
  std::vector<Seq2SeqExample> examples = load_seq2seq_examples(
      data, *m.info.tokenizer, train::data_options(m.info.run).truncation, /*show_progress=*/!quiet);
  if (examples.size() < count)
    std::fprintf(stderr, "note: %s has %zu usable examples, fewer than --examples %zu; using %zu\n", data.c_str(),
                 examples.size(), count, examples.size());
  else
    examples.resize(count);
  return examples;
}

// ---- strata analyze attention ----

struct AttentionOptions {
  std::string model, data, out, prefix;
  std::size_t examples = 4;
  bool quiet = false;
};

struct LayerMaps {
  std::int64_t prefix_length = 0;  // P of this layer (a design may give prefixes to some layers only)
  std::vector<at::Tensor> maps;    // per example, [n, P + n]
  std::vector<double> prefix_mass, entropy;
  std::vector<analysis::SpectrumCurve> curves;  // per example, when P > 0
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

void analyze_attention(const AttentionOptions& options) {
  Model m = load_model(options.model, options.prefix);
  const std::vector<Seq2SeqExample> examples = first_examples(options.data, m, options.examples, options.quiet);
  std::vector<LayerMaps> layers(m.model->encoder->layers->size());
  bool any_prefix = false;
  Progress progress("encoder attention", examples.size(), "examples", options.quiet);
  analysis::visit_encoder_attention(*m.model, examples, [&](const analysis::AttentionMap& map) {
    LayerMaps& layer = layers[map.layer];
    layer.prefix_length = map.prefix_length;
    any_prefix = any_prefix || map.prefix_length > 0;
    layer.maps.push_back(map.weights);
    layer.prefix_mass.push_back(analysis::prefix_mass(map.weights, map.prefix_length));
    layer.entropy.push_back(analysis::mean_row_entropy(map.weights));
    if (map.prefix_length > 0) layer.curves.push_back(analysis::prefix_spectrum(map.weights, map.prefix_length));
  }, &progress);
  progress.finish();

  const fs::path out = options.out.empty() ? fs::path(options.model) / "attention" : fs::path(options.out);
  fs::create_directories(out);
  Json ids = Json::array(), example_json = Json::array();
  for (const Seq2SeqExample& e : examples) {
    ids.push_back(e.id);
    example_json.push_back({{"id", e.id}, {"tokens", e.source.size()}});
  }
  write_matrices(out / "attention.safetensors", layers, ids);

  Json report;
  report["model"] = m.info.checkpoint.string();
  report["prefix"] = options.prefix.empty() ? Json(nullptr) : Json(options.prefix);
  report["data"] = options.data;
  report["examples"] = example_json;
  report["matrices"] = "attention.safetensors";
  report["matrix_names"] = "layer{l}.example{e}: [tokens, prefix_length + tokens] float32, mean over heads";
  report["layers"] = Json::array();
  fmt::print("encoder self-attention of {} over {} examples, mean over heads\n", m.info.checkpoint.string(),
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
    std::vector<std::vector<analysis::SpectrumCurve>> curves;
    for (const LayerMaps& layer : layers) curves.push_back(layer.curves);
    Json spectrum = {{"model", m.info.checkpoint.string()}, {"data", options.data}};
    const Json body = analysis::to_json(analysis::summarize_spectrum(curves, lower_split(m)));  // named: items() of a temporary dangles
    for (const auto& [key, value] : body.items()) spectrum[key] = value;
    write_file_atomic(out / "spectrum.json", spectrum.dump(2) + "\n");
    report["spectrum"] = "spectrum.json";
  }
  write_file_atomic(out / "attention.json", report.dump(2) + "\n");
  fmt::print("wrote {}: attention.json, attention.safetensors{}, layerL.svg and layerL.png per layer\n", out.string(),
             any_prefix ? ", spectrum.json" : "");
}

// ---- strata analyze spectrum ----

struct SpectrumOptions {
  std::vector<std::string> models, labels;
  std::string data, out;
  std::size_t examples = 100;
  bool quiet = false;
};

analysis::EncoderSpectrum spectrum_of(const std::string& path, const SpectrumOptions& options) {
  Model m = load_model(path);
  const std::vector<Seq2SeqExample> examples = first_examples(options.data, m, options.examples, options.quiet);
  const std::size_t layer_count = m.model->encoder->layers->size();
  std::vector<std::vector<analysis::SpectrumCurve>> curves(layer_count);
  bool any_prefix = false;
  Progress progress("spectrum " + path, examples.size(), "examples", options.quiet);
  analysis::visit_encoder_attention(*m.model, examples, [&](const analysis::AttentionMap& map) {
    if (map.prefix_length > 0) {
      any_prefix = true;
      curves[map.layer].push_back(analysis::prefix_spectrum(map.weights, map.prefix_length));
    }
    // The first example tells: stop there rather than after all of them.
    if (map.example == 0 && map.layer + 1 == layer_count && !any_prefix)
      throw Error(path + ": the model has no prefixes: the spectrum analysis reads the encoder's attention on "
                         "prefix keys (a model trained with model.prefix_length > 0)");
  }, &progress);
  progress.finish();
  return analysis::summarize_spectrum(curves, lower_split(m));
}

// Two line charts side by side in one SVG: each chart (a standalone "<svg ...>" document of
// line_chart_svg) nested, moved into place by an x attribute.
std::string two_panels(const std::string& left, const std::string& right, const ChartOptions& chart) {
  const auto placed = [](const std::string& svg, int x) { return "<svg x=\"" + std::to_string(x) + "\" " + svg.substr(5); };
  return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\">\n"
                     "<title>Prefix attention spectrum</title>\n<rect width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n"
                     "{2}{3}</svg>\n",
                     2 * chart.width, chart.height, placed(left, 0), placed(right, chart.width));
}

std::string spectrum_svg(const std::vector<std::string>& labels, const std::vector<analysis::EncoderSpectrum>& spectra) {
  const ChartOptions base{.x_label = "index of the singular value", .y_label = "normalised cumulative singular value"};
  std::vector<std::string> panels;
  for (const bool lower : {true, false}) {
    std::vector<Series> series;
    for (std::size_t i = 0; i < spectra.size(); ++i) {
      const analysis::SpectrumCurve& curve = lower ? spectra[i].lower : spectra[i].upper;
      Series s{labels[i], {}, {}};
      for (std::size_t k = 0; k < curve.size(); ++k) {
        s.x.push_back(static_cast<double>(k + 1));
        s.y.push_back(curve[k]);
      }
      series.push_back(std::move(s));
    }
    ChartOptions chart = base;
    chart.title = lower ? "Lower encoder layers" : "Upper encoder layers";
    panels.push_back(line_chart_svg(series, chart));
  }
  return two_panels(panels[0], panels[1], base);
}

std::string half_cells(const analysis::SpectrumCurve& curve) {
  if (curve.empty()) return fmt::format("{:>8} {:>7}", "-", "-");
  const std::size_t k = analysis::index_reaching(curve, 0.9);
  return fmt::format("{:>8.4f} {:>7}", analysis::curve_area(curve), k > 0 ? std::to_string(k) : std::string("-"));
}

void analyze_spectrum(SpectrumOptions options) {
  if (!options.labels.empty() && options.labels.size() != options.models.size())
    throw Error(fmt::format("--label: {} labels for {} models; give one per --model, in the same order, or none",
                            options.labels.size(), options.models.size()));
  if (options.labels.empty()) options.labels = options.models;
  std::vector<analysis::EncoderSpectrum> spectra;
  for (const std::string& model : options.models) spectra.push_back(spectrum_of(model, options));

  const fs::path out = options.out.empty() ? fs::path(options.models[0]) / "spectrum" : fs::path(options.out);
  fs::create_directories(out);
  Json report = {{"data", options.data}, {"models", Json::array()}};
  for (std::size_t i = 0; i < spectra.size(); ++i) {
    Json entry = {{"label", options.labels[i]}, {"model", options.models[i]}};
    const Json body = analysis::to_json(spectra[i]);
    for (const auto& [key, value] : body.items()) entry[key] = value;
    report["models"].push_back(entry);
  }
  write_file_atomic(out / "spectrum.json", report.dump(2) + "\n");
  write_file_atomic(out / "spectrum.svg", spectrum_svg(options.labels, spectra));

  std::size_t width = 5;
  for (const std::string& label : options.labels) width = std::max(width, label.size());
  fmt::print("{:<{}} {:>4} {:>8} {:>16} {:>16}\n", "", width, "", "", "lower layers", "upper layers");
  fmt::print("{:<{}} {:>4} {:>8} {:>8} {:>7} {:>8} {:>7}\n", "model", width, "P", "examples", "area", "k@0.9", "area",
             "k@0.9");
  for (std::size_t i = 0; i < spectra.size(); ++i)
    fmt::print("{:<{}} {:>4} {:>8} {} {}\n", options.labels[i], width, spectra[i].prefix_length, spectra[i].examples,
               half_cells(spectra[i].lower), half_cells(spectra[i].upper));
  fmt::print("area: mean of the normalised cumulative curve (1: all in the largest singular value); k@0.9: the "
             "singular values needed for 90%\n");
  fmt::print("wrote {}: spectrum.json, spectrum.svg\n", out.string());
}

}  // namespace

void register_analyze_attention(CLI::App& analyze) {
  CLI::App* attention = analyze.add_subcommand(
      "attention",
      "Draw a seq2seq model's encoder self-attention, averaged over heads, for the first N examples of a "
      "dataset (seed 000 Figure 1, A.4 Figure 6): per encoder layer L (from 0), OUT/layerL.svg and layerL.png "
      "with the examples side by side, queries down and keys across, the layer's P prefix keys first and an "
      "orange line after them. The matrices go to attention.safetensors (layer{L}.example{E}, [tokens, P + "
      "tokens] float32, E from 0); attention.json holds per layer P, the mean attention mass on the prefix "
      "keys and the mean row entropy, printed as a table. With prefixes, spectrum.json holds the prefix "
      "spectrum of every layer and of the lower and upper layers (see `strata analyze spectrum`).");
  auto a = std::make_shared<AttentionOptions>();
  attention->add_option("--model", a->model, "a seq2seq run directory or checkpoint of `strata train`")->required();
  attention->add_option("--data", a->data, "JSONL dataset; its first N usable documents are drawn")->required();
  attention->add_option("--examples", a->examples, "how many examples (N, at most 16: they sit side by side)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{16}))
      ->capture_default_str();
  attention->add_option("--out", a->out, "output directory (default: MODEL/attention)");
  attention->add_option("--prefix", a->prefix, "a tuned prefix file (RUN/prefix.safetensors of a prefix-tuned run) to load onto --model, its base");
  attention->add_flag("--quiet", a->quiet, "no progress output");
  on_run(attention, [a] { analyze_attention(*a); });

  CLI::App* spectrum = analyze.add_subcommand(
      "spectrum",
      "Compare prefix-tuned seq2seq models by the spectrum of their encoder attention on the prefix keys "
      "(seed 000 §6.3, A.7 Figure 7): per example and encoder layer, the singular values s1 >= s2 >= ... of "
      "the head-averaged attention of the real queries on the P prefix keys, as the normalised cumulative "
      "curve c_k = (s1 + ... + sk) / (s1 + ... + sP), averaged over examples and over the lower and the upper "
      "encoder layers with prefixes (lower: below the model's model.hierarchy_split, by default the first "
      "half, rounded up). A curve that rises fast means the prefix attention is nearly low-rank. Writes OUT/spectrum.svg (two panels, a curve per model) and spectrum.json, and prints per "
      "model the area under each curve and the index where it reaches 0.9. Models without prefixes are an "
      "error.");
  auto s = std::make_shared<SpectrumOptions>();
  spectrum->add_option("--model", s->models, "a seq2seq run directory or checkpoint; repeat to compare models")
      ->required();
  spectrum->add_option("--label", s->labels, "a name per --model, in the same order (default: the paths)");
  spectrum->add_option("--data", s->data, "JSONL dataset; its first N usable documents are analysed")->required();
  spectrum->add_option("--examples", s->examples, "how many examples (N)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
  spectrum->add_option("--out", s->out, "output directory (default: FIRST_MODEL/spectrum)");
  spectrum->add_flag("--quiet", s->quiet, "no progress output");
  on_run(spectrum, [s] { analyze_spectrum(*s); });
}

}  // namespace strata::cli
