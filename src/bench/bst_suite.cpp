// Each (layer, length) runs in a child process of its own (child_process.h): it builds one
// layer and its input, warms up, times forward passes (no gradient, as Fig. 5.4), sets aside
// rounds disturbed by other processes and reports the median and its peak memory.
#include "strata/bench/bst_suite.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/randn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "strata/bench/child_process.h"
#include "strata/bench/session.h"
#include "strata/bench/table.h"
#include "strata/bench/timing.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/nn/block_state_layer.h"

namespace strata::bench {

namespace {

using Json = nlohmann::ordered_json;

constexpr std::int64_t kBstDModel = 256, kBstHeads = 8, kBstDff = 1024, kStates = 16, kFilters = 32;
constexpr const char* kBstReference = "slide";
constexpr const char* kBstFlopsAccounting =
    "2 flops a multiply-add; attention 4 D flops a visible (query, key) pair; a real FFT of n points "
    "2.5 n log2 n; S4D's kernel as its complex matrix product (8 flops a complex multiply-add) and one "
    "complex exponential (8) a mode and position";

struct BstCase {
  const char* name;
  const char* label;
  bool block_state;
  nn::ContextStates context;
};

const std::vector<BstCase>& bst_cases() {
  static const std::vector<BstCase> list{
      {"slide", "SLIDE: own and previous block, causal", false, nn::ContextStates::SH},
      {"bst_sh", "BST:SH: + SSM, one filter, states at the block's own positions", true, nn::ContextStates::SH},
      {"bst_mh", "BST:MH: + SSM, one output matrix a head", true, nn::ContextStates::MH},
      {"bst_mf", "BST:MF: + SSM, 32 filters read at the previous block's end", true, nn::ContextStates::MF},
      {"brect", "BRecT: W state vectors, updated block by block (sequential), no SSM", true,
       nn::ContextStates::Recurrent},
  };
  return list;
}

nn::BlockStateOptions layer_options(const BstCase& c, const BstBenchOptions& o) {
  nn::BlockStateOptions layer;
  layer.d_model = kBstDModel;
  layer.heads = kBstHeads;
  layer.d_ff = kBstDff;
  layer.window = o.window;
  layer.dropout = 0;
  layer.block_state = c.block_state;
  layer.context = c.context;
  layer.filters = c.context == nn::ContextStates::Recurrent ? o.window : kFilters;  // BRecT: S = W, as Meliad
  layer.ssm.kernel = o.kernel;
  layer.ssm.states = kStates;
  layer.ssm.channels = kBstDModel / (c.context == nn::ContextStates::MF ? 8 : 4);
  layer.ssm.filter_length = 1024;
  return layer;
}

// Visible (query, key) pairs of SLIDE (keys from the previous block's start) or of SH / MH's
// cross-attention (keys from the own block's start), causal.
double block_pairs(std::int64_t length, std::int64_t window, std::int64_t blocks_before) {
  double pairs = 0;
  for (std::int64_t i = 0; i < length; ++i)
    pairs += static_cast<double>(i - std::max<std::int64_t>(0, (i / window - blocks_before) * window) + 1);
  return pairs;
}

// One layer's forward flops under kBstFlopsAccounting.
double layer_flops(const BstCase& c, const BstBenchOptions& o, std::int64_t length) {
  const nn::BlockStateOptions l = layer_options(c, o);
  const double L = static_cast<double>(length), D = kBstDModel, F = kBstDff, W = static_cast<double>(o.window);
  double flops = 2 * L * D * D * 3 + 4 * L * D * F + 4 * D * block_pairs(length, o.window, 1);
  flops += 2 * L * (c.block_state ? 2 * D : D) * D;  // the output projection
  if (!c.block_state) return flops;
  if (c.context == nn::ContextStates::Recurrent) {
    const double blocks = std::ceil(L / W), S = static_cast<double>(l.filters);
    flops += 2 * L * D * D + 4 * D * L * S;  // the tokens' second queries and their cross-attention
    flops += blocks * 4 * S * D * D;         // the state's keys and values, every block
    // and, for every block but the last, its two queries, self- and block-attention, projection
    flops += (blocks - 1) * (4 * S * D * D + 4 * D * S * S + 4 * D * S * 2 * W + 4 * S * D * D);
    return flops;
  }
  const double C = static_cast<double>(l.ssm.channels), N = kStates;
  const double O = c.context == nn::ContextStates::SH ? 1 : c.context == nn::ContextStates::MH ? kBstHeads : kFilters;
  const double n = 2 * L;
  flops += 2 * L * D * D + 2 * L * D * C;                              // second queries, SSM input
  if (o.kernel == "s4d")
    flops += 8 * O * C * (N / 2) * L + 8 * C * (N / 2) * L;            // kernel: product + exponentials
  else
    flops += 2 * L * (9 * 64 + 64 * 64 + 64 * O * C);                  // kernel: the filter MLP
  flops += (C + 2 * O * C) * 2.5 * n * std::log2(n) + 6 * O * C * (L + 1) + 2 * O * C * L;  // FFT conv, skip
  if (c.context == nn::ContextStates::MF) {
    const double blocks = std::ceil(L / W);
    flops += 2 * (blocks - 1) * kFilters * C * D + 4 * blocks * kFilters * D * D;  // lift, keys and values
    flops += 4 * D * L * kFilters;                                                 // cross-attention
  } else {
    flops += 4 * L * C * D + 4 * D * block_pairs(length, o.window, 0);
  }
  return flops;
}

std::string case_name(const BstCase& c, std::int64_t length) { return fmt::format("{}@{}", c.name, length); }

// ---- the child: one layer at one length ------------------------------------------------

void run_child(const BstBenchOptions& o, const BstCase& c, std::int64_t length) {
  prepare_child(o.run.threads);
  auto layer = std::make_shared<nn::BlockStateLayer>(layer_options(c, o));
  (*layer)->eval();
  const at::Tensor x = at::randn({1, length, kBstDModel});
  const auto step = [layer, x] {
    at::NoGradGuard no_grad;
    (void)(*layer)->forward(x);
  };
  MemoryMarks marks;
  const TimedRounds rounds = time_child_step(step, o.run.rounds, marks);
  Json result{{"length", length}};
  result.update(rounds.to_json());
  marks.add_to(result);
  write_file_atomic(o.run.child_out, result.dump());
}

// ---- the parent ------------------------------------------------------------------------

void run_parent(const BstBenchOptions& o) {
  Session session("bst", {"strata", "bench", "bst"}, o.run, kBusyCores);
  std::printf("bst: one layer (d_model %ld, %ld heads, d_ff %ld, ReLU, pre-norm), batch 1, fp32, forward only "
              "(no gradient), W = %ld, SSM %s with N = %ld, width D/4 (MF: D/8, %ld filters), fused kernel; "
              "%d threads, median of %d rounds\n",
              long(kBstDModel), long(kBstHeads), long(kBstDff), long(o.window), o.kernel.c_str(), long(kStates),
              long(kFilters), o.run.threads, o.run.rounds);
  session.print_load();
  std::vector<std::string> names;
  for (std::int64_t length : o.lengths)
    for (const BstCase& c : bst_cases()) names.push_back(case_name(c, length));
  std::vector<std::string> args = o.run.child_args();
  for (const std::string& word : {std::string("--window"), std::to_string(o.window), std::string("--kernel"), o.kernel})
    args.push_back(word);
  std::string lengths;
  for (std::int64_t length : o.lengths) {
    if (!lengths.empty()) lengths += ',';
    lengths += std::to_string(length);
  }
  args.push_back("--lengths");
  args.push_back(lengths);
  session.measure(names, args);

  std::printf("\n");
  Table table({{"length", 8}, {"case", -8}, {"ms", 10}, {"ratio", 7}, {"GFLOP", 8}, {"flops ratio", 11},
               {"GFLOP/s", 8}, {"peak MB", 8}});
  Json cases_json = Json::object();
  for (std::int64_t length : o.lengths) {
    const double reference_flops = layer_flops(bst_cases().front(), o, length);
    for (const BstCase& c : bst_cases()) {
      const std::string name = case_name(c, length), reference = case_name(bst_cases().front(), length);
      const double ms = session.median_ms(name), ratio = session.ratio(name, reference);
      const double flops = layer_flops(c, o, length);
      table.row({std::to_string(length), c.name, fixed(ms, 2), fixed(ratio, 3), fixed(flops / 1e9, 2),
                 fixed(flops / reference_flops, 3), fixed(flops / 1e6 / ms, 1), fixed(session[name].maxrss_mb, 0)});
      session.check_noisy(name, session.result(name));
      Json entry = session.case_json(name, c.label);
      entry["layer"] = c.name;
      entry["ratio"] = ratio;
      entry["ratio_of"] = fmt::format("{}/{}", c.name, kBstReference);
      entry["flops"] = flops;
      entry["flops_ratio"] = flops / reference_flops;
      cases_json[name] = std::move(entry);
    }
  }
  table.print();
  std::printf("\n");
  for (const BstCase& c : bst_cases()) std::printf("%s: %s\n", c.name, c.label);
  std::printf("ratio: ms over SLIDE's at the same length, measured in this run; flops: %s\n", kBstFlopsAccounting);
  session.print_noisy();
  session.write_json({{"batch", 1},
                      {"lengths", o.lengths},
                      {"window", o.window},
                      {"kernel", o.kernel},
                      {"d_model", kBstDModel},
                      {"heads", kBstHeads},
                      {"d_ff", kBstDff},
                      {"states", kStates},
                      {"filters", kFilters},
                      {"dtype", "float32"},
                      {"step", "one layer's forward pass, no gradient"},
                      {"flops_accounting", kBstFlopsAccounting}},
                     Json::object(), std::move(cases_json));
}

}  // namespace

void run_bst_bench(BstBenchOptions o) {
  o.run.resolve(5, 2);
  if (o.lengths.empty())
    o.lengths = o.run.quick ? std::vector<std::int64_t>{1024, 4096} : std::vector<std::int64_t>{1024, 4096, 16384, 65536};
  if (o.kernel != "s4d" && o.kernel != "unstructured")
    throw Error("bench bst: --kernel must be s4d or unstructured, got '" + o.kernel + "'");
  if (!o.run.is_child()) return run_parent(o);
  for (std::int64_t length : o.lengths)
    for (const BstCase& c : bst_cases())
      if (o.run.child == case_name(c, length)) return run_child(o, c, length);
  throw Error(fmt::format("bench bst: unknown case '{}'", o.run.child));
}

}  // namespace strata::bench
