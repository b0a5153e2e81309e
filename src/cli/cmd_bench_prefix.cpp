// strata bench prefix: what the structured prefix designs of seed 000 (§4.1-4.2) cost an
// encoder. The requirement: blocking and truncation must make attention cheaper, not
// dearer; this benchmark reports forward + backward time of the encoder at 1024 input tokens
// with P = 100 prefixes for Prefix-tune against HierBlock (K = 3), TruncSA and the others, as
// ratios to Prefix-tune measured in the same run.
//
// The step is prefix-tuning's: the backbone is frozen (no parameter requires a gradient) and
// each layer's prefix keys and values [1, H, P, Dh] are leaves that do, so backward runs
// through the whole stack down to the prefixes. Training mode, so SoftSA draws its Gumbel
// noise (and the residual dropout runs, the same in every case).
//
// Cases: no prefix (for reference), Prefix-tune (dense prefixes, softmax), UniBlock
// (prefix_block on every layer), HierBlock (prefix_block below the split, dense above),
// TruncSA (top-p every layer), SoftSA (Gumbel softmax every layer), HierBlock+SoftSA
// (prefix_block and Gumbel below the split, dense above). The split is half the stack rounded
// up, as model.hierarchy_split's default. Inputs are split evenly into K segments and the P
// prefixes into K groups (nn/prefix_tuning.h: encoder_segments, prefix_groups).
//
// Besides the time, each case reports the attention of its layers alone (one call per layer,
// forward + backward, random q k v of the model's shapes, summed over the layers) and the
// fraction of (query, key) pairs whose weight is not zero in the model itself (every key, and
// the prefix slots alone), read from the attention weights after the timing. The layers'
// attention comes from one more child that times every kind of layer (plain with and without
// prefixes, prefix_block, top_p, gumbel, prefix_block + gumbel) interleaved in one process,
// with the tiles its block mask visits.
//
// Times are wall-clock medians (time_rounds, rounds disturbed by other processes set aside)
// and, beside them, the process's CPU time a round. On a 2-core machine shared with other jobs
// two cases timed minutes apart meet different neighbours, so one more child builds every
// case's encoder and runs their steps interleaved, round by round: its "paired" ratios (the
// median of the per-round ratios to Prefix-tune) are the steadiest comparison.
//
// --json FILE: the options, "cases" {name: time_rounds' fields, label, ratio (ms over
// Prefix-tune's), cpu_ms, cpu_ratio, paired_ms, paired_cpu_ms, paired_ratio, paired_cpu_ratio,
// paired_round_ms, attention_ms, attention_ratio, attention_cpu_ms,
// attention_cpu_ratio, visible_fraction, prefix_visible_fraction, layer_visible,
// layer_prefix_visible, layer_kinds, kinds {kind: as below}, peak_rss_mb, process_maxrss_mb},
// "kinds" {kind: attention_layer_ms, attention_layer_cpu_ms, vs_plain, cpu_vs_plain,
// rounds, tile, tile_density, partial_fraction}.
//
// As the other benches, every case runs in a child process of its own (bench_child.h).
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randn.h>
#include <torch/nn/modules/embedding.h>

#include <sys/resource.h>

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
#include "attention_alone.h"
#include "bench_child.h"
#include "commands.h"
#include "strata/attn/attention_call.h"
#include "strata/attn/block_mask.h"
#include "strata/attn/spec.h"
#include "strata/attn/token_layout.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/models/model_layers.h"
#include "strata/nn/multi_head_attention.h"
#include "strata/nn/prefix_tuning.h"
#include "strata/nn/transformer_layers.h"
#include "strata/nn/transformer_stack.h"

namespace strata::cli {

namespace {

using Json = nlohmann::ordered_json;

constexpr double kBusyCores = 0.3;  // other processes' CPU use above which a round is set aside
constexpr std::int64_t kVocab = 1000;

struct BenchOptions {
  std::string json;
  bool quiet = false;
  std::int64_t length = 1024;  // input tokens L
  std::int64_t prefixes = 100;  // P
  std::int64_t blocks = 3;     // K: input segments and prefix groups
  std::int64_t layers = 6;
  std::int64_t d_model = 256;
  std::int64_t heads = 8;
  std::int64_t d_ff = 1024;
  double top_p = 0.95;
  double tau = 1.0;
  int threads = 0;  // 0: every core
  int rounds = 5;
  std::string child;      // hidden: the case this process runs
  std::string child_out;  // hidden: where it writes its result
};

// How a layer attends: which prefix design it runs.
enum class Kind { Plain, Blocked, TopP, Gumbel, BlockedGumbel };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Plain: return "plain";
    case Kind::Blocked: return "prefix_block";
    case Kind::TopP: return "top_p";
    case Kind::Gumbel: return "gumbel";
    case Kind::BlockedGumbel: return "prefix_block+gumbel";
  }
  return "?";
}

struct Case {
  const char* name;
  const char* label;
  bool prefix;  // false: no prefix at all
  Kind lower, upper;  // the layers below the split, and the rest
};

const std::vector<Case>& cases() {
  static const std::vector<Case> list{
      {"no_prefix", "no prefix (reference)", false, Kind::Plain, Kind::Plain},
      {"prefix_tune", "Prefix-tune: P dense prefixes, softmax", true, Kind::Plain, Kind::Plain},
      {"uniblock", "UniBlock: prefix_block on every layer", true, Kind::Blocked, Kind::Blocked},
      {"hierblock", "HierBlock: prefix_block on the lower layers, dense above", true, Kind::Blocked, Kind::Plain},
      {"truncsa", "TruncSA: top-p over the key impact on every layer", true, Kind::TopP, Kind::TopP},
      {"softsa", "SoftSA: Gumbel softmax on every layer (noise drawn)", true, Kind::Gumbel, Kind::Gumbel},
      {"hierblock_softsa", "HierBlock+SoftSA: prefix_block + Gumbel on the lower layers, dense above", true,
       Kind::BlockedGumbel, Kind::Plain},
  };
  return list;
}

constexpr const char* kReference = "prefix_tune";
constexpr const char* kKindsChild = "layer_kinds";  // the child that times each kind of layer alone
constexpr const char* kPairedChild = "paired";       // the child that interleaves every case's step

std::int64_t split_of(std::int64_t layers) { return (layers + 1) / 2; }  // hierarchy_split's default

attn::LayerSpec kind_spec(Kind kind, const BenchOptions& o) {
  attn::LayerSpec spec;
  attn::HeadSpec& head = spec.heads[0];
  if (kind == Kind::Blocked || kind == Kind::BlockedGumbel) head.mask = attn::Mask::of(attn::MaskKind::PrefixBlock);
  if (kind == Kind::TopP) {
    head.normaliser.kind = attn::NormaliserKind::TopP;
    head.normaliser.p = o.top_p;
  }
  if (kind == Kind::Gumbel || kind == Kind::BlockedGumbel) {
    head.normaliser.kind = attn::NormaliserKind::Gumbel;
    head.normaliser.tau = o.tau;
  }
  return spec;
}

std::vector<Kind> layer_kinds(const Case& c, const BenchOptions& o) {
  std::vector<Kind> kinds;
  for (std::int64_t i = 0; i < o.layers; ++i) kinds.push_back(i < split_of(o.layers) ? c.lower : c.upper);
  return kinds;
}

std::int64_t prefix_len(const Case& c, const BenchOptions& o) { return c.prefix ? o.prefixes : 0; }

// ---- the child: one case ----------------------------------------------------------------

struct State {
  attn::TokenLayout tokens;  // segment [1, L] only: the one field prefix_block reads
  torch::nn::Embedding embed{nullptr};
  nn::TransformerEncoder encoder{nullptr};
  at::Tensor ids, padding;
  std::vector<at::Tensor> prefixes;  // k, v of every layer: the trained parameters
};

// One layer's attention as the prefixed encoder hands it over: P prefix slots first.
std::shared_ptr<AttentionAlone> attention_alone(const attn::LayerSpec& spec, const attn::TokenLayout& tokens,
                                                const at::Tensor& groups, std::int64_t prefix,
                                                const BenchOptions& o) {
  auto a = std::make_shared<AttentionAlone>();
  const std::int64_t head_dim = o.d_model / o.heads;
  a->q = at::randn({1, o.heads, o.length, head_dim}).requires_grad_(true);
  a->k = at::randn({1, o.heads, prefix + o.length, head_dim}).requires_grad_(true);
  a->v = at::randn({1, o.heads, prefix + o.length, head_dim}).requires_grad_(true);
  a->spec = spec;
  a->call.q = a->q;
  a->call.k = a->k;
  a->call.v = a->v;
  a->call.prefix_len = prefix;
  a->call.prefix_segment = groups;
  a->call.training = true;
  a->call.seed = 99;
  if (!spec.is_plain()) {
    a->call.spec = &a->spec;
    a->call.query_layout = &tokens;
    a->call.key_layout = &tokens;
  }
  return a;
}

// This process's CPU time (user + system, every thread), in ms. On a machine shared with
// other jobs it is steadier than the wall clock: the work a step takes, not how long it waited.
double cpu_ms() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return 1e3 * (static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec));
}

// time_rounds, and the CPU time per round over all the rounds it ran.
struct Timed {
  TimedRounds rounds;
  double cpu_ms_per_round = 0;
};

Timed timed(const std::function<void()>& step, int rounds) {
  const double start = cpu_ms();
  Timed t{time_rounds(step, rounds, kBusyCores)};
  t.cpu_ms_per_round = (cpu_ms() - start) / static_cast<double>(std::max<std::size_t>(t.rounds.ms.size(), 1));
  return t;
}

// Visited and partial tiles of a call's block mask, as fractions of all tiles.
Json block_mask_json(const attn::AttentionCall& call) {
  const attn::BlockMask mask = attn::compile_block_mask(call);
  std::int64_t full = 0;
  for (std::uint8_t f : mask.full) full += f;
  const double tiles = static_cast<double>(mask.batch * mask.groups * mask.q_tiles * mask.k_tiles);
  return {{"tile", mask.q_tile},
          {"tile_density", mask.tile_density()},
          {"partial_fraction", tiles > 0 ? static_cast<double>(mask.tile.size() - full) / tiles : 0.0}};
}

void start_child(const BenchOptions& o) {
  at::set_num_threads(o.threads);
  at::manual_seed(1234);
  (void)at::mm(at::randn({64, 64}), at::randn({64, 64}));  // start the thread pools
}

// The case's encoder, frozen, with trainable prefixes, and its step.
std::shared_ptr<State> build_case(const BenchOptions& o, const Case& c) {
  at::manual_seed(4321);  // the same weights in every case and process
  const std::int64_t prefix = prefix_len(c, o);
  nn::StackOptions stack;
  stack.layer.attention.d_model = o.d_model;
  stack.layer.attention.heads = o.heads;
  stack.layer.attention.kernel = attn::Kernel::Fused;
  stack.layer.d_ff = o.d_ff;
  stack.layers = o.layers;
  stack.max_positions = std::max<std::int64_t>(1024, o.length);
  for (Kind k : layer_kinds(c, o)) stack.self_specs.push_back(kind_spec(k, o));

  auto state = std::make_shared<State>();
  state->padding = at::ones({1, o.length}, at::kBool);
  state->tokens.segment = nn::encoder_segments(state->padding, o.length, o.blocks);
  const at::Tensor groups = prefix > 0 ? nn::prefix_groups(prefix, o.blocks) : at::Tensor();
  state->embed = torch::nn::Embedding(kVocab, o.d_model);
  state->encoder = nn::TransformerEncoder(stack, state->embed);
  models::init_weights(*state->encoder, 1);
  models::init_weights(*state->embed, 1);
  for (at::Tensor& p : state->encoder->parameters()) p.requires_grad_(false);
  for (at::Tensor& p : state->embed->parameters()) p.requires_grad_(false);
  const std::int64_t head_dim = o.d_model / o.heads;
  for (const auto& layer : *state->encoder->layers) {
    nn::PrefixKv kv;
    if (prefix > 0) {
      kv.k = at::randn({1, o.heads, prefix, head_dim}).requires_grad_(true);
      kv.v = at::randn({1, o.heads, prefix, head_dim}).requires_grad_(true);
      kv.segment = groups;
      state->prefixes.push_back(kv.k);
      state->prefixes.push_back(kv.v);
      layer->as<nn::EncoderLayer>()->self_attn->set_prefix(kv);
    }
  }
  state->encoder->train();
  state->ids = (at::arange(o.length, at::kLong).mul(7919).remainder(kVocab - 4) + 4).unsqueeze(0);
  if (state->prefixes.empty()) {
    // Without prefixes nothing would require a gradient: the position embeddings stand in,
    // so backward runs through the whole stack as in the other cases.
    state->encoder->embed_positions->weight.requires_grad_(true);
    state->prefixes.push_back(state->encoder->embed_positions->weight);
  }
  return state;
}

void step_of(State& state) {
  state.encoder->forward(state.ids, state.padding, &state.tokens).square().sum().backward();
  for (at::Tensor& p : state.prefixes) p.mutable_grad().reset();
}

void run_child(const BenchOptions& o, const Case& c) {
  start_child(o);
  const std::vector<Kind> kinds = layer_kinds(c, o);
  const std::int64_t prefix = prefix_len(c, o);
  const std::shared_ptr<State> state = build_case(o, c);
  const auto step = [state] { step_of(*state); };
  const long inputs_kb = status_kb("VmRSS");
  step();  // warm-up
  const Timed rounds = timed(step, o.rounds);
  const long hwm_kb = status_kb("VmHWM");

  // Which pairs the model's attention really gives weight to: every layer's weights over the
  // prefix slots and the keys proper (the attention module records them with the dense
  // reference kernel, after the timing and the memory peak above).
  std::vector<double> visible, prefix_visible;
  {
    at::NoGradGuard no_grad;
    for (const auto& layer : *state->encoder->layers) layer->as<nn::EncoderLayer>()->self_attn->record_weights(true);
    (void)state->encoder->forward(state->ids, state->padding, &state->tokens);
    for (const auto& layer : *state->encoder->layers) {
      nn::MultiHeadAttention& attention = layer->as<nn::EncoderLayer>()->self_attn;
      const at::Tensor nonzero = attention->recorded_weights().ne(0);  // [1, H, L, P + L]
      visible.push_back(nonzero.to(at::kDouble).mean().item<double>());
      if (prefix > 0)
        prefix_visible.push_back(nonzero.narrow(3, 0, prefix).to(at::kDouble).mean().item<double>());
      attention->record_weights(false);
    }
  }

  Json kind_names = Json::array();
  for (Kind k : kinds) kind_names.push_back(kind_name(k));
  Json result{{"prefix_len", prefix}, {"layer_kinds", kind_names}};
  result.update(rounds.rounds.to_json());
  result["cpu_ms"] = rounds.cpu_ms_per_round;
  result["layer_visible"] = visible;
  result["layer_prefix_visible"] = prefix_visible;
  result["inputs_kb"] = inputs_kb;
  result["hwm_kb"] = hwm_kb;
  write_file_atomic(o.child_out, result.dump());
}

// The layer kinds the cases use, by name ("plain_no_prefix": a plain layer of the no-prefix
// case); each is timed alone by the kinds child.
struct LayerKind {
  std::string name;
  Kind kind;
  bool prefix;
};

std::vector<LayerKind> layer_kind_list() {
  return {{"plain_no_prefix", Kind::Plain, false}, {"plain", Kind::Plain, true},
          {kind_name(Kind::Blocked), Kind::Blocked, true},  {kind_name(Kind::TopP), Kind::TopP, true},
          {kind_name(Kind::Gumbel), Kind::Gumbel, true},   {kind_name(Kind::BlockedGumbel), Kind::BlockedGumbel, true}};
}

std::string layer_kind_name(Kind kind, bool prefix) {
  return kind == Kind::Plain && !prefix ? "plain_no_prefix" : kind_name(kind);
}

// One layer's attention of every kind, timed in one process and interleaved: each round runs
// every kind once (in a rotating order), so a neighbour's load falls on all kinds alike; the
// ratio to plain is the median of the per-round ratios.
void run_kinds_child(const BenchOptions& o) {
  start_child(o);
  attn::TokenLayout tokens;
  tokens.segment = nn::encoder_segments(at::ones({1, o.length}, at::kBool), o.length, o.blocks);
  const at::Tensor groups = nn::prefix_groups(o.prefixes, o.blocks);
  const std::vector<LayerKind> kinds = layer_kind_list();
  std::vector<std::shared_ptr<AttentionAlone>> calls;
  for (const LayerKind& k : kinds) {
    calls.push_back(attention_alone(kind_spec(k.kind, o), tokens, k.prefix ? groups : at::Tensor(),
                                    k.prefix ? o.prefixes : 0, o));
    calls.back()->step();  // warm-up
  }
  const std::size_t n = kinds.size();
  const int rounds = 3 * o.rounds;
  std::vector<std::vector<double>> wall(n), cpu(n);
  for (int round = 0; round < rounds; ++round)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t k = (j + static_cast<std::size_t>(round)) % n;
      const double cpu_start = cpu_ms();
      const auto start = std::chrono::steady_clock::now();
      calls[k]->step();
      wall[k].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      cpu[k].push_back(cpu_ms() - cpu_start);
    }
  Json result = Json::object();
  for (std::size_t k = 0; k < n; ++k) {
    std::vector<double> wall_ratio, cpu_ratio;
    for (int round = 0; round < rounds; ++round) {
      wall_ratio.push_back(wall[k][round] / wall[1][round]);  // kind 1: plain, with prefixes
      cpu_ratio.push_back(cpu[k][round] / cpu[1][round]);
    }
    Json entry{{"attention_layer_ms", median_of(wall[k])},
               {"attention_layer_cpu_ms", median_of(cpu[k])},
               {"vs_plain", median_of(wall_ratio)},
               {"cpu_vs_plain", median_of(cpu_ratio)},
               {"rounds", rounds}};
    entry.update(block_mask_json(calls[k]->call));
    result[kinds[k].name] = std::move(entry);
  }
  write_file_atomic(o.child_out, result.dump());
}

// Every case's encoder in one process, their steps interleaved: each round runs every case
// once (in a rotating order), so a neighbour's load falls on all cases alike; the paired ratio
// is the median of the per-round ratios to Prefix-tune. (Memory is not measured here: the
// cases' own children do that.)
void run_paired_child(const BenchOptions& o) {
  start_child(o);
  std::vector<std::shared_ptr<State>> states;
  for (const Case& c : cases()) {
    states.push_back(build_case(o, c));
    step_of(*states.back());  // warm-up
  }
  const std::size_t n = states.size();
  const std::size_t reference = static_cast<std::size_t>(
      std::find_if(cases().begin(), cases().end(), [](const Case& c) { return std::string(c.name) == kReference; }) -
      cases().begin());
  std::vector<std::vector<double>> wall(n), cpu(n);
  for (int round = 0; round < o.rounds; ++round)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t k = (j + static_cast<std::size_t>(round)) % n;
      const double cpu_start = cpu_ms();
      const auto start = std::chrono::steady_clock::now();
      step_of(*states[k]);
      wall[k].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      cpu[k].push_back(cpu_ms() - cpu_start);
    }
  Json result = Json::object();
  for (std::size_t k = 0; k < n; ++k) {
    std::vector<double> wall_ratio, cpu_ratio;
    for (int round = 0; round < o.rounds; ++round) {
      wall_ratio.push_back(wall[k][round] / wall[reference][round]);
      cpu_ratio.push_back(cpu[k][round] / cpu[reference][round]);
    }
    result[cases()[k].name] = {{"paired_ms", median_of(wall[k])},
                               {"paired_cpu_ms", median_of(cpu[k])},
                               {"paired_ratio", median_of(wall_ratio)},
                               {"paired_cpu_ratio", median_of(cpu_ratio)},
                               {"paired_round_ms", wall[k]}};
  }
  write_file_atomic(o.child_out, result.dump());
}

// ---- the parent: spawn, collect, compare ------------------------------------------------

struct Measured {
  Json result;
  double maxrss_mb = 0;  // the child's ru_maxrss: the whole process, the analyses after the timing included
};

Measured measure(const BenchOptions& o, const std::string& name) {
  const std::vector<std::string> args{
      "--length",  std::to_string(o.length),  "--prefixes", std::to_string(o.prefixes),
      "--blocks",  std::to_string(o.blocks),  "--layers",   std::to_string(o.layers),
      "--d-model", std::to_string(o.d_model), "--heads",    std::to_string(o.heads),
      "--d-ff",    std::to_string(o.d_ff),    "--top-p",    fmt::format("{}", o.top_p),
      "--tau",     fmt::format("{}", o.tau),  "--threads",  std::to_string(o.threads),
      "--rounds",  std::to_string(o.rounds)};
  ChildResult child = run_case_in_child("prefix", name, args);
  return {std::move(child.result), child.maxrss_mb};
}

double mean_of(const Json& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (const Json& v : values) sum += v.get<double>();
  return sum / static_cast<double>(values.size());
}

void run_parent(const BenchOptions& o) {
  const double others_before = bench::idle_probe(1.0);
  const std::int64_t split = split_of(o.layers);
  std::printf("prefix: encoder of %ld layers (d_model %ld, %ld heads of %ld, d_ff %ld), batch 1, L = %ld input "
              "tokens, P = %ld prefixes a layer, K = %ld segments and prefix groups, lower layers: 0..%ld; fp32, "
              "fused kernel, training mode; backbone frozen, forward + backward of sum(hidden^2) to the prefix "
              "keys and values; top-p %.2f, Gumbel tau %.2f; %d threads, median of %d rounds\n",
              long(o.layers), long(o.d_model), long(o.heads), long(o.d_model / o.heads), long(o.d_ff),
              long(o.length), long(o.prefixes), long(o.blocks), long(split - 1), o.top_p, o.tau, o.threads,
              o.rounds);
  std::printf("other processes' CPU use before the start: %.2f cores%s\n", others_before,
              others_before > kBusyCores ? "  -- machine busy: timings may be noisy" : "");
  std::fflush(stdout);

  std::map<std::string, Measured> m;
  const std::size_t total = cases().size() + 2;
  for (std::size_t i = 0; i < total; ++i) {
    const std::string name = i < cases().size()       ? cases()[i].name
                             : i == cases().size()    ? kKindsChild
                                                      : kPairedChild;
    if (!o.quiet) std::fprintf(stderr, "bench prefix: [%zu/%zu] %s ...\n", i + 1, total, name.c_str());
    m[name] = measure(o, name);
    if (!o.quiet && i < cases().size())
      std::fprintf(stderr, "bench prefix: [%zu/%zu] %s %.1f ms\n", i + 1, total, name.c_str(),
                   m[name].result["median_ms"].get<double>());
  }
  // Each case's attention: its layers' kinds, timed alone by the kinds child.
  const Json& kinds = m[kKindsChild].result;
  std::map<std::string, double> attention_of, attention_cpu_of;
  for (const Case& c : cases())
    for (Kind k : layer_kinds(c, o)) {
      const Json& kind = kinds[layer_kind_name(k, c.prefix)];
      attention_of[c.name] += kind["attention_layer_ms"].get<double>();
      attention_cpu_of[c.name] += kind["attention_layer_cpu_ms"].get<double>();
    }
  const double reference_ms = m[kReference].result["median_ms"].get<double>();
  const double reference_cpu = m[kReference].result["cpu_ms"].get<double>();
  const double reference_attention = attention_of[kReference];
  const double reference_attention_cpu = attention_cpu_of[kReference];

  const Json& paired = m[kPairedChild].result;
  std::printf("\n%-17s %9s %6s %7s %7s %9s %6s %7s %8s %8s %7s\n", "case", "ms", "ratio", "paired", "cpu", "attn ms",
              "ratio", "cpu", "visible", "prefix", "peak MB");
  Json cases_json = Json::object();
  std::string busy;
  for (const Case& c : cases()) {
    const Measured& r = m[c.name];
    const double ms = r.result["median_ms"].get<double>();
    const double cpu = r.result["cpu_ms"].get<double>();
    const double attention = attention_of[c.name];
    const double attention_cpu = attention_cpu_of[c.name];
    const double visible = mean_of(r.result["layer_visible"]);
    const bool has_prefix = !r.result["layer_prefix_visible"].empty();
    const double prefix_visible = mean_of(r.result["layer_prefix_visible"]);
    const double peak_mb = r.result["hwm_kb"].get<double>() / 1024.0;
    const Json& pair = paired[c.name];
    std::printf("%-17s %9.1f %6.3f %7.3f %7.3f %9.1f %6.3f %7.3f %8.4f %8s %7.0f\n", c.name, ms, ms / reference_ms,
                pair["paired_ratio"].get<double>(), pair["paired_cpu_ratio"].get<double>(), attention,
                attention / reference_attention, attention_cpu / reference_attention_cpu, visible,
                has_prefix ? fmt::format("{:.4f}", prefix_visible).c_str() : "-", peak_mb);
    if (r.result["busy_rounds_included"].get<bool>()) busy.append(busy.empty() ? "" : ", ").append(c.name);
    Json entry{{"label", c.label}};
    entry.update(r.result);
    for (const char* internal : {"inputs_kb", "hwm_kb"}) entry.erase(internal);
    entry["ratio"] = ms / reference_ms;
    entry["ratio_of"] = fmt::format("{}/{}", c.name, kReference);
    entry["cpu_ratio"] = cpu / reference_cpu;
    entry.update(pair);
    entry["attention_ms"] = attention;
    entry["attention_cpu_ms"] = attention_cpu;
    entry["attention_ratio"] = attention / reference_attention;
    entry["attention_cpu_ratio"] = attention_cpu / reference_attention_cpu;
    Json used = Json::object();
    for (Kind k : layer_kinds(c, o)) used[layer_kind_name(k, c.prefix)] = kinds[layer_kind_name(k, c.prefix)];
    entry["kinds"] = std::move(used);
    entry["visible_fraction"] = visible;
    entry["prefix_visible_fraction"] = has_prefix ? Json(prefix_visible) : Json(nullptr);
    entry["peak_rss_mb"] = peak_mb;
    entry["rss_growth_mb"] = (r.result["hwm_kb"].get<double>() - r.result["inputs_kb"].get<double>()) / 1024.0;
    entry["process_maxrss_mb"] = r.maxrss_mb;
    cases_json[c.name] = std::move(entry);
  }
  std::printf("\nms: median wall time of a step, the case alone in its process; ratio: against %s, this run; "
              "paired: the median ratio when every case's step runs interleaved in one process (a neighbour's "
              "load falls on all alike), wall clock, then CPU time (the process's, every thread); attn ms: the "
              "case's layers' attention alone (one call each, forward + backward, random q k v of the model's "
              "shapes; the kinds below, summed over the layers), its ratio, wall clock, then CPU time; visible: "
              "fraction of (query, key) pairs with a nonzero weight in the model, mean over layers and heads; "
              "prefix: the same over (query, prefix slot) pairs; peak MB: the case's process at the end of its "
              "timed rounds (VmHWM)\n",
              kReference);
  std::printf("\nper layer kind: one layer's attention alone, every kind in one process, interleaved (%d rounds); "
              "vs plain: the median of the per-round ratios to plain (with prefixes); the tiles its block mask "
              "visits, and the partial ones\n",
              kinds["plain"]["rounds"].get<int>());
  std::printf("%-21s %9s %9s %9s %9s %13s %9s\n", "kind", "ms", "vs plain", "cpu ms", "vs plain", "tiles visited",
              "partial");
  for (const LayerKind& lk : layer_kind_list()) {
    const Json& k = kinds[lk.name];
    std::printf("%-21s %9.1f %9.3f %9.1f %9.3f %12.1f%% %8.1f%%\n", lk.name.c_str(),
                k["attention_layer_ms"].get<double>(), k["vs_plain"].get<double>(),
                k["attention_layer_cpu_ms"].get<double>(), k["cpu_vs_plain"].get<double>(),
                100 * k["tile_density"].get<double>(), 100 * k["partial_fraction"].get<double>());
  }
  for (const Case& c : cases()) std::printf("%-17s %s\n", c.name, c.label);
  if (!busy.empty())
    std::printf("noisy: other processes used the CPU in most rounds of %s; rerun on a quiet machine\n", busy.c_str());
  const double hier = m["hierblock"].result["median_ms"].get<double>() / reference_ms;
  const double trunc = m["truncsa"].result["median_ms"].get<double>() / reference_ms;
  std::printf("\nHierBlock / Prefix-tune = %.3f, TruncSA / Prefix-tune = %.3f (encoder forward + backward, "
              "L = %ld, P = %ld; paired: %.3f and %.3f)\n",
              hier, trunc, long(o.length), long(o.prefixes), paired["hierblock"]["paired_ratio"].get<double>(),
              paired["truncsa"]["paired_ratio"].get<double>());

  if (!o.json.empty()) {
    const Json result{
        {"benchmark", "prefix"},
        {"batch", 1},
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
         "prefix keys and values of every layer"},
        {"threads", o.threads},
        {"rounds", o.rounds},
        {"other_processes_cores_before", others_before},
        {"busy_threshold_cores", kBusyCores},
        {"reference", kReference},
        {"hierblock_ratio", hier},
        {"truncsa_ratio", trunc},
        {"hierblock_paired_ratio", paired["hierblock"]["paired_ratio"]},
        {"truncsa_paired_ratio", paired["truncsa"]["paired_ratio"]},
        {"kinds", kinds},
        {"memory_method",
         "each case in a child process: peak_rss_mb = its VmHWM after the timed rounds; rss_growth_mb = that "
         "minus VmRSS once the model and inputs were built; process_maxrss_mb = its ru_maxrss, the analyses "
         "after the timing included"},
        {"cases", std::move(cases_json)}};
    write_file_atomic(o.json, result.dump(2) + "\n");
    std::printf("results: %s\n", o.json.c_str());
  }
}

void check_options(const BenchOptions& o) {
  if (o.d_model % o.heads != 0)
    throw Error(fmt::format("bench prefix: --d-model {} is not divisible by --heads {}", o.d_model, o.heads));
  if (!(o.top_p > 0 && o.top_p <= 1)) throw Error(fmt::format("bench prefix: --top-p {} must lie in (0, 1]", o.top_p));
  if (!(o.tau > 0)) throw Error(fmt::format("bench prefix: --tau {} must be positive", o.tau));
}

}  // namespace

void register_bench_prefix(CLI::App& bench) {
  CLI::App* prefix = bench.add_subcommand(
      "prefix",
      "Time the structured prefix designs of seed 000 (§4.1-4.2) in an encoder (6 layers, d_model 256, 8 "
      "heads, d_ff 1024, batch 1, fp32, fused kernel) at 1024 input tokens with P = 100 prefixes a layer: "
      "prefix-tuning's step, backbone frozen, forward + backward down to the prefix keys and values. Cases: "
      "no prefix, Prefix-tune (dense prefixes), UniBlock (prefix_block on every layer), HierBlock "
      "(prefix_block on the lower half, dense above; inputs in K segments, prefixes in K groups), TruncSA "
      "(top-p 0.95 over the key impact), SoftSA (Gumbel softmax, tau 1), HierBlock+SoftSA. Each case in a "
      "child process of its own, median of several rounds, and all of them again interleaved in one process "
      "(paired ratios: the steadiest on a shared machine); one line a case: ms and its ratio to Prefix-tune "
      "in the same run, the paired ratio, the attention alone and its ratio, the fraction of (query, key) "
      "pairs visible (every key, and the prefix slots alone), peak memory; then each kind of layer's "
      "attention and the tiles its block mask visits.");
  auto options = std::make_shared<BenchOptions>();
  prefix->add_option("--json", options->json, "also write the results to this JSON file");
  prefix->add_flag("--quiet", options->quiet, "no progress output");
  prefix->add_option("--length", options->length, "input tokens L (default 1024)")
      ->check(CLI::Range(std::int64_t{4}, std::int64_t{1} << 20));
  prefix->add_option("--prefixes", options->prefixes, "prefix slots P a layer (default 100)")
      ->check(CLI::PositiveNumber);
  prefix->add_option("--blocks", options->blocks,
                     "K: input segments and prefix groups of UniBlock / HierBlock (default 3)")
      ->check(CLI::PositiveNumber);
  prefix->add_option("--layers", options->layers, "encoder layers (default 6; the lower half, rounded up, is blocked)")
      ->check(CLI::PositiveNumber);
  prefix->add_option("--d-model", options->d_model, "model width (default 256)")->check(CLI::PositiveNumber);
  prefix->add_option("--heads", options->heads, "attention heads (default 8)")->check(CLI::PositiveNumber);
  prefix->add_option("--d-ff", options->d_ff, "feed-forward width (default 1024)")->check(CLI::PositiveNumber);
  prefix->add_option("--top-p", options->top_p, "TruncSA's p (default 0.95)");
  prefix->add_option("--tau", options->tau, "SoftSA's Gumbel temperature (default 1)");
  prefix->add_option("--threads", options->threads, "threads (default: every core)")->check(CLI::PositiveNumber);
  prefix->add_option("--rounds", options->rounds, "timed rounds a case (default 5)")->check(CLI::PositiveNumber);
  prefix->add_option("--child", options->child)->group("");
  prefix->add_option("--child-out", options->child_out)->group("");
  on_run(prefix, [options] {
    BenchOptions o = *options;
    if (o.threads == 0) o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    check_options(o);
    if (o.child.empty()) return run_parent(o);
    if (o.child == kKindsChild) return run_kinds_child(o);
    if (o.child == kPairedChild) return run_paired_child(o);
    const auto c = std::find_if(cases().begin(), cases().end(), [&](const Case& k) { return o.child == k.name; });
    if (c == cases().end()) throw Error(fmt::format("bench prefix: unknown case '{}'", o.child));
    run_child(o, *c);
  });
}

}  // namespace strata::cli
