// strata bench patterns: whether injected patterns (seed 003 §4.3) make a Transformer faster.
// The seed reports ρ = 0.86 for 8 of 8 heads patterned and argues the attention then costs
// O((1 - ρ) n²); this benchmark measures what the fused kernel makes of it, matching_token
// heads run in token order included (src/attn/kernels/token_sorted.h): forward + backward of a
// 6-layer encoder at 2,048 tokens of a man-page-like document (synthetic_man_page.h), vanilla
// against 4 of 8 and 8 of 8 heads patterned (matching_token, intra_sentence, previous_token,
// next_token), target vanilla / 8-of-8 >= 2.
//
// When the target is missed the numbers say where the time goes: each case also times one
// layer's attention alone (so the rest of the layer is the model minus layers × that), the
// block masks the kernel compiles (compile time, and tiles visited per head group on the
// layout the group runs on), and one child times the attention with every head of one
// pattern, from which each case's attention is predicted both with perfect load balance and
// with the kernel's split of heads over threads.
//
// --json FILE: the options and the page ("document"), "speedup" (vanilla / patterns_n) and
// "target", "free_attention_ceiling", "cases" {vanilla, patterns_4, patterns_n: time_rounds'
// fields, rho, ratio, speedup, attention_layer_ms, attention_ms, attention_share, rest_ms,
// predicted_attention_layer_ms, peak_rss_mb, rss_growth_mb, block_mask} and "head_kinds"
// {plain, matching_token, ...: median_ms, vs_plain, rho, block_mask}; a block_mask is
// {tile, compile_ms, token_ordered_heads, groups [{heads, mask, order, tile_density,
// partial_fraction}], fixed_heads}.
//
// As the other benches, every case runs in a child process of its own (bench_child.h).
#include <ATen/Parallel.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../../bench/cpu_load.h"
#include "../attn/kernels/token_sorted.h"
#include "attention_alone.h"
#include "bench_child.h"
#include "commands.h"
#include "synthetic_man_page.h"
#include "strata/attn/attention_call.h"
#include "strata/attn/block_mask.h"
#include "strata/attn/patterns.h"
#include "strata/attn/spec.h"
#include "strata/attn/token_layout.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/doc/layout.h"
#include "strata/models/encoder_model.h"
#include "strata/models/model_config.h"

namespace strata::cli {

namespace {

using Json = nlohmann::ordered_json;

constexpr double kBusyCores = 0.3;  // other processes' CPU use above which a round is set aside
constexpr double kTarget = 2.0;     // vanilla / all-patterned, at least
constexpr const char* kPatterns = "matching_token,intra_sentence,previous_token,next_token";

struct BenchOptions {
  bool quick = false;
  std::string json;
  std::int64_t length = 0;     // 0: 2048, or 256 with --quick
  std::int64_t layers = 0;     // 0: 6, or 2 with --quick
  std::int64_t heads = 8;
  std::int64_t d_model = 0;    // 0: 256, or 64 with --quick
  std::int64_t patterned = 0;  // 0: every head
  int threads = 0;             // 0: every core
  int rounds = 0;              // 0: 5, or 1 with --quick
  std::string child;           // hidden: the case this process runs
  std::string child_out;       // hidden: where it writes its result
};

// The model cases; `patterned` heads of the layer take the four patterns in turn.
struct ModelCase {
  std::string name;
  std::int64_t patterned = 0;
};

std::vector<ModelCase> model_cases(const BenchOptions& o) {
  return {{"vanilla", 0}, {"patterns_4", 4}, {"patterns_n", o.patterned}};
}

std::string case_label(const ModelCase& c, std::int64_t heads) {
  return c.patterned == 0 ? std::string("vanilla") : fmt::format("+patterns {}/{}", c.patterned, heads);
}

std::vector<attn::Pattern> injected_patterns() { return attn::PatternSet().parse_list(kPatterns); }

attn::LayerSpec case_spec(std::int64_t patterned, std::int64_t heads) {
  return attn::inject_patterns(injected_patterns(), patterned, heads);
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

// ---- what a child measures besides the model --------------------------------------------

// One layer's attention on random q, k, v of the model's shapes.
std::shared_ptr<AttentionAlone> attention_alone(const attn::LayerSpec& spec, const attn::TokenLayout& tokens,
                                                std::int64_t heads, std::int64_t head_dim) {
  auto a = std::make_shared<AttentionAlone>();
  const std::int64_t length = tokens.length();
  for (at::Tensor* t : {&a->q, &a->k, &a->v}) *t = at::randn({1, heads, length, head_dim}).requires_grad_(true);
  a->spec = spec;
  a->call.q = a->q;
  a->call.k = a->k;
  a->call.v = a->v;
  a->call.training = true;  // as in the model
  if (!spec.is_plain()) {   // as the attention module hands it over
    a->call.spec = &a->spec;
    a->call.query_layout = &tokens;
    a->call.key_layout = &tokens;
  }
  return a;
}

double median_ms_of(const std::function<void()>& f, int times) {
  std::vector<double> ms;
  for (int i = 0; i < times; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return median_of(ms);
}

// ---- the block masks the kernel compiles ------------------------------------------------

// The call restricted to some of its heads, as attend_token_sorted splits a layer; `spec`
// receives their specs and must outlive the result.
attn::AttentionCall heads_call(const attn::AttentionCall& call, const std::vector<std::int64_t>& heads,
                               attn::LayerSpec& spec) {
  spec.heads.clear();
  for (std::int64_t h : heads) spec.heads.push_back(call.spec->head(h));
  attn::AttentionCall part = call;
  part.spec = &spec;
  const at::Tensor pick = at::tensor(heads, at::kLong);
  part.q = call.q.index_select(1, pick);
  part.k = call.k.index_select(1, pick);
  part.v = call.v.index_select(1, pick);
  return part;
}

// One fused_attention call the kernel makes for a layer: some of its heads, on the layout in
// document order or reordered by token.
struct KernelPass {
  std::vector<std::int64_t> heads;
  bool token_order = false;
};

// The passes attend() makes: the heads it runs in token order, then the rest. Which heads
// those are is asked of the engine (token_sorting_applies, to the call and to each head
// alone) rather than restated here, so the diagnostic follows the kernel if its rule changes.
std::vector<KernelPass> kernel_passes(const attn::AttentionCall& call) {
  KernelPass ordered{{}, true}, rest;
  const bool sorting = attn::token_sorting_applies(call);
  for (std::int64_t h = 0; h < call.q.size(1); ++h) {
    attn::LayerSpec one;
    (sorting && attn::token_sorting_applies(heads_call(call, {h}, one)) ? ordered : rest).heads.push_back(h);
  }
  std::vector<KernelPass> passes;
  for (KernelPass* pass : {&ordered, &rest})
    if (!pass->heads.empty()) passes.push_back(std::move(*pass));
  return passes;
}

// The block mask the kernel compiles for one pass. (The bench's calls have no key padding,
// which the kernel would reorder with the layout.)
attn::BlockMask pass_block_mask(const attn::AttentionCall& call, const KernelPass& pass) {
  if (!pass.token_order && static_cast<std::int64_t>(pass.heads.size()) == call.q.size(1))
    return attn::compile_block_mask(call);
  attn::LayerSpec spec;
  attn::AttentionCall part = heads_call(call, pass.heads, spec);
  attn::TokenLayout ordered;
  if (pass.token_order) {
    ordered = attn::token_ordered_layout(*call.query_layout);
    part.query_layout = &ordered;
    part.key_layout = &ordered;
  }
  return attn::compile_block_mask(part);
}

// Head group g of a pass's mask: its heads (numbered in the layer), their mask, the order
// they run in, the tiles visited and how many of those are partial (the predicate evaluated
// per pair), as fractions of all tiles.
Json group_json(const attn::AttentionCall& call, const KernelPass& pass, const attn::BlockMask& mask,
                std::int64_t g) {
  std::vector<std::int64_t> heads;
  for (std::size_t i = 0; i < mask.head_group.size(); ++i)
    if (mask.head_group[i] == g) heads.push_back(pass.heads[i]);
  std::int64_t visited = 0, full = 0;
  for (std::int64_t qt = 0; qt < mask.q_tiles; ++qt) {
    const std::int64_t r = mask.row(0, g, qt);
    for (std::int64_t e = mask.row_begin[r]; e < mask.row_begin[r + 1]; ++e) {
      ++visited;
      full += mask.full[e];
    }
  }
  const double tiles = static_cast<double>(mask.q_tiles * mask.k_tiles);
  return {{"heads", heads},
          {"mask", call.spec ? attn::to_string(call.spec->head(heads.front()).mask) : "all"},
          {"order", pass.token_order ? "token" : "document"},
          {"tile_density", static_cast<double>(visited) / tiles},
          {"partial_fraction", static_cast<double>(visited - full) / tiles}};
}

// The block masks the kernel compiles for the call, one a pass, per head group; and their
// compile time, the head split and the token reordering included, paid once per layer per
// forward.
Json block_mask_json(const attn::AttentionCall& call) {
  const std::vector<KernelPass> passes = kernel_passes(call);
  const double compile_ms = median_ms_of(
      [&] {
        for (const KernelPass& pass : passes) (void)pass_block_mask(call, pass);
      },
      5);
  Json groups = Json::array();
  std::vector<std::int64_t> ordered, fixed;
  std::int64_t tile = 0;
  for (const KernelPass& pass : passes) {
    const attn::BlockMask mask = pass_block_mask(call, pass);
    tile = mask.q_tile;
    if (pass.token_order) ordered = pass.heads;
    for (std::size_t i = 0; i < mask.head_group.size(); ++i)
      if (mask.head_group[i] < 0) fixed.push_back(pass.heads[i]);
    for (std::int64_t g = 0; g < mask.groups; ++g) groups.push_back(group_json(call, pass, mask, g));
  }
  std::sort(fixed.begin(), fixed.end());
  std::sort(groups.begin(), groups.end(), [](const Json& a, const Json& b) {
    return a["heads"][0].get<std::int64_t>() < b["heads"][0].get<std::int64_t>();
  });
  return {{"tile", tile},
          {"compile_ms", compile_ms},
          {"token_ordered_heads", ordered},
          {"groups", groups},
          {"fixed_heads", fixed}};
}

// ---- the children -----------------------------------------------------------------------

void start_child(const BenchOptions& options) {
  at::set_num_threads(options.threads);
  at::manual_seed(1234);
  (void)at::mm(at::randn({64, 64}), at::randn({64, 64}));  // start the thread pools
}

struct ModelState {
  Layout page;
  attn::TokenLayout tokens;
  models::EncoderModel model{nullptr};
  at::Tensor ids, padding;
  std::vector<at::Tensor> parameters;
};

void run_model_child(const BenchOptions& options, const ModelCase& c) {
  start_child(options);
  models::ModelConfig config;
  config.architecture = models::Architecture::Encoder;
  config.vocab_size = kManPageVocab;
  config.d_model = options.d_model;
  config.heads = options.heads;
  config.d_ff = 4 * options.d_model;
  config.encoder_layers = options.layers;
  config.max_positions = std::max<std::int64_t>(1024, options.length);
  config.attention_kernel = "fused";
  const attn::LayerSpec spec = case_spec(c.patterned, options.heads);
  config.encoder_attention = {spec};
  config.check();

  auto state = std::make_shared<ModelState>();
  state->page = man_page(options.length);
  state->tokens = attn::batch_layouts({&state->page});
  state->model = models::EncoderModel(config);
  state->model->train();
  state->ids = state->tokens.token.to(at::kLong);
  state->padding = at::ones({1, options.length}, at::kBool);
  state->parameters = state->model->parameters();
  const auto step = [state] {
    state->model->encode(state->ids, state->padding, &state->tokens).square().sum().backward();
    for (const at::Tensor& p : state->parameters)
      if (p.grad().defined()) p.mutable_grad().reset();
  };
  const long inputs_kb = status_kb("VmRSS");
  step();  // warm-up
  const TimedRounds rounds = time_rounds(step, options.rounds, kBusyCores);
  const long hwm_kb = status_kb("VmHWM");

  const auto alone = attention_alone(spec, state->tokens, options.heads, config.head_dim());
  alone->step();  // warm-up
  const TimedRounds attention = time_rounds([alone] { alone->step(); }, options.rounds, kBusyCores);

  Json result{{"spec", to_json(spec)}};
  result.update(rounds.to_json());
  result["attention_layer_ms"] = attention.median_ms;
  result["block_mask"] = block_mask_json(alone->call);
  result["inputs_kb"] = inputs_kb;
  result["hwm_kb"] = hwm_kb;
  write_file_atomic(options.child_out, result.dump());
}

// One layer's attention with every head of one kind, for each kind.
void run_head_kinds_child(const BenchOptions& options) {
  start_child(options);
  const Layout page = man_page(options.length);
  const attn::TokenLayout tokens = attn::batch_layouts({&page});
  Json kinds = Json::object();
  for (const std::string& kind : head_kinds()) {
    const auto alone = attention_alone(kind_spec(kind), tokens, options.heads, options.d_model / options.heads);
    alone->step();  // warm-up
    const TimedRounds t = time_rounds([alone] { alone->step(); }, options.rounds, kBusyCores);
    kinds[kind] = {{"median_ms", t.median_ms},
                   {"busy_rounds_included", t.busy_rounds_included},
                   {"block_mask", block_mask_json(alone->call)}};
  }
  write_file_atomic(options.child_out, kinds.dump());
}

// ---- the parent: spawn, collect, explain ------------------------------------------------

struct Measured {
  Json result;
  double maxrss_mb = 0;  // the child's ru_maxrss: the whole process, libtorch included
};

Measured measure(const BenchOptions& o, const std::string& name) {
  const std::vector<std::string> args{
      "--length",    std::to_string(o.length),    "--layers",  std::to_string(o.layers),
      "--heads",     std::to_string(o.heads),     "--d-model", std::to_string(o.d_model),
      "--patterned", std::to_string(o.patterned), "--threads", std::to_string(o.threads),
      "--rounds",    std::to_string(o.rounds)};
  ChildResult child = run_case_in_child("patterns", name, args);
  return {std::move(child.result), child.maxrss_mb};
}

// A case's attention predicted from the per-kind timings: each head costs its kind's time
// over the head count (thread-ms: kind ms × threads / heads). Balanced: the total spread over
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

void print_group_line(const Json& mask) {
  for (const Json& g : mask["groups"])
    std::printf("    heads %-12s %-30s in %-8s order: tiles visited %5.1f %%, partial %5.1f %%\n",
                g["heads"].dump().c_str(), g["mask"].get<std::string>().c_str(), g["order"].get<std::string>().c_str(),
                100 * g["tile_density"].get<double>(), 100 * g["partial_fraction"].get<double>());
  if (!mask["fixed_heads"].empty())
    std::printf("    heads %-12s fixed (one key a query, no tiles)\n", mask["fixed_heads"].dump().c_str());
  std::printf("    block masks compiled in %.2f ms a call\n", mask["compile_ms"].get<double>());
}

void run_parent(const BenchOptions& o) {
  const double others_before = bench::idle_probe(1.0);
  const Layout page = man_page(o.length);
  const PageStats stats = page_stats(page);
  std::printf("patterns: encoder of %ld layers (d_model %ld, %ld heads of %ld, d_ff %ld), batch 1, L = %ld, fp32, "
              "training mode, forward + backward of sum(hidden^2), fused kernel, %d threads, median of %d rounds%s\n",
              long(o.layers), long(o.d_model), long(o.heads), long(o.d_model / o.heads), long(4 * o.d_model),
              long(o.length), o.threads, o.rounds, o.quick ? " (--quick)" : "");
  std::printf("page: %ld sections, %ld sentences of %ld to %ld tokens; %ld distinct tokens of %ld (Zipf s = %.1f "
              "over %ld), %.1f %% of the tokens occur once (their matching_token rows see every key)\n",
              long(stats.sections), long(stats.sentences), long(stats.shortest), long(stats.longest),
              long(stats.distinct), long(o.length), kManPageZipfExponent, long(kManPageVocab),
              100.0 * double(stats.once_seen) / double(o.length));
  std::printf("patterns injected in turn: %s\n", kPatterns);
  std::printf("other processes' CPU use before the start: %.2f cores%s\n", others_before,
              others_before > kBusyCores ? "  -- machine busy: timings may be noisy" : "");
  std::fflush(stdout);

  std::map<std::string, Measured> m;
  const std::vector<ModelCase> cases = model_cases(o);
  const std::size_t runs = cases.size() + 1;
  for (std::size_t i = 0; i < runs; ++i) {
    const std::string name = i < cases.size() ? cases[i].name : "head_kinds";
    std::fprintf(stderr, "bench patterns: [%zu/%zu] %s ...\n", i + 1, runs, name.c_str());
    m[name] = measure(o, name);
    if (i < cases.size())
      std::fprintf(stderr, "bench patterns: [%zu/%zu] %s %.1f ms\n", i + 1, runs, name.c_str(),
                   m[name].result["median_ms"].get<double>());
  }
  // After the children: the parent may start libtorch's thread pools from here on. rho reads
  // every head's dense visibility, L x L: counted here, it weighs on no case's peak memory.
  const attn::TokenLayout tokens = attn::batch_layouts({&page});
  Json kinds = m["head_kinds"].result;
  const double plain_ms = kinds["plain"]["median_ms"].get<double>();
  for (auto& [kind, k] : kinds.items()) {
    k["vs_plain"] = k["median_ms"].get<double>() / plain_ms;
    k["rho"] = attn::attention_sparsity(kind_spec(kind), o.heads, tokens, o.length);
  }
  const double vanilla_ms = m["vanilla"].result["median_ms"].get<double>();
  const double all_ms = m["patterns_n"].result["median_ms"].get<double>();
  const double speedup = vanilla_ms / all_ms;

  std::printf("\n%-11s %-18s %9s %7s %8s %6s %10s %9s %9s %9s %8s\n", "case", "", "ms", "ratio", "speed-up", "rho",
              "attn/layer", "attn all", "rest", "predicted", "peak MB");
  Json cases_json = Json::object();
  std::string busy;
  for (const ModelCase& c : cases) {
    const Measured& r = m[c.name];
    const double ms = r.result["median_ms"].get<double>();
    const double attention_ms = r.result["attention_layer_ms"].get<double>();
    const double rest_ms = ms - static_cast<double>(o.layers) * attention_ms;
    const attn::LayerSpec spec = case_spec(c.patterned, o.heads);
    const double rho = attn::attention_sparsity(spec, o.heads, tokens, o.length);
    const Predicted p = predict(spec, o.heads, o.threads, kinds, r.result["block_mask"]);
    std::printf("%-11s %-18s %9.1f %7.3f %8.2f %6.3f %10.1f %9.1f %9.1f %9.1f %8.0f\n", c.name.c_str(),
                case_label(c, o.heads).c_str(), ms, ms / vanilla_ms, vanilla_ms / ms, rho,
                attention_ms, static_cast<double>(o.layers) * attention_ms, rest_ms, p.split_ms, r.maxrss_mb);
    if (r.result["busy_rounds_included"].get<bool>()) busy.append(busy.empty() ? "" : ", ").append(c.name);
    Json entry{{"label", case_label(c, o.heads)}, {"patterned_heads", c.patterned}};
    entry.update(r.result);
    for (const char* internal : {"inputs_kb", "hwm_kb"}) entry.erase(internal);
    entry["rho"] = rho;
    entry["ratio"] = ms / vanilla_ms;
    entry["speedup"] = vanilla_ms / ms;
    entry["attention_ms"] = static_cast<double>(o.layers) * attention_ms;
    entry["attention_share"] = static_cast<double>(o.layers) * attention_ms / ms;
    entry["rest_ms"] = rest_ms;
    entry["predicted_attention_layer_ms"] = {{"balanced", p.balanced_ms}, {"split_by_head", p.split_ms}};
    entry["peak_rss_mb"] = r.maxrss_mb;
    entry["rss_growth_mb"] = (r.result["hwm_kb"].get<double>() - r.result["inputs_kb"].get<double>()) / 1024.0;
    cases_json[c.name] = std::move(entry);
  }
  std::printf("ratio: ms / vanilla ms; speed-up: vanilla ms / ms; attn/layer: one layer's attention kernel alone "
              "(forward + backward, random q k v); attn all: x %ld layers; rest: ms - attn all (projections, "
              "FFN, norms, embedding); predicted: attn/layer from the head-kind timings below, with the "
              "kernel's split of heads over threads\n",
              long(o.layers));

  std::printf("\nwhere the time goes: one layer's attention with every head of one kind\n");
  std::printf("%-21s %9s %10s %6s %13s %9s\n", "heads", "ms", "vs plain", "rho", "tiles visited", "partial");
  for (const std::string& kind : head_kinds()) {
    const Json& k = kinds[kind];
    const Json& groups = k["block_mask"]["groups"];
    const double density = groups.empty() ? 0.0 : groups[0]["tile_density"].get<double>();
    const double partial = groups.empty() ? 0.0 : groups[0]["partial_fraction"].get<double>();
    std::printf("%-21s %9.1f %10.3f %6.3f %12.1f%% %8.1f%%\n", kind.c_str(), k["median_ms"].get<double>(),
                k["vs_plain"].get<double>(), k["rho"].get<double>(), 100 * density, 100 * partial);
    if (k["busy_rounds_included"].get<bool>()) busy.append(busy.empty() ? "" : ", ").append(kind);
  }
  std::printf("matching_token heads run in token order (once-seen first, then by id): their tiles are "
              "counted in that order\n");
  for (const ModelCase& c : cases) {
    std::printf("%s block mask:\n", c.name.c_str());
    print_group_line(m[c.name].result["block_mask"]);
  }

  const double vanilla_attention = cases_json["vanilla"]["attention_ms"].get<double>();
  const double ceiling = vanilla_ms / std::max(1e-9, vanilla_ms - vanilla_attention);
  if (!busy.empty())
    std::printf("noisy: other processes used the CPU in most rounds of %s; rerun on a quiet machine\n", busy.c_str());
  std::printf("\nspeed-up: vanilla / %s = %.2fx (target >= %.1f: %s); attention is %.0f %% of vanilla, so even "
              "free attention would give at most %.2fx\n",
              case_label(cases.back(), o.heads).c_str(), speedup, kTarget, speedup >= kTarget ? "met" : "NOT met",
              100 * vanilla_attention / vanilla_ms, ceiling);

  if (!o.json.empty()) {
    const Json result{
        {"benchmark", "patterns"},
        {"batch", 1},
        {"length", o.length},
        {"layers", o.layers},
        {"heads", o.heads},
        {"d_model", o.d_model},
        {"head_dim", o.d_model / o.heads},
        {"d_ff", 4 * o.d_model},
        {"patterned", o.patterned},
        {"patterns", kPatterns},
        {"dtype", "float32"},
        {"kernel", "fused"},
        {"step", "encoder forward (training mode) + backward of sum(hidden^2), gradients for every parameter"},
        {"threads", o.threads},
        {"rounds", o.rounds},
        {"quick", o.quick},
        {"document",
         {{"tokens", o.length},
          {"sections", stats.sections},
          {"sentences", stats.sentences},
          {"shortest_sentence_tokens", stats.shortest},
          {"longest_sentence_tokens", stats.longest},
          {"vocabulary", kManPageVocab},
          {"zipf_exponent", kManPageZipfExponent},
          {"distinct_tokens", stats.distinct},
          {"once_seen_fraction", double(stats.once_seen) / double(o.length)}}},
        {"other_processes_cores_before", others_before},
        {"busy_threshold_cores", kBusyCores},
        {"speedup", speedup},
        {"speedup_of", "vanilla/patterns_n"},
        {"target", {{"op", ">="}, {"bound", kTarget}, {"met", speedup >= kTarget}}},
        {"free_attention_ceiling", ceiling},
        {"cases", std::move(cases_json)},
        {"head_kinds", std::move(kinds)}};
    write_file_atomic(o.json, result.dump(2) + "\n");
    std::printf("results: %s\n", o.json.c_str());
  }
}

void check_options(const BenchOptions& o) {
  if (o.heads < 4)
    throw Error(fmt::format("bench patterns: --heads {} is too few; the four patterns need 4 heads or more", o.heads));
  if (o.patterned < 4 || o.patterned > o.heads)
    throw Error(fmt::format("bench patterns: --patterned {} must lie between 4 (one head a pattern) and --heads {}",
                            o.patterned, o.heads));
  if (o.d_model % o.heads != 0)
    throw Error(fmt::format("bench patterns: --d-model {} is not divisible by --heads {}", o.d_model, o.heads));
}

}  // namespace

void register_bench_patterns(CLI::App& bench) {
  CLI::App* patterns = bench.add_subcommand(
      "patterns",
      "Time a 6-layer encoder (d_model 256, 8 heads, d_ff 4 x d_model, batch 1, fp32, forward + "
      "backward) on a 2,048-token man-page-like document: vanilla attention against 4 of 8 and 8 of 8 "
      "heads patterned (seed 003 §4.3: matching_token, intra_sentence, previous_token, next_token); "
      "target: vanilla / 8-of-8 >= 2. Each case in a child process of its own, median of several "
      "rounds; matching_token heads run in token order, as the fused kernel runs them. With each "
      "case's sparsity rho, its attention alone against the rest of the layer, the tiles its block "
      "masks visit per head group, and the attention of each pattern alone, so a missed target says "
      "where the time goes.");
  auto options = std::make_shared<BenchOptions>();
  patterns->add_flag("--quick", options->quick,
                     "small and short: L = 256, 2 layers, d_model 64, 1 round (a smoke test)");
  patterns->add_option("--json", options->json, "also write the results to this JSON file");
  patterns->add_option("--length", options->length, "tokens L (default 2048; 256 with --quick)")
      ->check(CLI::Range(std::int64_t{16}, std::int64_t{1} << 20));
  patterns->add_option("--layers", options->layers, "encoder layers (default 6; 2 with --quick)")
      ->check(CLI::PositiveNumber);
  patterns->add_option("--heads", options->heads, "attention heads (default 8)")->check(CLI::PositiveNumber);
  patterns->add_option("--d-model", options->d_model, "model width (default 256; 64 with --quick)")
      ->check(CLI::PositiveNumber);
  patterns->add_option("--patterned", options->patterned,
                       "heads patterned in the last case (default: every head; at least 4)")
      ->check(CLI::PositiveNumber);
  patterns->add_option("--threads", options->threads, "threads (default: every core)")->check(CLI::PositiveNumber);
  patterns->add_option("--rounds", options->rounds, "timed rounds a case (default 5; 1 with --quick)")
      ->check(CLI::PositiveNumber);
  patterns->add_option("--child", options->child)->group("");
  patterns->add_option("--child-out", options->child_out)->group("");
  on_run(patterns, [options] {
    BenchOptions o = *options;
    if (o.length == 0) o.length = o.quick ? 256 : 2048;
    if (o.layers == 0) o.layers = o.quick ? 2 : 6;
    if (o.d_model == 0) o.d_model = o.quick ? 64 : 256;
    if (o.patterned == 0) o.patterned = o.heads;
    if (o.rounds == 0) o.rounds = o.quick ? 1 : 5;
    if (o.threads == 0) o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    check_options(o);
    if (o.child.empty()) return run_parent(o);
    if (o.child == "head_kinds") return run_head_kinds_child(o);
    for (const ModelCase& c : model_cases(o))
      if (o.child == c.name) return run_model_child(o, c);
    throw Error(fmt::format("bench patterns: unknown case '{}'", o.child));
  });
}

}  // namespace strata::cli
