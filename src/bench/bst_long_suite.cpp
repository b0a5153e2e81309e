// Each stack runs in a child process of its own (child_process.h): it builds the layers and
// its input, runs one training step untimed, times the next ones and reports its peak memory.
#include "strata/bench/bst_long_suite.h"

#include <ATen/ops/randn.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "strata/bench/blas_info.h"
#include "strata/bench/child_process.h"
#include "strata/bench/session.h"
#include "strata/bench/table.h"
#include "strata/bench/timing.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/memory_reuse.h"
#include "strata/nn/block_state_layer.h"

namespace strata::bench {

namespace {

using Json = nlohmann::ordered_json;

constexpr std::int64_t kStackHeadDim = 16, kStackStates = 16;
constexpr double kStackBudgetMb = 2048;  // the "under 2 GB"

struct StackCase {
  const char* name;
  const char* label;
  bool block_state;  // BST:SH at the odd layers; false: SLIDE everywhere
};

const std::vector<StackCase>& stack_cases() {
  static const std::vector<StackCase> list{
      {"slide", "SLIDE layers only: own and previous block, causal", false},
      {"bst", "BST:SH (S4D SSM over the whole sequence) at the odd layers, SLIDE elsewhere", true},
  };
  return list;
}

nn::BlockStateOptions stack_layer_options(const BstLongBenchOptions& o, bool block_state) {
  nn::BlockStateOptions layer;
  layer.d_model = o.d_model;
  layer.heads = std::max<std::int64_t>(1, o.d_model / kStackHeadDim);
  layer.d_ff = 4 * o.d_model;
  layer.window = o.window;
  layer.dropout = 0;
  layer.block_state = block_state;
  layer.context = nn::ContextStates::SH;
  layer.ssm.kernel = "s4d";
  layer.ssm.states = kStackStates;
  layer.ssm.channels = std::max<std::int64_t>(1, o.d_model / 4);
  return layer;
}

// What a step must hold at once whatever the implementation: the input, each layer's output
// (the next one's input, read again in backward), the output gradient and the input's.
double held_tensors_mb(const BstLongBenchOptions& o) {
  return static_cast<double>((o.layers + 3) * o.length * o.d_model) * 4.0 / (1 << 20);
}

struct StackState {
  std::vector<nn::BlockStateLayer> layers;
  at::Tensor x, dout;
};

void run_child(const BstLongBenchOptions& o, const StackCase& c) {
  // Tensors here are L x D floats (256 MiB at 2^20 x 64): the heap reuse made for a training
  // step's many mid-sized blocks would keep their holes.
  map_large_blocks();
  prepare_child(o.run.threads);
  auto state = std::make_shared<StackState>();
  std::int64_t parameters = 0;
  for (std::int64_t i = 0; i < o.layers; ++i) {
    state->layers.emplace_back(stack_layer_options(o, c.block_state && i % 2 == 1));
    for (const at::Tensor& p : state->layers.back()->parameters()) parameters += p.numel();
  }
  state->x = at::randn({1, o.length, o.d_model}).requires_grad_(true);
  state->dout = at::randn({1, o.length, o.d_model});
  const std::int64_t span = o.span;
  const auto step = [state, span] {
    at::Tensor h = state->x;
    for (nn::BlockStateLayer& layer : state->layers) h = layer->forward_recomputed(h, span);
    // The output gradient enters as the derivative of <out, dout>: no product of their size is
    // made, and the dot keeps only dout (the output would serve dout's gradient, not asked
    // for), so the output is let go before backward.
    const at::Tensor loss = h.view(-1).dot(state->dout.view(-1));
    h.reset();
    loss.backward();
    state->x.mutable_grad().reset();
    for (nn::BlockStateLayer& layer : state->layers)
      for (at::Tensor& p : layer->parameters()) p.mutable_grad().reset();
  };
  MemoryMarks marks;
  const TimedRounds rounds = time_child_step(step, o.run.rounds, marks, 1);
  Json result{{"length", o.length}, {"parameters", parameters}};
  result.update(rounds.to_json());
  marks.add_to(result);
  write_file_atomic(o.run.child_out, result.dump());
}

void run_parent(const BstLongBenchOptions& o) {
  Session session("bst-long", {"strata", "bench", "bst-long"}, o.run, kBusyCores);
  const nn::BlockStateOptions layer = stack_layer_options(o, true);
  std::printf("bst-long: %ld layers (d_model %ld, %ld heads, d_ff %ld, pre-norm, no dropout), W = %ld, SSM s4d "
              "width %ld, N = %ld; batch 1, L = %ld, fp32, forward + backward (a fixed random output gradient), "
              "recomputed in spans of %ld tokens; %d threads, median of %d rounds%s\n",
              long(o.layers), long(o.d_model), long(layer.heads), long(layer.d_ff), long(o.window),
              long(layer.ssm.channels), long(kStackStates), long(o.length), long(o.span), o.run.threads, o.run.rounds,
              o.run.quick ? " (--quick)" : "");
  std::printf("BLAS: %s\n", blas_description().c_str());
  session.print_load();
  std::vector<std::string> names;
  for (const StackCase& c : stack_cases()) names.push_back(c.name);
  std::vector<std::string> args = o.run.child_args();
  for (const auto& [flag, value] : {std::pair{"--length", o.length}, std::pair{"--d-model", o.d_model},
                                    std::pair{"--layers", o.layers}, std::pair{"--window", o.window},
                                    std::pair{"--span", o.span}}) {
    args.push_back(flag);
    args.push_back(std::to_string(value));
  }
  session.measure(names, args);

  std::printf("\n");
  const double held_mb = held_tensors_mb(o);
  Table table({{"case", -6}, {"s", 8}, {"tokens/s", 10}, {"ratio", 7}, {"peak MB", 9}, {"under 2 GB", 10}});
  Json cases_json = Json::object();
  const std::string reference = stack_cases().front().name;
  for (const StackCase& c : stack_cases()) {
    const CaseMeasurement& r = session[c.name];
    const double seconds = session.median_ms(c.name) / 1000.0, ratio = session.ratio(c.name, reference);
    table.row({c.name, fixed(seconds, 2), fixed(static_cast<double>(o.length) / seconds, 0), fixed(ratio, 3),
               fixed(r.maxrss_mb, 0), r.maxrss_mb < kStackBudgetMb ? "yes" : "no"});
    session.check_noisy(c.name, r.result);
    Json entry = session.case_json(c.name, c.label);
    entry["tokens_per_s"] = static_cast<double>(o.length) / seconds;
    entry["ratio"] = ratio;
    entry["ratio_of"] = fmt::format("{}/{}", c.name, reference);
    entry["under_2_gb"] = r.maxrss_mb < kStackBudgetMb;
    cases_json[c.name] = std::move(entry);
  }
  table.print();
  std::printf("\n");
  for (const StackCase& c : stack_cases()) std::printf("%s: %s\n", c.name, c.label);
  std::printf("ratio: seconds over SLIDE's, measured in this run; peak MB: the child's whole process (ru_maxrss), "
              "libtorch included; a step must hold at least %.0f MB (the input, %ld layer outputs, the output "
              "gradient and the input's: %ld x L x D floats)\n",
              held_mb, long(o.layers), long(o.layers + 3));
  session.print_noisy();
  session.write_json({{"batch", 1},
                      {"length", o.length},
                      {"layers", o.layers},
                      {"d_model", o.d_model},
                      {"heads", layer.heads},
                      {"d_ff", layer.d_ff},
                      {"window", o.window},
                      {"ssm_channels", layer.ssm.channels},
                      {"states", kStackStates},
                      {"span", o.span},
                      {"dtype", "float32"},
                      {"step", "forward + backward with a fixed random output gradient, recomputed by span"}},
                     {{"held_tensors_mb", held_mb}, {"blas", blas_description()}}, std::move(cases_json));
}

}  // namespace

void run_bst_long_bench(BstLongBenchOptions o) {
  o.run.resolve(2, 1);
  if (o.length == 0) o.length = o.run.quick ? 65536 : 1048576;
  if (o.span % o.window != 0)
    throw Error(fmt::format("bench bst-long: --span {} must be a multiple of --window {}", o.span, o.window));
  if (!o.run.is_child()) return run_parent(o);
  for (const StackCase& c : stack_cases())
    if (o.run.child == c.name) return run_child(o, c);
  throw Error(fmt::format("bench bst-long: unknown case '{}'", o.run.child));
}

}  // namespace strata::bench
