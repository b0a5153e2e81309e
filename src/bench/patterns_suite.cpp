#include "strata/bench/patterns_suite.h"

#include <ATen/ops/ones.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attention_alone.h"
#include "kernel_block_masks.h"
#include "strata/attn/patterns.h"
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
#include "strata/models/encoder_model.h"
#include "strata/models/model_config.h"
#include "synthetic_man_page.h"

namespace strata::bench {

namespace {

using Json = nlohmann::ordered_json;

constexpr double kPatternsTarget = 2.0;  // vanilla / all-patterned, at least
constexpr const char* kPatternsReference = "vanilla";
constexpr const char* kPatternsKindsChild = "head_kinds";  // the child that times each head kind alone

// A model case: a recipe at the benchmark's sizes.
struct ModelCase {
  std::string name, recipe;
  std::vector<std::string> overrides;  // the recipe's own, beyond the sizes
};

std::vector<ModelCase> model_cases(const PatternsBenchOptions& o) {
  std::vector<std::string> all_heads;
  if (o.patterned != o.heads) all_heads.push_back(fmt::format("model.inject_heads={}", o.patterned));
  return {{"vanilla", "extractive", {}},
          {"patterns_4", "extractive-patterns", {}},
          {"patterns_n", "extractive-patterns-all", all_heads}};
}

models::ModelConfig case_model(const ModelCase& c, const PatternsBenchOptions& o) {
  std::vector<std::string> overrides{fmt::format("model.d_model={}", o.d_model),
                                     fmt::format("model.heads={}", o.heads),
                                     fmt::format("model.d_ff={}", 4 * o.d_model),
                                     fmt::format("model.encoder_layers={}", o.layers),
                                     fmt::format("model.max_positions={}", std::max<std::int64_t>(1024, o.length)),
                                     "model.attention_kernel=fused"};
  overrides.insert(overrides.end(), c.overrides.begin(), c.overrides.end());
  models::ModelConfig config = recipe_model(c.recipe, overrides);
  config.vocab_size = kManPageVocab;  // the tokenizer's, as training takes it
  return config;
}

attn::LayerSpec case_spec(const ModelCase& c, const PatternsBenchOptions& o) {
  return models::ModelConfig::spec_of(case_model(c, o).encoder_attention, 0);
}

std::int64_t patterned_heads(const attn::LayerSpec& spec, std::int64_t heads) {
  std::int64_t n = 0;
  for (std::int64_t h = 0; h < heads; ++h) n += !(spec.head(h) == attn::HeadSpec{});
  return n;
}

std::string case_label(std::int64_t patterned, std::int64_t heads) {
  return patterned == 0 ? std::string("vanilla") : fmt::format("+patterns {}/{}", patterned, heads);
}

// The head kinds the breakdown times alone: every head plain, or every head one pattern.
const std::vector<std::string>& head_kinds() {
  static const std::vector<std::string> kinds{"plain", "matching_token", "intra_sentence", "previous_token",
                                              "next_token"};
  return kinds;
}

attn::LayerSpec kind_spec(const std::string& kind) {
  attn::LayerSpec spec;
  if (kind != "plain") spec.heads = {attn::pattern_head(attn::PatternSet().find(kind))};
  return spec;
}

// ---- the children -----------------------------------------------------------------------

struct ModelState {
  Layout page;
  attn::TokenLayout tokens;
  models::EncoderModel model{nullptr};
  at::Tensor ids, padding;
  std::vector<at::Tensor> parameters;
};

void run_model_child(const PatternsBenchOptions& o, const ModelCase& c) {
  prepare_child(o.run.threads);
  const models::ModelConfig config = case_model(c, o);
  const attn::LayerSpec spec = models::ModelConfig::spec_of(config.encoder_attention, 0);
  auto state = std::make_shared<ModelState>();
  state->page = man_page(o.length);
  state->tokens = attn::batch_layouts({&state->page});
  state->model = models::EncoderModel(config);
  state->model->train();
  state->ids = state->tokens.token.to(at::kLong);
  state->padding = at::ones({1, o.length}, at::kBool);
  state->parameters = state->model->parameters();
  const auto step = [state] {
    state->model->encode(state->ids, state->padding, &state->tokens).square().sum().backward();
    for (const at::Tensor& p : state->parameters)
      if (p.grad().defined()) p.mutable_grad().reset();
  };
  MemoryMarks marks;
  const TimedRounds rounds = time_child_step(step, o.run.rounds, marks);

  const auto alone = attention_alone(spec, state->tokens, o.length, o.heads, config.head_dim());
  alone->step();  // warm-up
  const TimedRounds attention = time_rounds([alone] { alone->step(); }, o.run.rounds, kBusyCores);

  Json result{{"spec", to_json(spec)}};
  result.update(rounds.to_json());
  result["attention_layer_ms"] = attention.median_ms;
  result["block_mask"] = kernel_block_masks(alone->call);
  marks.add_to(result);
  write_file_atomic(o.run.child_out, result.dump());
}

// One layer's attention with every head of one kind, for each kind.
void run_head_kinds_child(const PatternsBenchOptions& o) {
  prepare_child(o.run.threads);
  const Layout page = man_page(o.length);
  const attn::TokenLayout tokens = attn::batch_layouts({&page});
  Json kinds = Json::object();
  for (const std::string& kind : head_kinds()) {
    const auto alone = attention_alone(kind_spec(kind), tokens, o.length, o.heads, o.d_model / o.heads);
    alone->step();  // warm-up
    const TimedRounds t = time_rounds([alone] { alone->step(); }, o.run.rounds, kBusyCores);
    kinds[kind] = {{"median_ms", t.median_ms},
                   {"busy_rounds_included", t.busy_rounds_included},
                   {"block_mask", kernel_block_masks(alone->call)}};
  }
  write_file_atomic(o.run.child_out, kinds.dump());
}

// ---- the parent: spawn, collect, explain ------------------------------------------------

// A case's attention predicted from the per-kind timings: each head costs its kind's time
// over the head count (thread-ms: kind ms x threads / heads). Balanced: the total spread over
// every thread. Split: as the kernel runs its passes one after the other (the heads in token
// order, then the rest; `block_mask` says which) and at::parallel_for hands each pass's
// tasks, ordered by head, out in contiguous runs, one run per thread; the slowest run of each
// pass decides.
struct Predicted {
  double balanced_ms = 0, split_ms = 0;
};

Predicted predict(const attn::LayerSpec& spec, std::int64_t heads, int threads, const Json& kinds,
                  const Json& block_mask) {
  const auto ordered = block_mask["token_ordered_heads"].get<std::vector<std::int64_t>>();
  std::vector<double> passes[2];  // thread-ms per head: the token-ordered pass, the other
  for (std::int64_t h = 0; h < heads; ++h) {
    const attn::HeadSpec& head = spec.head(h);
    std::string kind = "plain";
    for (const std::string& k : head_kinds())
      if (k != "plain" && kind_spec(k).heads.front() == head) kind = k;
    const bool in_order = std::find(ordered.begin(), ordered.end(), h) != ordered.end();
    passes[in_order ? 0 : 1].push_back(kinds[kind]["median_ms"].get<double>() * threads / static_cast<double>(heads));
  }
  Predicted p;
  for (const std::vector<double>& cost : passes) {
    double total = 0;
    for (double c : cost) total += c;
    p.balanced_ms += total / threads;
    const auto n = static_cast<std::int64_t>(cost.size());
    if (threads > n) {  // heads split into chunks: no run rule to model
      p.split_ms += total / threads;
      continue;
    }
    double slowest = 0;
    for (int t = 0; t < threads; ++t) {
      double run = 0;
      for (std::int64_t h = t * n / threads; h < (t + 1) * n / threads; ++h) run += cost[h];
      slowest = std::max(slowest, run);
    }
    p.split_ms += slowest;
  }
  return p;
}

void print_groups(const Json& mask) {
  for (const Json& g : mask["groups"])
    std::printf("    heads %-12s %-30s in %-8s order: tiles visited %5.1f %%, partial %5.1f %%\n",
                g["heads"].dump().c_str(), g["mask"].get<std::string>().c_str(), g["order"].get<std::string>().c_str(),
                100 * g["tile_density"].get<double>(), 100 * g["partial_fraction"].get<double>());
  if (!mask["fixed_heads"].empty())
    std::printf("    heads %-12s fixed (one key a query, no tiles)\n", mask["fixed_heads"].dump().c_str());
  std::printf("    block masks compiled in %.2f ms a call\n", mask["compile_ms"].get<double>());
}

void run_parent(const PatternsBenchOptions& o) {
  Session session("patterns", {"strata", "bench", "patterns"}, o.run, kBusyCores);
  const std::vector<ModelCase> cases = model_cases(o);
  const std::string patterns = recipe_config(cases.back().recipe, {}).get<std::string>("model.inject_patterns");
  std::vector<attn::LayerSpec> specs;
  for (const ModelCase& c : cases) specs.push_back(case_spec(c, o));
  const Layout page = man_page(o.length);
  const PageStats stats = page_stats(page);
  std::printf("patterns: encoder of %ld layers (d_model %ld, %ld heads of %ld, d_ff %ld), batch 1, L = %ld, fp32, "
              "training mode, forward + backward of sum(hidden^2), fused kernel, %d threads, median of %d rounds%s\n",
              long(o.layers), long(o.d_model), long(o.heads), long(o.d_model / o.heads), long(4 * o.d_model),
              long(o.length), o.run.threads, o.run.rounds, o.run.quick ? " (--quick)" : "");
  std::printf("page: %ld sections, %ld sentences of %ld to %ld tokens; %ld distinct tokens of %ld (Zipf s = %.1f "
              "over %ld), %.1f %% of the tokens occur once (their matching_token rows see every key)\n",
              long(stats.sections), long(stats.sentences), long(stats.shortest), long(stats.longest),
              long(stats.distinct), long(o.length), kManPageZipfExponent, long(kManPageVocab),
              100.0 * double(stats.once_seen) / double(o.length));
  std::printf("cases from the recipes:");
  for (const ModelCase& c : cases) std::printf(" %s (%s)", c.name.c_str(), c.recipe.c_str());
  std::printf("; patterns injected in turn: %s\n", patterns.c_str());
  session.print_load();

  std::vector<std::string> names;
  for (const ModelCase& c : cases) names.push_back(c.name);
  names.push_back(kPatternsKindsChild);
  std::vector<std::string> args = o.run.child_args();
  for (const std::string& word :
       {std::string("--length"), std::to_string(o.length), std::string("--layers"), std::to_string(o.layers),
        std::string("--heads"), std::to_string(o.heads), std::string("--d-model"), std::to_string(o.d_model),
        std::string("--patterned"), std::to_string(o.patterned)})
    args.push_back(word);
  session.measure(names, args);
  // After the children: the parent may start libtorch's thread pools from here on. rho reads
  // every head's dense visibility, L x L: counted here, it weighs on no case's peak memory.
  const attn::TokenLayout tokens = attn::batch_layouts({&page});
  Json kinds = session.result(kPatternsKindsChild);
  const double plain_ms = kinds["plain"]["median_ms"].get<double>();
  for (auto& [kind, k] : kinds.items()) {
    k["vs_plain"] = k["median_ms"].get<double>() / plain_ms;
    k["rho"] = attn::attention_sparsity(kind_spec(kind), o.heads, tokens, o.length);
  }
  const double vanilla_ms = session.median_ms(kPatternsReference);
  const double speedup = vanilla_ms / session.median_ms(cases.back().name);
  const auto layers = static_cast<double>(o.layers);

  std::printf("\n");
  Table table({{"case", -11}, {"", -18}, {"ms", 9}, {"ratio", 7}, {"speed-up", 8}, {"rho", 6}, {"attn/layer", 10},
               {"attn all", 9}, {"rest", 9}, {"predicted", 9}, {"peak MB", 8}});
  Json cases_json = Json::object();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const ModelCase& c = cases[i];
    const CaseMeasurement& r = session[c.name];
    const double ms = session.median_ms(c.name);
    const double attention_ms = r.result["attention_layer_ms"].get<double>();
    const double rest_ms = ms - layers * attention_ms;
    const std::int64_t patterned = patterned_heads(specs[i], o.heads);
    const double rho = attn::attention_sparsity(specs[i], o.heads, tokens, o.length);
    const Predicted p = predict(specs[i], o.heads, o.run.threads, kinds, r.result["block_mask"]);
    const std::string label = case_label(patterned, o.heads);
    table.row({c.name, label, fixed(ms, 1), fixed(ms / vanilla_ms, 3), fixed(vanilla_ms / ms, 2), fixed(rho, 3),
               fixed(attention_ms, 1), fixed(layers * attention_ms, 1), fixed(rest_ms, 1), fixed(p.split_ms, 1),
               fixed(r.maxrss_mb, 0)});
    session.check_noisy(c.name, r.result);
    Json entry{{"recipe", c.recipe}, {"patterned_heads", patterned}};
    entry.update(session.case_json(c.name, label));
    entry["rho"] = rho;
    entry["ratio"] = ms / vanilla_ms;
    entry["ratio_of"] = fmt::format("{}/{}", c.name, kPatternsReference);
    entry["speedup"] = vanilla_ms / ms;
    entry["attention_ms"] = layers * attention_ms;
    entry["attention_share"] = layers * attention_ms / ms;
    entry["rest_ms"] = rest_ms;
    entry["predicted_attention_layer_ms"] = {{"balanced", p.balanced_ms}, {"split_by_head", p.split_ms}};
    cases_json[c.name] = std::move(entry);
  }
  table.print();
  std::printf("ratio: ms / vanilla ms; speed-up: vanilla ms / ms; attn/layer: one layer's attention kernel alone "
              "(forward + backward, random q k v); attn all: x %ld layers; rest: ms - attn all (projections, "
              "FFN, norms, embedding); predicted: attn/layer from the head-kind timings below, with the "
              "kernel's split of heads over threads\n",
              long(o.layers));

  std::printf("\nwhere the time goes: one layer's attention with every head of one kind\n");
  Table kind_table({{"heads", -21}, {"ms", 9}, {"vs plain", 10}, {"rho", 6}, {"tiles visited", 13}, {"partial", 9}});
  for (const std::string& kind : head_kinds()) {
    const Json& k = kinds[kind];
    const Json& groups = k["block_mask"]["groups"];
    const double density = groups.empty() ? 0.0 : groups[0]["tile_density"].get<double>();
    const double partial = groups.empty() ? 0.0 : groups[0]["partial_fraction"].get<double>();
    kind_table.row({kind, fixed(k["median_ms"].get<double>(), 1), fixed(k["vs_plain"].get<double>(), 3),
                    fixed(k["rho"].get<double>(), 3), fixed(100 * density, 1) + "%", fixed(100 * partial, 1) + "%"});
    session.check_noisy(kind, k);
  }
  kind_table.print();
  std::printf("matching_token heads run in token order (once-seen first, then by id): their tiles are "
              "counted in that order\n");
  for (const ModelCase& c : cases) {
    std::printf("%s block mask:\n", c.name.c_str());
    print_groups(session.result(c.name)["block_mask"]);
  }

  const double vanilla_attention = cases_json[kPatternsReference]["attention_ms"].get<double>();
  const double ceiling = vanilla_ms / std::max(1e-9, vanilla_ms - vanilla_attention);
  session.print_noisy();
  const Target target{">=", kPatternsTarget};
  std::printf("\nspeed-up: vanilla / %s = %.2fx (target >= %.1f: %s); attention is %.0f %% of vanilla, so even "
              "free attention would give at most %.2fx\n",
              cases_json[cases.back().name]["label"].get<std::string>().c_str(), speedup, kPatternsTarget,
              target.met(speedup) ? "met" : "NOT met", 100 * vanilla_attention / vanilla_ms, ceiling);

  session.write_json(
      {{"batch", 1},
       {"length", o.length},
       {"layers", o.layers},
       {"heads", o.heads},
       {"d_model", o.d_model},
       {"head_dim", o.d_model / o.heads},
       {"d_ff", 4 * o.d_model},
       {"patterned", o.patterned},
       {"patterns", patterns},
       {"dtype", "float32"},
       {"kernel", "fused"},
       {"step", "encoder forward (training mode) + backward of sum(hidden^2), gradients for every parameter"},
       {"document",
        {{"tokens", o.length},
         {"sections", stats.sections},
         {"sentences", stats.sentences},
         {"shortest_sentence_tokens", stats.shortest},
         {"longest_sentence_tokens", stats.longest},
         {"vocabulary", kManPageVocab},
         {"zipf_exponent", kManPageZipfExponent},
         {"distinct_tokens", stats.distinct},
         {"once_seen_fraction", double(stats.once_seen) / double(o.length)}}}},
      {{"speedup", speedup},
       {"speedup_of", fmt::format("{}/{}", kPatternsReference, cases.back().name)},
       {"target", target.to_json(speedup)},
       {"free_attention_ceiling", ceiling},
       {"head_kinds", std::move(kinds)}},
      std::move(cases_json));
}

void check_options(const PatternsBenchOptions& o) {
  if (o.heads < 4)
    throw Error(fmt::format("bench patterns: --heads {} is too few; the four patterns need 4 heads or more", o.heads));
  if (o.patterned < 4 || o.patterned > o.heads)
    throw Error(fmt::format("bench patterns: --patterned {} must lie between 4 (one head a pattern) and --heads {}",
                            o.patterned, o.heads));
  if (o.d_model % o.heads != 0)
    throw Error(fmt::format("bench patterns: --d-model {} is not divisible by --heads {}", o.d_model, o.heads));
}

}  // namespace

void run_patterns_bench(PatternsBenchOptions o) {
  o.run.resolve(5, 1);
  if (o.length == 0) o.length = o.run.quick ? 256 : 2048;
  if (o.layers == 0) o.layers = o.run.quick ? 2 : 6;
  if (o.d_model == 0) o.d_model = o.run.quick ? 64 : 256;
  if (o.patterned == 0) o.patterned = o.heads;
  check_options(o);
  if (!o.run.is_child()) return run_parent(o);
  if (o.run.child == kPatternsKindsChild) return run_head_kinds_child(o);
  for (const ModelCase& c : model_cases(o))
    if (o.run.child == c.name) return run_model_child(o, c);
  throw Error(fmt::format("bench patterns: unknown case '{}'", o.run.child));
}

}  // namespace strata::bench
