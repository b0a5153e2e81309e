#include "strata/analysis/spectrum_analysis.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "strata/analysis/attention_spectrum.h"
#include "strata/analysis/encoder_attention.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/progress.h"
#include "strata/eval/svg_plot.h"
#include "strata/recipes/loaded_model.h"
#include "analysis_output.h"
#include "seq2seq_inputs.h"

namespace strata::analysis {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

EncoderSpectrum spectrum_of(const std::string& path, const SpectrumAnalysisOptions& options) {
  recipes::LoadedModel m;
  models::Seq2Seq model = recipes::load_seq2seq(path, m);
  const std::vector<Seq2SeqExample> examples = first_examples(options.data, m, options.examples, options.quiet);
  const std::size_t layer_count = model->encoder->layers->size();
  std::vector<std::vector<SpectrumCurve>> curves(layer_count);
  // One curve per (layer, example): the head-averaged map's, or per head the mean of the heads'.
  // An example counts only when every layer with prefixes gave one, so that every layer
  // averages the same examples.
  std::vector<SpectrumCurve> pending(layer_count);
  bool any_prefix = false, complete = true;
  std::size_t silent = 0, skipped = 0;
  Progress progress("spectrum " + path, examples.size(), "examples", options.quiet);
  visit_encoder_attention(*model, examples, [&](const AttentionMap& map) {
    if (map.prefix_length > 0) {
      any_prefix = true;
      std::vector<at::Tensor> maps;
      if (options.per_head)
        for (std::int64_t h = 0; h < map.head_weights.size(0); ++h) maps.push_back(map.head_weights[h]);
      else
        maps.push_back(map.weights);
      pending[map.layer] = mean_prefix_spectrum(maps, map.prefix_length, silent);
      complete = complete && !pending[map.layer].empty();
    }
    // The first example tells: stop there rather than after all of them.
    if (map.example == 0 && map.layer + 1 == layer_count && !any_prefix)
      throw Error(path + ": the model has no prefixes: the spectrum analysis reads the encoder's attention on "
                         "prefix keys (a model trained with model.prefix_length > 0)");
    if (map.layer + 1 != layer_count) return;
    for (std::size_t l = 0; complete && l < layer_count; ++l)
      if (!pending[l].empty()) curves[l].push_back(std::move(pending[l]));
    skipped += complete ? 0 : 1;
    pending.assign(layer_count, SpectrumCurve{});
    complete = true;
  }, &progress);
  progress.finish();
  if (skipped == examples.size())
    throw Error(path + ": the attention puts no weight on the prefix keys in any of the " +
                std::to_string(examples.size()) + " examples (no spectrum)");
  EncoderSpectrum spectrum = summarize_spectrum(curves, lower_split(m));
  spectrum.examples = examples.size() - skipped;
  spectrum.silent_maps = silent;
  spectrum.skipped_examples = skipped;
  spectrum.per_head = options.per_head;
  return spectrum;
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

std::string spectrum_svg(const std::vector<std::string>& labels, const std::vector<EncoderSpectrum>& spectra) {
  const ChartOptions base{.x_label = "index of the singular value", .y_label = "normalised cumulative singular value"};
  std::vector<std::string> panels;
  for (const bool lower : {true, false}) {
    std::vector<Series> series;
    for (std::size_t i = 0; i < spectra.size(); ++i) {
      const SpectrumCurve& curve = lower ? spectra[i].lower : spectra[i].upper;
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

std::string half_cells(const SpectrumCurve& curve) {
  if (curve.empty()) return fmt::format("{:>8} {:>7}", "-", "-");
  const std::size_t k = index_reaching(curve, 0.9);
  return fmt::format("{:>8.4f} {:>7}", curve_area(curve), k > 0 ? std::to_string(k) : std::string("-"));
}

}  // namespace

void run_spectrum_analysis(const SpectrumAnalysisOptions& options) {
  if (!options.labels.empty() && options.labels.size() != options.models.size())
    throw Error(fmt::format("--label: {} labels for {} models; give one per --model, in the same order, or none",
                            options.labels.size(), options.models.size()));
  const std::vector<std::string>& labels = options.labels.empty() ? options.models : options.labels;
  std::vector<EncoderSpectrum> spectra;
  for (const std::string& model : options.models) spectra.push_back(spectrum_of(model, options));

  const fs::path out = output_dir(options.out, options.models[0], "spectrum");
  Json report = {{"data", options.data}, {"models", Json::array()}};
  for (std::size_t i = 0; i < spectra.size(); ++i) {
    Json entry = {{"label", labels[i]}, {"model", options.models[i]}};
    const Json body = to_json(spectra[i]);
    for (const auto& [key, value] : body.items()) entry[key] = value;
    report["models"].push_back(entry);
  }
  write_file_atomic(out / "spectrum.json", report.dump(2) + "\n");
  write_file_atomic(out / "spectrum.svg", spectrum_svg(labels, spectra));

  std::size_t width = 5;
  for (const std::string& label : labels) width = std::max(width, label.size());
  fmt::print("{:<{}} {:>4} {:>8} {:>16} {:>16}\n", "", width, "", "", "lower layers", "upper layers");
  fmt::print("{:<{}} {:>4} {:>8} {:>8} {:>7} {:>8} {:>7}\n", "model", width, "P", "examples", "area", "k@0.9", "area",
             "k@0.9");
  for (std::size_t i = 0; i < spectra.size(); ++i)
    fmt::print("{:<{}} {:>4} {:>8} {} {}\n", labels[i], width, spectra[i].prefix_length, spectra[i].examples,
               half_cells(spectra[i].lower), half_cells(spectra[i].upper));
  fmt::print("area: mean of the normalised cumulative curve (1: all in the largest singular value); k@0.9: the "
             "singular values needed for 90%; curves of {}\n",
             options.per_head ? "each head's own map, averaged over heads" : "the head-averaged map");
  fmt::print("wrote {}: spectrum.json, spectrum.svg\n", out.string());
}

}  // namespace strata::analysis
