#include "strata/analysis/attention_spectrum.h"

#include <torch/torch.h>

#include <algorithm>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "strata/core/error.h"

namespace strata::analysis {

namespace {

std::string shape_of(const at::Tensor& t) {
  std::string out = "[";
  for (std::int64_t d = 0; d < t.dim(); ++d) out += fmt::format("{}{}", d ? ", " : "", t.size(d));
  return out + "]";
}

// The mean curve of the layers with prefixes among [begin, end); empty when there is none.
SpectrumCurve half_curve(const std::vector<SpectrumCurve>& layers, std::size_t begin, std::size_t end) {
  std::vector<SpectrumCurve> with_prefixes;
  for (std::size_t l = begin; l < end; ++l)
    if (!layers[l].empty()) with_prefixes.push_back(layers[l]);
  return with_prefixes.empty() ? SpectrumCurve{} : mean_curve(with_prefixes);
}

nlohmann::ordered_json half_json(const EncoderSpectrum& spectrum, std::size_t begin, std::size_t end,
                                 const SpectrumCurve& curve) {
  if (curve.empty()) return nullptr;
  nlohmann::ordered_json half;
  half["layers"] = nlohmann::ordered_json::array();
  for (std::size_t l = begin; l < end; ++l)
    if (!spectrum.layers[l].empty()) half["layers"].push_back(l);
  half["curve"] = curve;
  half["area"] = curve_area(curve);
  const std::size_t k = index_reaching(curve, 0.9);
  half["index_90"] = k > 0 ? nlohmann::ordered_json(k) : nlohmann::ordered_json(nullptr);
  return half;
}

}  // namespace

SpectrumCurve cumulative_spectrum(const at::Tensor& prefix_attention) {
  if (prefix_attention.dim() != 2)
    throw Error("spectrum: the prefix attention must be [queries, prefixes], got " + shape_of(prefix_attention));
  const std::int64_t prefixes = prefix_attention.size(1);
  if (prefixes == 0) throw Error("spectrum: the model has no prefixes (no prefix column to analyse)");
  if (prefix_attention.size(0) == 0) throw Error("spectrum: the prefix attention has no query row");
  const at::Tensor values = at::linalg_svdvals(prefix_attention.detach().to(torch::kCPU, torch::kDouble));
  const double total = values.sum().item<double>();
  if (!(total > 0)) throw Error("spectrum: the attention puts no weight on the prefixes (no spectrum)");
  const at::Tensor cumulative = values.cumsum(0) / total;
  SpectrumCurve curve(static_cast<std::size_t>(prefixes), 1.0);
  const auto* c = cumulative.data_ptr<double>();
  for (std::int64_t k = 0; k < cumulative.size(0); ++k) curve[k] = std::min(c[k], 1.0);
  return curve;
}

SpectrumCurve prefix_spectrum(const at::Tensor& attention, std::int64_t prefix_length) {
  if (prefix_length <= 0) throw Error("spectrum: the model has no prefixes (prefix length 0)");
  if (attention.dim() != 2 || attention.size(1) < prefix_length)
    throw Error(fmt::format("spectrum: an attention map must be [queries, {} prefixes + keys], got {}", prefix_length,
                            shape_of(attention)));
  return cumulative_spectrum(attention.narrow(1, 0, prefix_length));
}

SpectrumCurve mean_prefix_spectrum(const std::vector<at::Tensor>& maps, std::int64_t prefix_length,
                                   std::size_t& silent) {
  std::vector<SpectrumCurve> curves;
  for (const at::Tensor& map : maps) {
    if (map.dim() == 2 && map.size(1) >= prefix_length && !(map.narrow(1, 0, prefix_length).sum().item<double>() > 0)) {
      ++silent;
      continue;
    }
    curves.push_back(prefix_spectrum(map, prefix_length));
  }
  return curves.empty() ? SpectrumCurve{} : mean_curve(curves);
}

SpectrumCurve mean_curve(std::span<const SpectrumCurve> curves) {
  if (curves.empty()) throw Error("spectrum: no curve to average");
  SpectrumCurve mean(curves[0].size(), 0.0);
  for (const SpectrumCurve& curve : curves) {
    if (curve.size() != mean.size())
      throw Error(fmt::format("spectrum: curves of {} and {} prefixes cannot be averaged", mean.size(), curve.size()));
    for (std::size_t k = 0; k < curve.size(); ++k) mean[k] += curve[k];
  }
  for (double& c : mean) c /= static_cast<double>(curves.size());
  return mean;
}

double curve_area(std::span<const double> curve) {
  if (curve.empty()) return 0.0;
  double sum = 0;
  for (const double c : curve) sum += c;
  return sum / static_cast<double>(curve.size());
}

std::size_t index_reaching(std::span<const double> curve, double level) {
  for (std::size_t k = 0; k < curve.size(); ++k)
    if (curve[k] >= level) return k + 1;
  return 0;
}

EncoderSpectrum summarize_spectrum(const std::vector<std::vector<SpectrumCurve>>& curves, std::size_t split) {
  EncoderSpectrum spectrum;
  spectrum.split = std::min(split, curves.size());
  std::size_t first = curves.size();  // the first layer with prefixes
  for (std::size_t l = 0; l < curves.size(); ++l) {
    if (curves[l].empty()) {
      spectrum.layers.emplace_back();
      continue;
    }
    if (first == curves.size()) {
      first = l;
      spectrum.examples = curves[l].size();
    }
    if (curves[l].size() != spectrum.examples)
      throw Error(fmt::format("spectrum: encoder layer {} has {} curves, layer {} has {}", l, curves[l].size(), first,
                              spectrum.examples));
    spectrum.layers.push_back(mean_curve(curves[l]));
    if (spectrum.layers[l].size() != spectrum.layers[first].size())
      throw Error(fmt::format("spectrum: encoder layer {} has {} prefixes, layer {} has {}", l,
                              spectrum.layers[l].size(), first, spectrum.layers[first].size()));
  }
  if (first == curves.size()) throw Error("spectrum: the model has no prefixes (no encoder layer has prefix slots)");
  spectrum.prefix_length = static_cast<std::int64_t>(spectrum.layers[first].size());
  // Every layer averages the same number of examples, so the mean of the layer means is the
  // mean over all (layer, example) curves of the half.
  spectrum.lower = half_curve(spectrum.layers, 0, spectrum.split);
  spectrum.upper = half_curve(spectrum.layers, spectrum.split, spectrum.layers.size());
  return spectrum;
}

nlohmann::ordered_json to_json(const EncoderSpectrum& spectrum) {
  nlohmann::ordered_json out;
  out["prefix_length"] = spectrum.prefix_length;
  out["examples"] = spectrum.examples;
  out["per_head"] = spectrum.per_head;
  out["silent_maps"] = spectrum.silent_maps;
  out["skipped_examples"] = spectrum.skipped_examples;
  out["split"] = spectrum.split;
  out["layers"] = nlohmann::ordered_json::array();
  for (const SpectrumCurve& curve : spectrum.layers)
    out["layers"].push_back(curve.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(curve));
  out["lower"] = half_json(spectrum, 0, spectrum.split, spectrum.lower);
  out["upper"] = half_json(spectrum, spectrum.split, spectrum.layers.size(), spectrum.upper);
  return out;
}

}  // namespace strata::analysis
