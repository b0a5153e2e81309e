// As `strata bench attention`: every case runs in a child process of its own that builds the
// encoder and the document layout, warms up, times rounds, sets aside rounds disturbed by
// other processes and reports the median, with its resident memory once the inputs were built
// and its peak after the last round; the parent adds ru_maxrss.
#include "strata/bench/hibrids_suite.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/ones.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "strata/attn/spec.h"
#include "strata/attn/token_layout.h"
#include "strata/bench/child_process.h"
#include "strata/bench/recipe_model.h"
#include "strata/bench/session.h"
#include "strata/bench/table.h"
#include "strata/bench/timing.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/doc/layout.h"
#include "strata/models/model_config.h"
#include "strata/models/model_layers.h"
#include "strata/nn/multi_head_attention.h"
#include "strata/nn/transformer_layers.h"
#include "strata/nn/transformer_stack.h"
#include "synthetic_document.h"

namespace strata::bench {

namespace {

using Json = nlohmann::ordered_json;

constexpr std::int64_t kLayers = 2;
constexpr std::int64_t kHibridsDModel = 256;
constexpr std::int64_t kHibridsHeads = 4;
constexpr std::int64_t kHibridsDff = 1024;
constexpr double kHibridsTarget = 1.3;  // HIBRIDS time / base time, at most
constexpr const char* kHibridsReference = "base";

struct HibridsCase {
  const char* name;
  const char* recipe;
  const char* label;
};

const std::vector<HibridsCase>& hibrids_cases() {
  static const std::vector<HibridsCase> list{
      {"base", "longformer", "window(W,W) | global(1), no bias (the Longformer-style base of seed 001)"},
      {"hibrids", "hibrids-enc", "the same + HIBRIDS bias (PathLen, LvlDiff; max_path 4, max_level 2)"},
      {"hibrids_selected", "hibrids-s-enc", "the same + HIBRIDS_S bias (salient section relations)"},
  };
  return list;
}

// The recipe's band at the benchmark's width: every window(l, r) of the mask becomes
// window(W, W). (The recipes' band suits man pages of a few hundred tokens.)
attn::Mask with_window(attn::Mask mask, std::int64_t window) {
  if (mask.kind == attn::MaskKind::Window) return attn::Mask::window(window, window);
  for (attn::Mask& operand : mask.operands) operand = with_window(operand, window);
  return mask;
}

// The case's model: its recipe at the benchmark's sizes, every layer's band at --window.
models::ModelConfig case_model(const HibridsCase& c, const HibridsBenchOptions& o) {
  models::ModelConfig config = recipe_model(
      c.recipe, {fmt::format("model.d_model={}", kHibridsDModel), fmt::format("model.heads={}", kHibridsHeads),
                 fmt::format("model.d_ff={}", kHibridsDff), fmt::format("model.encoder_layers={}", kLayers),
                 fmt::format("model.max_positions={}", std::max<std::int64_t>(1024, o.length))});
  for (attn::LayerSpec& spec : config.encoder_attention)
    for (attn::HeadSpec& head : spec.heads) head.mask = with_window(head.mask, o.window);
  return config;
}

// ---- the child: one case ----------------------------------------------------------------

struct State {
  Layout layout;
  attn::TokenLayout tokens;
  torch::nn::Embedding embed{nullptr};
  nn::TransformerEncoder encoder{nullptr};
  at::Tensor ids, padding;
  std::vector<at::Tensor> parameters;
};

void run_child(const HibridsBenchOptions& o, const HibridsCase& c) {
  prepare_child(o.run.threads);
  const models::ModelConfig config = case_model(c, o);
  auto state = std::make_shared<State>();
  state->layout = sectioned_document(o.length);
  state->tokens = attn::batch_layouts({&state->layout});
  state->embed = torch::nn::Embedding(config.vocab_size, config.d_model);
  state->encoder = nn::TransformerEncoder(models::stack_options(config, models::Stack::Encoder), state->embed);
  models::init_weights(*state->encoder, config.pad_id);
  models::init_weights(*state->embed, config.pad_id);
  std::int64_t relation_count = 0;
  {
    // The tables start at zero in a model; a trained one holds values of this size.
    at::NoGradGuard no_grad;
    for (const auto& layer : *state->encoder->layers) {
      at::Tensor& table = layer->as<nn::EncoderLayer>()->self_attn->relation_bias;
      if (!table.defined()) continue;
      table.normal_(0.0, 0.1);
      relation_count = table.size(1);
    }
  }
  state->encoder->train();
  state->ids = state->tokens.token.to(at::kLong);
  state->padding = at::ones({1, o.length}, at::kBool);
  state->parameters = state->encoder->parameters();
  for (const at::Tensor& p : state->embed->parameters()) state->parameters.push_back(p);
  std::int64_t parameter_count = 0;
  for (const at::Tensor& p : state->parameters) parameter_count += p.numel();

  const auto step = [state] {
    const at::Tensor hidden = state->encoder->forward(state->ids, state->padding, &state->tokens);
    hidden.square().sum().backward();
    for (const at::Tensor& p : state->parameters)
      if (p.grad().defined()) p.mutable_grad().reset();
  };
  MemoryMarks marks;
  const TimedRounds rounds = time_child_step(step, o.run.rounds, marks);
  Json result{{"spec", to_json(models::ModelConfig::spec_of(config.encoder_attention, 0))},
              {"relation_count", relation_count},
              {"parameters", parameter_count}};
  result.update(rounds.to_json());
  marks.add_to(result);
  write_file_atomic(o.run.child_out, result.dump());
}

// ---- the parent: spawn, collect, compare ------------------------------------------------

std::string bytes_text(double bytes) {
  if (bytes >= 1024.0 * 1024.0 * 1024.0) return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  if (bytes >= 1024.0 * 1024.0) return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0));
  if (bytes >= 1024.0) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

void run_parent(const HibridsBenchOptions& o) {
  Session session("hibrids", {"strata", "bench", "hibrids"}, o.run, kBusyCores);
  const Layout document = sectioned_document(o.length);
  const DocumentStats stats = document_stats(document);
  const std::string mask =
      attn::to_string(case_model(hibrids_cases().front(), o).encoder_attention.front().heads[0].mask);

  std::printf("hibrids: encoder of %ld layers (d_model %ld, %ld heads, d_ff %ld), batch 1, L = %ld, fp32, "
              "every layer %s, forward + backward of sum(hidden^2), %d threads, median of %d rounds%s\n",
              long(kLayers), long(kHibridsDModel), long(kHibridsHeads), long(kHibridsDff), long(o.length), mask.c_str(),
              o.run.threads, o.run.rounds, o.run.quick ? " (--quick)" : "");
  std::printf("cases from the recipes:");
  for (const HibridsCase& c : hibrids_cases()) std::printf(" %s (%s)", c.name, c.recipe);
  std::printf("\ndocument: %d sections up to depth %d, %ld to %ld tokens each, %ld sentences of up to %d tokens\n",
              stats.sections, stats.deepest, long(stats.shortest), long(stats.longest), long(stats.sentences),
              kSentenceTokens);
  session.print_load();

  std::vector<std::string> names;
  for (const HibridsCase& c : hibrids_cases()) names.push_back(c.name);
  std::vector<std::string> args = o.run.child_args();
  for (const std::string& word : {std::string("--length"), std::to_string(o.length), std::string("--window"),
                                  std::to_string(o.window)})
    args.push_back(word);
  session.measure(names, args);
  // After the children: the parent may start libtorch's thread pools from here on.
  const LayoutMemory memory = layout_memory(document);

  std::printf("\n");
  Table table({{"case", -17}, {"ms", 10}, {"ratio", 7}, {"of", -21}, {"target", -8}, {"met", -4},
               {"relations", 9}, {"peak MB", 8}, {"+MB", 8}});
  Json cases_json = Json::object();
  bool all_met = true;
  const Target target{"<=", kHibridsTarget};
  for (const HibridsCase& c : hibrids_cases()) {
    const CaseMeasurement& r = session[c.name];
    const double ratio = session.ratio(c.name, kHibridsReference);
    const bool judged = c.name != std::string(kHibridsReference);
    if (judged) all_met = all_met && target.met(ratio);
    const std::string of = fmt::format("{}/{}", c.name, kHibridsReference);
    table.row({c.name, fixed(session.median_ms(c.name), 1), fixed(ratio, 3), judged ? of : "-",
               judged ? fmt::format("<= {:.1f}", kHibridsTarget) : "-", judged ? (target.met(ratio) ? "yes" : "NO") : "",
               std::to_string(r.result["relation_count"].get<std::int64_t>()), fixed(r.maxrss_mb, 0),
               fixed(r.growth_mb, 0)});
    session.check_noisy(c.name, r.result);
    Json entry = session.case_json(c.name, c.label);
    entry["recipe"] = c.recipe;
    entry["ratio"] = ratio;
    entry["ratio_of"] = of;
    if (judged) entry["target"] = target.to_json(ratio);
    cases_json[c.name] = std::move(entry);
  }
  table.print();
  std::printf("\n");
  for (const HibridsCase& c : hibrids_cases()) std::printf("%s: %s\n", c.name, c.label);
  std::printf("relations: entries of each layer's learned table [heads, relations]\n");
  std::printf("peak MB: the case's whole process (ru_maxrss); +MB: what its steps added over the model and "
              "inputs (VmHWM - VmRSS)\n");
  std::printf("layout: per-token ids %ld x [1, %ld] int32 = %s; section tree (PathLen, LvlDiff [1, %ld, %ld], "
              "depth [1, %ld]) = %s; relation ids [1, %ld, %ld] int32 = %s; total %s, against %s for an L x L "
              "int64 index (%.0fx less): O(S^2 + L)\n",
              long(memory.token_fields), long(o.length), bytes_text(double(memory.per_token)).c_str(),
              long(memory.sections), long(memory.sections), long(memory.sections),
              bytes_text(double(memory.section)).c_str(), long(memory.sections), long(memory.sections),
              bytes_text(double(memory.relation_ids)).c_str(), bytes_text(double(memory.total())).c_str(),
              bytes_text(double(memory.dense)).c_str(), double(memory.dense) / double(memory.total()));
  session.print_noisy();
  const double hibrids_ratio = session.ratio("hibrids", kHibridsReference);
  const CaseMeasurement &base = session[kHibridsReference], &hibrids = session["hibrids"];
  std::printf("hibrids: encoder forward + backward at L = %ld with HIBRIDS %.2fx the time without (target <= %.1f: "
              "%s); peak %.0f MB vs %.0f MB (%+.0f MB; an L x L int64 index alone would be %s)\n",
              long(o.length), hibrids_ratio, kHibridsTarget, target.met(hibrids_ratio) ? "met" : "NOT met",
              hibrids.maxrss_mb, base.maxrss_mb, hibrids.maxrss_mb - base.maxrss_mb,
              bytes_text(double(memory.dense)).c_str());

  session.write_json(
      {{"batch", 1},
       {"length", o.length},
       {"window", o.window},
       {"mask", mask},
       {"layers", kLayers},
       {"d_model", kHibridsDModel},
       {"heads", kHibridsHeads},
       {"d_ff", kHibridsDff},
       {"dtype", "float32"},
       {"step", "encoder forward (training mode) + backward of sum(hidden^2), gradients for every parameter"},
       {"document",
        {{"sections", stats.sections},
         {"max_depth", stats.deepest},
         {"shortest_section_tokens", stats.shortest},
         {"longest_section_tokens", stats.longest},
         {"sentences", stats.sentences}}}},
      {{"targets_met", all_met},
       {"layout_memory",
        {{"sections_with_root", memory.sections},
         {"per_token_bytes", memory.per_token},
         {"section_tree_bytes", memory.section},
         {"relation_id_bytes", memory.relation_ids},
         {"total_bytes", memory.total()},
         {"dense_index_bytes", memory.dense},
         {"dense_over_layout", double(memory.dense) / double(memory.total())}}},
       {"memory_method",
        "each case in a child process: peak_rss_mb = its ru_maxrss; rss_growth_mb = VmHWM after the rounds "
        "minus VmRSS once the model and inputs were built"}},
      std::move(cases_json));
}

}  // namespace

void run_hibrids_bench(HibridsBenchOptions o) {
  o.run.resolve(5, 1);
  if (o.length == 0) o.length = o.run.quick ? 2048 : 8192;
  if (!o.run.is_child()) return run_parent(o);
  const auto c = std::find_if(hibrids_cases().begin(), hibrids_cases().end(),
                              [&](const HibridsCase& k) { return o.run.child == k.name; });
  if (c == hibrids_cases().end()) throw Error(fmt::format("bench hibrids: unknown case '{}'", o.run.child));
  run_child(o, *c);
}

}  // namespace strata::bench
