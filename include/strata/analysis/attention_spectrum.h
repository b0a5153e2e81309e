#pragma once
// Spectrum analysis of the attention on prefix slots (seed 000 §6.3, Appendix A.7, Figure 7):
// for an encoder layer's head-averaged self-attention A [Lq, P + Lk] of one example, A_p is its
// first P columns (the prefix keys) over the real query rows; with s_1 >= s_2 >= ... the
// singular values of A_p, the normalised cumulative curve is
//   c_k = (s_1 + ... + s_k) / (s_1 + ... + s_m),   k = 1 … P,  m = min(Lq, P).
// A curve that rises fast (a high "elbow") means the prefix attention is nearly low-rank: a
// few directions carry it. Curves are averaged over examples, and over the lower and the upper
// encoder layers, which Figure 7 draws side by side.
#include <ATen/core/Tensor.h>
#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace strata::analysis {

using SpectrumCurve = std::vector<double>;  // c_1 … c_P, non-decreasing, the last 1

// The curve of A_p [Lq, P] (any floating type). When Lq < P the missing singular values are 0,
// so the curve stays at 1 up to k = P and curves of short and long examples average alike.
// strata::Error when A_p is not 2-D, has no column (the model has no prefixes) or no row, or
// puts no weight at all on the prefixes (no spectrum to normalise).
SpectrumCurve cumulative_spectrum(const at::Tensor& prefix_attention);

// The curve of a head-averaged attention map [Lq, P + Lk] whose first P columns are the
// prefix slots. strata::Error "the model has no prefixes" when prefix_length is 0.
SpectrumCurve prefix_spectrum(const at::Tensor& attention, std::int64_t prefix_length);

// The mean curve of those maps ([Lq, P + Lk] each, e.g. one example's heads in one layer) that
// put any weight on their first P columns; the others are counted in `silent` (TruncSA can
// truncate every prefix key away from a head). Empty when none does.
SpectrumCurve mean_prefix_spectrum(const std::vector<at::Tensor>& maps, std::int64_t prefix_length, std::size_t& silent);

// The element-wise mean; strata::Error when there is no curve or their lengths differ.
SpectrumCurve mean_curve(std::span<const SpectrumCurve> curves);

// The normalised area under the curve, (c_1 + … + c_P) / P, in (0, 1]: 1 when all the mass is
// in the first singular value, (P + 1) / (2P) for P equal singular values. 0 for no curve.
double curve_area(std::span<const double> curve);

// The smallest k (from 1) with c_k >= level; 0 when the curve never gets there.
std::size_t index_reaching(std::span<const double> curve, double level);

struct EncoderSpectrum {
  std::int64_t prefix_length = 0;
  std::size_t examples = 0;
  bool per_head = false;  // the curves are each head's, not the head-averaged map's
  std::size_t silent_maps = 0;       // maps (heads, per_head) with no weight on the prefixes, left out
  std::size_t skipped_examples = 0;  // examples left out: a layer of theirs had no map with weight
  std::size_t split = 0;  // encoder layers [0, split) are the lower ones, the rest the upper
  // Per encoder layer, the mean over examples; empty for a layer without prefixes.
  std::vector<SpectrumCurve> layers;
  // The mean over examples and over the layers with prefixes of each half; empty when the half
  // has none.
  SpectrumCurve lower, upper;
};

// curves[layer][example] (no curve for a layer without prefixes) -> the per-layer means and
// the lower / upper averages, layers below `split` being the lower ones (the model's
// hierarchy_split, models/prefix_design.h, so that a hierarchical design's halves are the
// ones it treats apart). strata::Error "the model has no prefixes" when no layer has a curve,
// and when the layers with curves differ in example count or curve length.
EncoderSpectrum summarize_spectrum(const std::vector<std::vector<SpectrumCurve>>& curves, std::size_t split);

// {"prefix_length", "examples", "per_head", "split", "layers": [[c_1 …] or null, …],
//  "lower": {"layers": [those with prefixes], "curve": [...], "area": curve_area,
//  "index_90": index_reaching 0.9 (null when never)}, "upper": {...}}; a half without a
//  layer with prefixes is null.
nlohmann::ordered_json to_json(const EncoderSpectrum& spectrum);

}  // namespace strata::analysis
