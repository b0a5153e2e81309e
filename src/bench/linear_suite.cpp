#include "strata/bench/linear_suite.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/bench/blas_info.h"
#include "strata/bench/cpu_ceiling.h"
#include "strata/bench/table.h"
#include "strata/bench/timing.h"
#include "strata/core/files.h"
#include "strata/nn/linear_product.h"

namespace strata::bench {

namespace {

using Json = nlohmann::ordered_json;

struct Layer {
  const char* name;
  std::int64_t in, out;
};

// bench_training's model: attention projections, the feed-forward pair, the output projection.
const std::vector<Layer>& layers() {
  static const std::vector<Layer> all{{"q/k/v/out 256->256", 256, 256},
                                      {"fc1 256->1024", 256, 1024},
                                      {"fc2 1024->256", 1024, 256},
                                      {"lm_head 256->8000", 256, 8000}};
  return all;
}

// Forward + backward of sum(y * g) through `product`, the leaves' gradients cleared first.
template <class Product>
void step(Product product, at::Tensor& x, at::Tensor& w, at::Tensor& b, const at::Tensor& g) {
  for (at::Tensor* leaf : {&x, &w, &b})
    if (leaf->grad().defined()) leaf->mutable_grad().zero_();
  (product(x, w, b) * g).sum().backward();
}

}  // namespace

void run_linear_bench(LinearBenchOptions o) {
  o.run.resolve(9, 2);
  if (o.rows == 0) o.rows = o.run.quick ? 512 : 4096;
  at::set_num_threads(o.run.threads);
  std::printf("linear products: forward + backward (y, dx, dW, db) of bench_training's linear layers, %ld rows, "
              "fp32, %d threads, median of %d rounds%s\n",
              long(o.rows), o.run.threads, o.run.rounds, o.run.quick ? " (--quick)" : "");
  std::printf("BLAS: %s\n", blas_description().c_str());
  const double peak = fma_peak_gflops(o.run.threads);
  std::printf("CPU: %s; %s\n", describe(this_cpu()).c_str(), describe_peak(peak, o.run.threads).c_str());
  std::printf("strata's product: %s (STRATA_LINEAR=libtorch in the environment runs libtorch's in strata's layers)\n",
              nn::linear_products());

  Table table({{"layer", -20}, {"strata ms", 10}, {"libtorch ms", 12}, {"libtorch/strata", 16}, {"strata GFLOP/s", 15},
               {"libtorch GFLOP/s", 17}, {"strata/peak", 12}});
  Json cases = Json::object();
  torch::manual_seed(1);
  for (const Layer& layer : layers()) {
    // [batch, length, in], as the layers get it: libtorch 1.13's linear runs such an input as
    // matmul and then adds the bias in a pass of its own (a [rows, in] one as addmm).
    at::Tensor x = torch::randn({1, o.rows, layer.in}).requires_grad_(true);
    at::Tensor w = (torch::randn({layer.out, layer.in}) * 0.05).requires_grad_(true);
    at::Tensor b = torch::zeros({layer.out}).requires_grad_(true);
    const at::Tensor g = torch::randn({1, o.rows, layer.out});
    auto ours = [](const at::Tensor& xx, const at::Tensor& ww, const at::Tensor& bb) {
      return nn::linear_product(xx, ww, bb);
    };
    auto theirs = [](const at::Tensor& xx, const at::Tensor& ww, const at::Tensor& bb) {
      return torch::nn::functional::linear(xx, ww, bb);
    };
    for (int warm = 0; warm < 2; ++warm) {
      step(ours, x, w, b, g);
      step(theirs, x, w, b, g);
    }
    const Interleaved t = interleave({[&](int) { step(ours, x, w, b, g); }, [&](int) { step(theirs, x, w, b, g); }},
                                     o.run.rounds, kBusyCores);
    // Three products of rows x in x out, two flops a multiply-add.
    const double gflop = 3 * 2.0 * double(o.rows) * double(layer.in) * double(layer.out) / 1e9;
    const double ours_ms = t.median_ms(0), theirs_ms = t.median_ms(1), ratio = 1 / t.paired_ratio(0, 1);
    const double ours_gflops = gflop / ours_ms * 1e3;
    table.row({layer.name, fixed(ours_ms, 2), fixed(theirs_ms, 2), fixed(ratio, 2), fixed(ours_gflops, 1),
               fixed(gflop / theirs_ms * 1e3, 1), fixed(ours_gflops / peak, 3)});
    cases[layer.name] = {{"strata_ms", ours_ms},       {"libtorch_ms", theirs_ms},
                         {"libtorch_over_strata", ratio}, {"gflop", gflop},
                         {"strata_of_peak", ours_gflops / peak}, {"busy_rounds_included", t.busy_rounds_included}};
  }
  table.print();
  std::printf("libtorch/strata > 1: strata's product is faster (paired per round); rounds with other processes "
              "above %.1f cores are set aside when enough are quiet\n", kBusyCores);
  if (!o.run.json.empty()) {
    const Json result{{"benchmark", "linear"}, {"rows", o.rows}, {"threads", o.run.threads}, {"rounds", o.run.rounds},
                      {"quick", o.run.quick}, {"blas", blas_description()}, {"cpu", describe(this_cpu())},
                      {"fma_peak_gflops", peak}, {"strata_product", nn::linear_products()},
                      {"cases", cases}};
    write_file_atomic(o.run.json, result.dump(2) + "\n");
    std::printf("results: %s\n", o.run.json.c_str());
  }
}

}  // namespace strata::bench
