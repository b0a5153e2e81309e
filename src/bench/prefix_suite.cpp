// As the other benches, every case runs in a child process of its own (child_process.h); two
// more children time every kind of layer alone and every case's step interleaved.
#include "strata/bench/prefix_suite.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/ones.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attention_alone.h"
#include "prefix_cases.h"
#include "strata/attn/block_mask.h"
#include "strata/bench/child_process.h"
#include "strata/bench/session.h"
#include "strata/bench/table.h"
#include "strata/bench/timing.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/models/prefix_settings.h"
#include "strata/nn/multi_head_attention.h"
#include "strata/nn/prefix_tuning.h"
#include "strata/nn/transformer_layers.h"

namespace strata::bench {

namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kKindsChild = "layer_kinds";  // the child that times each kind of layer alone
constexpr const char* kPairedChild = "paired";      // the child that interleaves every case's step
constexpr const char* kPlainKind = "plain";         // the kinds' reference: a plain layer with prefixes

std::size_t index_of(const std::vector<std::string>& names, const std::string& name) {
  return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
}

// ---- the children -----------------------------------------------------------------------

// Which pairs the model's attention really gives weight to: every layer's weights over the
// prefix slots and the keys proper (the attention module records them with the dense
// reference kernel). Adds layer_visible and layer_prefix_visible to `result`.
void add_visibility(PrefixedEncoder& state, std::int64_t prefix, Json& result) {
  std::vector<double> visible, prefix_visible;
  at::NoGradGuard no_grad;
  for (const auto& layer : *state.encoder->layers) layer->as<nn::EncoderLayer>()->self_attn->record_weights(true);
  (void)state.encoder->forward(state.ids, state.padding, &state.tokens, &state.layer_prefixes);
  for (const auto& layer : *state.encoder->layers) {
    nn::MultiHeadAttention& attention = layer->as<nn::EncoderLayer>()->self_attn;
    const at::Tensor nonzero = attention->recorded_weights().ne(0);  // [1, H, L, P + L]
    visible.push_back(nonzero.to(at::kDouble).mean().item<double>());
    if (prefix > 0) prefix_visible.push_back(nonzero.narrow(3, 0, prefix).to(at::kDouble).mean().item<double>());
    attention->record_weights(false);
  }
  result["layer_visible"] = visible;
  result["layer_prefix_visible"] = prefix_visible;
}

void run_case_child(const PrefixBenchOptions& o, const PrefixCase& c) {
  prepare_child(o.run.threads);
  const std::shared_ptr<PrefixedEncoder> state = build_encoder(c, o);
  MemoryMarks marks;
  const TimedRounds rounds = time_child_step([state] { state->step(); }, o.run.rounds, marks);
  Json result{{"recipe", c.recipe}, {"prefix_len", c.prefix}, {"layer_kinds", c.kinds}};
  result.update(rounds.to_json());
  result["cpu_ms"] = rounds.cpu_ms_per_round;
  add_visibility(*state, c.prefix, result);  // after the timing and the memory peak
  marks.add_to(result);
  write_file_atomic(o.run.child_out, result.dump());
}

// Visited and partial tiles of the block mask the kernel runs for a call, as shares of all pairs.
Json tile_stats(const attn::AttentionCall& call) {
  const attn::BlockMask mask = attn::fused_block_mask(call);
  return {{"tile", mask.q_tile},
          {"tile_density", mask.tile_density()},
          {"partial_fraction", mask.partial_density()}};
}

// One layer's attention of every kind, timed in one process and interleaved; the ratio to
// plain is the median of the per-round ratios.
void run_kinds_child(const PrefixBenchOptions& o, const std::vector<PrefixCase>& cases) {
  prepare_child(o.run.threads);
  const std::vector<LayerKind> kinds = layer_kinds(cases);
  std::vector<std::unique_ptr<attn::TokenLayout>> layouts;  // the calls point at them
  std::vector<std::shared_ptr<AttentionAlone>> calls;
  std::vector<std::function<void(int)>> steps;
  std::vector<std::string> names;
  for (const LayerKind& k : kinds) {
    auto tokens = std::make_unique<attn::TokenLayout>();
    const bool blocked = k.prefix > 0 && k.blocks > 1;  // as build_encoder
    if (blocked) tokens->segment = nn::encoder_segments(at::ones({1, o.length}, at::kBool), o.length, k.blocks);
    calls.push_back(attention_alone(k.spec, *tokens, o.length, o.heads, o.d_model / o.heads, k.prefix,
                                    blocked ? nn::prefix_groups(k.prefix, k.blocks) : at::Tensor()));
    layouts.push_back(std::move(tokens));
    calls.back()->step();  // warm-up
    steps.push_back([call = calls.back()](int) { call->step(); });
    names.push_back(k.name);
  }
  const int rounds = 3 * o.run.rounds;
  const Interleaved t = interleave(steps, rounds, kBusyCores);
  const std::size_t plain = index_of(names, kPlainKind);
  Json result = Json::object();
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    Json entry{{"attention_layer_ms", t.median_ms(k)},
               {"attention_layer_cpu_ms", t.median_cpu_ms(k)},
               {"vs_plain", t.paired_ratio(k, plain)},
               {"cpu_vs_plain", t.paired_cpu_ratio(k, plain)},
               {"rounds", rounds},
               {"busy_rounds_included", t.busy_rounds_included}};
    entry.update(tile_stats(calls[k]->call));
    result[names[k]] = std::move(entry);
  }
  write_file_atomic(o.run.child_out, result.dump());
}

// Every case's encoder in one process, their steps interleaved, so a neighbour's load falls
// on all cases alike. (Memory is not measured here: the cases' own children do that.)
void run_paired_child(const PrefixBenchOptions& o, const std::vector<PrefixCase>& cases) {
  prepare_child(o.run.threads);
  std::vector<std::function<void(int)>> steps;
  std::vector<std::string> names;
  for (const PrefixCase& c : cases) {
    const std::shared_ptr<PrefixedEncoder> state = build_encoder(c, o);
    state->step();  // warm-up
    steps.push_back([state](int) { state->step(); });
    names.push_back(c.name);
  }
  const Interleaved t = interleave(steps, o.run.rounds, kBusyCores);
  const std::size_t reference = index_of(names, kPrefixReference);
  Json result = Json::object();
  for (std::size_t k = 0; k < cases.size(); ++k)
    result[names[k]] = {{"paired_ms", t.median_ms(k)},
                        {"paired_cpu_ms", t.median_cpu_ms(k)},
                        {"paired_ratio", t.paired_ratio(k, reference)},
                        {"paired_cpu_ratio", t.paired_cpu_ratio(k, reference)},
                        {"paired_round_ms", t.ms[k]}};
  write_file_atomic(o.run.child_out, result.dump());
}

// ---- the parent: spawn, collect, compare ------------------------------------------------

double mean_of(const Json& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (const Json& v : values) sum += v.get<double>();
  return sum / static_cast<double>(values.size());
}

std::vector<std::string> child_args(const PrefixBenchOptions& o) {
  std::vector<std::string> args = o.run.child_args();
  for (const std::string& word :
       {std::string("--length"), std::to_string(o.length), std::string("--prefixes"), std::to_string(o.prefixes),
        std::string("--blocks"), std::to_string(o.blocks), std::string("--layers"), std::to_string(o.layers),
        std::string("--d-model"), std::to_string(o.d_model), std::string("--heads"), std::to_string(o.heads),
        std::string("--d-ff"), std::to_string(o.d_ff), std::string("--top-p"), fmt::format("{}", o.top_p),
        std::string("--tau"), fmt::format("{}", o.tau)})
    args.push_back(word);
  return args;
}

void run_parent(const PrefixBenchOptions& o, const std::vector<PrefixCase>& cases) {
  Session session("prefix", {"strata", "bench", "prefix"}, o.run, kBusyCores);
  const PrefixCase& reference = *std::find_if(cases.begin(), cases.end(),
                                              [](const PrefixCase& c) { return c.name == kPrefixReference; });
  const std::int64_t split = models::hierarchy_split(reference.model, o.layers);
  std::printf("prefix: encoder of %ld layers (d_model %ld, %ld heads of %ld, d_ff %ld), batch 1, L = %ld input "
              "tokens, P = %ld prefixes a layer, K = %ld segments and prefix groups, lower layers: 0..%ld; fp32, "
              "fused kernel, training mode; backbone frozen, forward + backward of sum(hidden^2) to the prefix "
              "keys and values; top-p %.2f, Gumbel tau %.2f; %d threads, median of %d rounds\n",
              long(o.layers), long(o.d_model), long(o.heads), long(o.d_model / o.heads), long(o.d_ff), long(o.length),
              long(o.prefixes), long(o.blocks), long(split - 1), o.top_p, o.tau, o.run.threads, o.run.rounds);
  std::printf("cases from the recipes:");
  for (const PrefixCase& c : cases) std::printf(" %s (%s)", c.name.c_str(), c.recipe.c_str());
  std::printf("\n");
  session.print_load();

  std::vector<std::string> names;
  for (const PrefixCase& c : cases) names.push_back(c.name);
  names.push_back(kKindsChild);
  names.push_back(kPairedChild);
  session.measure(names, child_args(o));

  // Each case's attention: its layers' kinds, timed alone by the kinds child.
  const Json& kinds = session.result(kKindsChild);
  std::map<std::string, double> attention_of, attention_cpu_of;
  for (const PrefixCase& c : cases)
    for (const std::string& kind : c.kinds) {
      attention_of[c.name] += kinds[kind]["attention_layer_ms"].get<double>();
      attention_cpu_of[c.name] += kinds[kind]["attention_layer_cpu_ms"].get<double>();
    }
  const double reference_cpu = session.result(kPrefixReference)["cpu_ms"].get<double>();
  const double reference_attention = attention_of[kPrefixReference];
  const double reference_attention_cpu = attention_cpu_of[kPrefixReference];
  const Json& paired = session.result(kPairedChild);

  std::printf("\n");
  Table table({{"case", -17}, {"ms", 9}, {"ratio", 6}, {"paired", 7}, {"cpu", 7}, {"attn ms", 9}, {"ratio", 6},
               {"cpu", 7}, {"visible", 8}, {"prefix", 8}, {"peak MB", 7}});
  Json cases_json = Json::object();
  for (const PrefixCase& c : cases) {
    const CaseMeasurement& r = session[c.name];
    const double ms = session.median_ms(c.name);
    const double cpu = r.result["cpu_ms"].get<double>();
    const double attention = attention_of[c.name], attention_cpu = attention_cpu_of[c.name];
    const double visible = mean_of(r.result["layer_visible"]);
    const bool has_prefix = !r.result["layer_prefix_visible"].empty();
    const double prefix_visible = mean_of(r.result["layer_prefix_visible"]);
    const Json& pair = paired[c.name];
    table.row({c.name, fixed(ms, 1), fixed(session.ratio(c.name, kPrefixReference), 3),
               fixed(pair["paired_ratio"].get<double>(), 3), fixed(pair["paired_cpu_ratio"].get<double>(), 3),
               fixed(attention, 1), fixed(attention / reference_attention, 3),
               fixed(attention_cpu / reference_attention_cpu, 3), fixed(visible, 4),
               has_prefix ? fixed(prefix_visible, 4) : "-", fixed(r.hwm_mb, 0)});
    session.check_noisy(c.name, r.result);
    Json entry = session.case_json(c.name, c.label);
    entry["ratio"] = session.ratio(c.name, kPrefixReference);
    entry["ratio_of"] = fmt::format("{}/{}", c.name, kPrefixReference);
    entry["cpu_ratio"] = cpu / reference_cpu;
    entry.update(pair);
    entry["attention_ms"] = attention;
    entry["attention_cpu_ms"] = attention_cpu;
    entry["attention_ratio"] = attention / reference_attention;
    entry["attention_cpu_ratio"] = attention_cpu / reference_attention_cpu;
    Json used = Json::object();
    for (const std::string& kind : c.kinds) used[kind] = kinds[kind];
    entry["kinds"] = std::move(used);
    entry["visible_fraction"] = visible;
    entry["prefix_visible_fraction"] = has_prefix ? Json(prefix_visible) : Json(nullptr);
    entry["peak_rss_mb"] = r.hwm_mb;  // the timed rounds' peak: the analyses after them aside
    entry["process_maxrss_mb"] = r.maxrss_mb;
    cases_json[c.name] = std::move(entry);
  }
  table.print();
  std::printf("\nms: median wall time of a step, the case alone in its process; ratio: against %s, this run; "
              "paired: the median ratio when every case's step runs interleaved in one process (a neighbour's "
              "load falls on all alike), wall clock, then CPU time (the process's, every thread); attn ms: the "
              "case's layers' attention alone (one call each, forward + backward, random q k v of the model's "
              "shapes; the kinds below, summed over the layers), its ratio, wall clock, then CPU time; visible: "
              "fraction of (query, key) pairs with a nonzero weight in the model, mean over layers and heads; "
              "prefix: the same over (query, prefix slot) pairs; peak MB: the case's process at the end of its "
              "timed rounds (VmHWM)\n",
              kPrefixReference);
  std::printf("\nper layer kind: one layer's attention alone, every kind in one process, interleaved (%d rounds); "
              "vs plain: the median of the per-round ratios to plain (with prefixes); the tiles its block mask "
              "visits, and the partial ones\n",
              kinds[kPlainKind]["rounds"].get<int>());
  Table kind_table({{"kind", -21}, {"ms", 9}, {"vs plain", 9}, {"cpu ms", 9}, {"vs plain", 9},
                    {"tiles visited", 13}, {"partial", 9}});
  for (const auto& [name, k] : kinds.items()) {
    kind_table.row({name, fixed(k["attention_layer_ms"].get<double>(), 1), fixed(k["vs_plain"].get<double>(), 3),
                    fixed(k["attention_layer_cpu_ms"].get<double>(), 1), fixed(k["cpu_vs_plain"].get<double>(), 3),
                    fixed(100 * k["tile_density"].get<double>(), 1) + "%",
                    fixed(100 * k["partial_fraction"].get<double>(), 1) + "%"});
    session.check_noisy(name, k);
  }
  kind_table.print();
  for (const PrefixCase& c : cases) std::printf("%-17s %s (recipe %s)\n", c.name.c_str(), c.label.c_str(), c.recipe.c_str());
  session.print_noisy();
  const double hier = session.ratio("hierblock", kPrefixReference), trunc = session.ratio("truncsa", kPrefixReference);
  std::printf("\nHierBlock / Prefix-tune = %.3f, TruncSA / Prefix-tune = %.3f (encoder forward + backward, "
              "L = %ld, P = %ld; paired: %.3f and %.3f)\n",
              hier, trunc, long(o.length), long(o.prefixes), paired["hierblock"]["paired_ratio"].get<double>(),
              paired["truncsa"]["paired_ratio"].get<double>());

  session.write_json(
      {{"batch", 1},
       {"length", o.length},
       {"prefixes", o.prefixes},
       {"blocks", o.blocks},
       {"layers", o.layers},
       {"lower_layers", split},
       {"d_model", o.d_model},
       {"heads", o.heads},
       {"head_dim", o.d_model / o.heads},
       {"d_ff", o.d_ff},
       {"top_p", o.top_p},
       {"tau", o.tau},
       {"dtype", "float32"},
       {"kernel", "fused"},
       {"step",
        "encoder forward (training mode) + backward of sum(hidden^2); backbone frozen, gradients for the "
        "prefix keys and values of every layer"}},
      {{"reference", kPrefixReference},
       {"hierblock_ratio", hier},
       {"truncsa_ratio", trunc},
       {"hierblock_paired_ratio", paired["hierblock"]["paired_ratio"]},
       {"truncsa_paired_ratio", paired["truncsa"]["paired_ratio"]},
       {"kinds", kinds},
       {"memory_method",
        "each case in a child process: peak_rss_mb = its VmHWM after the timed rounds; rss_growth_mb = that "
        "minus VmRSS once the model and inputs were built; process_maxrss_mb = its ru_maxrss, the analyses "
        "after the timing included"}},
      std::move(cases_json));
}

void check_options(const PrefixBenchOptions& o) {
  if (o.d_model % o.heads != 0)
    throw Error(fmt::format("bench prefix: --d-model {} is not divisible by --heads {}", o.d_model, o.heads));
  if (!(o.top_p > 0 && o.top_p <= 1)) throw Error(fmt::format("bench prefix: --top-p {} must lie in (0, 1]", o.top_p));
  if (!(o.tau > 0)) throw Error(fmt::format("bench prefix: --tau {} must be positive", o.tau));
}

}  // namespace

void run_prefix_bench(PrefixBenchOptions o) {
  o.run.resolve(5, 5);
  check_options(o);
  const std::vector<PrefixCase> cases = prefix_cases(o);
  if (!o.run.is_child()) return run_parent(o, cases);
  if (o.run.child == kKindsChild) return run_kinds_child(o, cases);
  if (o.run.child == kPairedChild) return run_paired_child(o, cases);
  const auto c = std::find_if(cases.begin(), cases.end(), [&](const PrefixCase& k) { return o.run.child == k.name; });
  if (c == cases.end()) throw Error(fmt::format("bench prefix: unknown case '{}'", o.run.child));
  run_case_child(o, *c);
}

}  // namespace strata::bench
