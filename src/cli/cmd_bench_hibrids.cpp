// strata bench hibrids: what a HIBRIDS bias costs a long-document encoder (seed 001, "Speed
// and size"). The bias lives in the fused kernel: the relation id of a pair comes from the
// two tokens' section ids through an S x S table, so memory grows as O(S^2 + L), never as
// O(L^2). Measured: forward + backward of the same encoder with and without the bias, and the
// peak memory of each, in one run.
//
// As `strata bench attention`: every case runs in a child process of its own (bench_child.h)
// that builds the encoder and the document layout, warms up, times rounds, sets aside rounds
// disturbed by other processes and reports the median, with its resident memory once the
// inputs were built and its peak (VmHWM) after the last round; the parent adds ru_maxrss.
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/mm.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../../bench/cpu_load.h"
#include "bench_child.h"
#include "commands.h"
#include "strata/attn/spec.h"
#include "strata/attn/token_layout.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/doc/layout.h"
#include "strata/models/model_config.h"
#include "strata/models/model_layers.h"
#include "strata/nn/multi_head_attention.h"
#include "strata/nn/transformer_layers.h"
#include "strata/nn/transformer_stack.h"

namespace strata::cli {

namespace {

using Json = nlohmann::ordered_json;

constexpr std::int64_t kLayers = 2;
constexpr std::int64_t kDModel = 256;
constexpr std::int64_t kHeads = 4;
constexpr std::int64_t kDff = 1024;
constexpr int kSections = 60;        // sections of the synthetic document (the root aside)
constexpr int kMaxDepth = 4;         // deepest section level
constexpr int kSentenceTokens = 20;  // tokens a sentence
constexpr int kParagraphSentences = 4;
constexpr double kBusyCores = 0.3;   // other processes' CPU use above which a round is set aside
constexpr double kTarget = 1.3;      // HIBRIDS time / base time, at most

struct BenchOptions {
  bool quick = false;
  std::string json;
  std::int64_t length = 0;    // 0: 8192, or 2048 with --quick
  std::int64_t window = 256;  // half-width W of window(W, W)
  int threads = 0;            // 0: every core
  int rounds = 0;             // 0: 5, or 1 with --quick
  std::string child;          // hidden: the case this process runs
  std::string child_out;      // hidden: where it writes its result
};

struct Case {
  const char* name;
  const char* label;
  attn::RelationKind bias;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> list{
      {"base", "window(W,W) | global(1), no bias (the Longformer-style base of seed 001)",
       attn::RelationKind::None},
      {"hibrids", "the same + HIBRIDS bias (PathLen, LvlDiff; max_path 4, max_level 2)",
       attn::RelationKind::Hibrids},
      {"hibrids_selected", "the same + HIBRIDS_S bias (salient section relations)",
       attn::RelationKind::HibridsSelected},
  };
  return list;
}

attn::LayerSpec case_spec(const Case& c, std::int64_t window) {
  attn::LayerSpec spec;
  spec.heads[0].mask = attn::Mask::window(window, window) || attn::Mask::global(1);
  spec.bias.kind = c.bias;  // max_path 4, max_level 2 by default
  return spec;
}

// ---- the document -----------------------------------------------------------------------

// A long document of `length` tokens: `sections` sections in document order forming a tree
// up to depth 4 (a section is at most one level deeper than the one before it), each 1 to 6
// parts long, so lengths vary; sentences of 20 tokens and paragraphs of 4 sentences that
// restart with each section; token ids in a fixed scattered order over 1000 values.
// Everything comes from a fixed linear congruential sequence: every run sees the same tree.
Layout synthetic_document(std::int64_t length, int sections) {
  std::uint32_t state = 20240601u;
  const auto next = [&state](std::uint32_t n) {
    state = state * 1664525u + 1013904223u;
    return static_cast<int>((state >> 8) % n);
  };
  Layout layout;
  layout.tree.parent = {-1};
  layout.tree.depth = {0};
  layout.tree.heading = {"document"};
  std::vector<int> last_at_depth{0};  // the latest section at each depth, the root at 0
  std::vector<int> weight(1, 0);
  int depth = 0, total_weight = 0;
  for (int s = 1; s <= sections; ++s) {
    const int r = next(10);
    if (s == 1) depth = 1;
    else if (r < 4 && depth < kMaxDepth) ++depth;   // a child of the previous section
    else if (r >= 7) depth = std::max(1, depth - (r == 9 ? 2 : 1));  // back up the tree
    last_at_depth.resize(static_cast<std::size_t>(depth));
    layout.tree.parent.push_back(last_at_depth.back());
    layout.tree.depth.push_back(depth);
    layout.tree.heading.push_back(fmt::format("section {}", s));
    last_at_depth.push_back(s);
    weight.push_back(1 + next(6));
    total_weight += weight.back();
  }
  std::int32_t sentence = -1, paragraph = -1;
  int cumulative = 0;
  for (int s = 1; s <= sections; ++s) {
    const std::int64_t begin = length * cumulative / total_weight;
    cumulative += weight[static_cast<std::size_t>(s)];
    const std::int64_t end = length * cumulative / total_weight;
    for (std::int64_t i = begin; i < end; ++i) {
      const std::int64_t in_section = i - begin;
      if (in_section % kSentenceTokens == 0) {
        ++sentence;
        if (in_section % (kSentenceTokens * kParagraphSentences) == 0) ++paragraph;
      }
      layout.position.push_back(static_cast<std::int32_t>(i));
      layout.token.push_back(static_cast<std::int32_t>(4 + (i * 7919) % 1000));
      layout.section.push_back(s);
      layout.sentence.push_back(sentence);
      layout.paragraph.push_back(paragraph);
      layout.segment.push_back(0);
    }
  }
  return layout;
}

int sections_for(std::int64_t length) {
  return static_cast<int>(std::min<std::int64_t>(kSections, length));
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

void run_child(const BenchOptions& options, const Case& c) {
  at::set_num_threads(options.threads);
  at::manual_seed(1234);
  (void)at::mm(at::randn({64, 64}), at::randn({64, 64}));  // start the thread pools

  models::ModelConfig config;
  config.d_model = kDModel;
  config.heads = kHeads;
  config.d_ff = kDff;
  config.encoder_layers = kLayers;
  config.max_positions = std::max<std::int64_t>(1024, options.length);
  config.encoder_attention = {case_spec(c, options.window)};
  config.check();

  auto state = std::make_shared<State>();
  state->layout = synthetic_document(options.length, sections_for(options.length));
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
  state->padding = at::ones({1, options.length}, at::kBool);
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
  const long inputs_kb = status_kb("VmRSS");
  step();  // warm-up
  const TimedRounds rounds = time_rounds(step, options.rounds, kBusyCores);
  Json result{{"spec", to_json(config.encoder_attention.front())},
              {"relation_count", relation_count},
              {"parameters", parameter_count}};
  result.update(rounds.to_json());
  result["inputs_kb"] = inputs_kb;
  result["hwm_kb"] = status_kb("VmHWM");
  write_file_atomic(options.child_out, result.dump());
}

// ---- the parent: spawn, collect, compare ------------------------------------------------

struct Measured {
  Json result;
  double maxrss_mb = 0;  // the child's ru_maxrss: the whole process, libtorch included
  double growth_mb = 0;  // VmHWM minus VmRSS once model and inputs were built: what the steps added
};

Measured measure(const BenchOptions& options, const Case& c) {
  std::vector<std::string> args{"--length", std::to_string(options.length), "--window",
                                std::to_string(options.window), "--threads", std::to_string(options.threads),
                                "--rounds", std::to_string(options.rounds)};
  if (options.quick) args.push_back("--quick");
  ChildResult child = run_case_in_child("hibrids", c.name, args);
  Measured m;
  m.result = std::move(child.result);
  m.maxrss_mb = child.maxrss_mb;
  m.growth_mb = (m.result["hwm_kb"].get<double>() - m.result["inputs_kb"].get<double>()) / 1024.0;
  return m;
}

std::string bytes_text(double bytes) {
  if (bytes >= 1024.0 * 1024.0 * 1024.0) return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  if (bytes >= 1024.0 * 1024.0) return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0));
  if (bytes >= 1024.0) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

// What the kernel reads to find a pair's relation id, against an L x L index.
struct LayoutMemory {
  std::int64_t per_token = 0;     // the [B, L] id tensors
  std::int64_t token_fields = 0;  // how many of them
  std::int64_t section = 0;       // path_len, lvl_diff [B, S, S] and section_depth [B, S]
  std::int64_t relation_ids = 0;  // the relation's [B, S, S] ids
  std::int64_t sections = 0;      // S, the root included
  std::int64_t dense = 0;         // an L x L int64 index
  std::int64_t total() const { return per_token + section + relation_ids; }
};

LayoutMemory layout_memory(std::int64_t length) {
  const Layout layout = synthetic_document(length, sections_for(length));
  const attn::TokenLayout tokens = attn::batch_layouts({&layout});
  LayoutMemory m;
  for (const at::Tensor* t : {&tokens.section, &tokens.paragraph, &tokens.sentence, &tokens.segment,
                              &tokens.document, &tokens.token, &tokens.repeated})
    if (t->defined()) {
      m.per_token += static_cast<std::int64_t>(t->nbytes());
      ++m.token_fields;
    }
  for (const at::Tensor* t : {&tokens.path_len, &tokens.lvl_diff, &tokens.section_depth})
    if (t->defined()) m.section += static_cast<std::int64_t>(t->nbytes());
  attn::Relation hibrids;
  hibrids.kind = attn::RelationKind::Hibrids;
  m.relation_ids = static_cast<std::int64_t>(
      attn::section_relation_ids(hibrids, tokens.path_len, tokens.lvl_diff, tokens.section_depth).nbytes());
  m.sections = tokens.path_len.size(1);
  m.dense = length * length * static_cast<std::int64_t>(sizeof(std::int64_t));
  return m;
}

void run_parent(const BenchOptions& options) {
  const double others_before = bench::idle_probe(1.0);
  const Layout document = synthetic_document(options.length, sections_for(options.length));
  std::int64_t shortest = options.length, longest = 0;
  for (int s = 1; s < document.tree.size(); ++s) {
    const auto n = std::count(document.section.begin(), document.section.end(), s);
    shortest = std::min<std::int64_t>(shortest, n);
    longest = std::max<std::int64_t>(longest, n);
  }
  const int deepest = *std::max_element(document.tree.depth.begin(), document.tree.depth.end());
  const std::int64_t sentences = document.sentence.empty() ? 0 : document.sentence.back() + 1;
  const std::string mask = attn::to_string(attn::Mask::window(options.window, options.window) || attn::Mask::global(1));

  std::printf("hibrids: encoder of %ld layers (d_model %ld, %ld heads, d_ff %ld), batch 1, L = %ld, fp32, "
              "every layer %s, forward + backward of sum(hidden^2), %d threads, median of %d rounds%s\n",
              long(kLayers), long(kDModel), long(kHeads), long(kDff), long(options.length), mask.c_str(),
              options.threads, options.rounds, options.quick ? " (--quick)" : "");
  std::printf("document: %d sections up to depth %d, %ld to %ld tokens each, %ld sentences of up to %d tokens\n",
              document.tree.size() - 1, deepest, long(shortest), long(longest), long(sentences), kSentenceTokens);
  std::printf("other processes' CPU use before the start: %.2f cores%s\n", others_before,
              others_before > kBusyCores ? "  -- machine busy: timings may be noisy" : "");
  std::fflush(stdout);

  std::map<std::string, Measured> m;
  for (std::size_t i = 0; i < cases().size(); ++i) {
    const Case& c = cases()[i];
    std::fprintf(stderr, "bench hibrids: [%zu/%zu] %s ...\n", i + 1, cases().size(), c.name);
    m[c.name] = measure(options, c);
    std::fprintf(stderr, "bench hibrids: [%zu/%zu] %s %.1f ms\n", i + 1, cases().size(), c.name,
                 m[c.name].result["median_ms"].get<double>());
  }
  // After the children: the parent may start libtorch's thread pools from here on.
  const LayoutMemory memory = layout_memory(options.length);
  const double base_ms = m["base"].result["median_ms"].get<double>();

  std::printf("\n%-17s %10s %7s %-21s %-8s %-4s %9s %8s %8s\n", "case", "ms", "ratio", "of", "target", "met",
              "relations", "peak MB", "+MB");
  Json cases_json = Json::object();
  std::string busy;  // cases whose median had to include busy rounds
  bool all_met = true;
  for (const Case& c : cases()) {
    const Measured& r = m[c.name];
    Json entry{{"label", c.label}};
    entry.update(r.result);
    const double ms = r.result["median_ms"].get<double>();
    const double ratio = ms / base_ms;
    const bool judged = c.bias != attn::RelationKind::None;
    const bool met = ratio <= kTarget;
    if (judged) all_met = all_met && met;
    const std::string of = fmt::format("{}/base", c.name);
    std::printf("%-17s %10.1f %7.3f %-21s %-8s %-4s %9ld %8.0f %8.0f\n", c.name, ms, ratio,
                judged ? of.c_str() : "-", judged ? fmt::format("<= {:.1f}", kTarget).c_str() : "-",
                judged ? (met ? "yes" : "NO") : "", long(r.result["relation_count"].get<std::int64_t>()),
                r.maxrss_mb, r.growth_mb);
    if (r.result["busy_rounds_included"].get<bool>()) busy.append(busy.empty() ? "" : ", ").append(c.name);
    for (const char* internal : {"inputs_kb", "hwm_kb"}) entry.erase(internal);
    entry["ratio"] = ratio;
    entry["ratio_of"] = judged ? of : "base/base";
    if (judged) entry["target"] = {{"op", "<="}, {"bound", kTarget}, {"met", met}};
    entry["peak_rss_mb"] = r.maxrss_mb;
    entry["rss_growth_mb"] = r.growth_mb;
    cases_json[c.name] = std::move(entry);
  }
  std::printf("\n");
  for (const Case& c : cases()) std::printf("%s: %s\n", c.name, c.label);
  std::printf("relations: entries of each layer's learned table [heads, relations]\n");
  std::printf("peak MB: the case's whole process (ru_maxrss); +MB: what its steps added over the model and "
              "inputs (VmHWM - VmRSS)\n");
  std::printf("layout: per-token ids %ld x [1, %ld] int32 = %s; section tree (PathLen, LvlDiff [1, %ld, %ld], "
              "depth [1, %ld]) = %s; relation ids [1, %ld, %ld] int32 = %s; total %s, against %s for an L x L "
              "int64 index (%.0fx less): O(S^2 + L)\n",
              long(memory.token_fields), long(options.length), bytes_text(double(memory.per_token)).c_str(),
              long(memory.sections), long(memory.sections), long(memory.sections),
              bytes_text(double(memory.section)).c_str(), long(memory.sections), long(memory.sections),
              bytes_text(double(memory.relation_ids)).c_str(), bytes_text(double(memory.total())).c_str(),
              bytes_text(double(memory.dense)).c_str(), double(memory.dense) / double(memory.total()));
  if (!busy.empty())
    std::printf("noisy: other processes used the CPU in most rounds of %s; rerun on a quiet machine\n",
                busy.c_str());
  const Measured& base = m["base"];
  const Measured& hibrids = m["hibrids"];
  std::printf("hibrids: encoder forward + backward at L = %ld with HIBRIDS %.2fx the time without (target <= %.1f: "
              "%s); peak %.0f MB vs %.0f MB (%+.0f MB; an L x L int64 index alone would be %s)\n",
              long(options.length), hibrids.result["median_ms"].get<double>() / base_ms, kTarget,
              hibrids.result["median_ms"].get<double>() / base_ms <= kTarget ? "met" : "NOT met",
              hibrids.maxrss_mb, base.maxrss_mb, hibrids.maxrss_mb - base.maxrss_mb,
              bytes_text(double(memory.dense)).c_str());

  if (!options.json.empty()) {
    const Json result{
        {"benchmark", "hibrids"},
        {"batch", 1},
        {"length", options.length},
        {"window", options.window},
        {"mask", mask},
        {"layers", kLayers},
        {"d_model", kDModel},
        {"heads", kHeads},
        {"d_ff", kDff},
        {"dtype", "float32"},
        {"step", "encoder forward (training mode) + backward of sum(hidden^2), gradients for every parameter"},
        {"threads", options.threads},
        {"rounds", options.rounds},
        {"quick", options.quick},
        {"document",
         {{"sections", document.tree.size() - 1},
          {"max_depth", deepest},
          {"shortest_section_tokens", shortest},
          {"longest_section_tokens", longest},
          {"sentences", sentences}}},
        {"other_processes_cores_before", others_before},
        {"busy_threshold_cores", kBusyCores},
        {"targets_met", all_met},
        {"layout_memory",
         {{"sections_with_root", memory.sections},
          {"per_token_bytes", memory.per_token},
          {"section_tree_bytes", memory.section},
          {"relation_id_bytes", memory.relation_ids},
          {"total_bytes", memory.total()},
          {"dense_index_bytes", memory.dense},
          {"dense_over_layout", double(memory.dense) / double(memory.total())}}},
        {"memory_method",
         "each case in a child process: peak_rss_mb = its ru_maxrss; rss_growth_mb = VmHWM after the "
         "rounds minus VmRSS once the model and inputs were built"},
        {"cases", std::move(cases_json)}};
    write_file_atomic(options.json, result.dump(2) + "\n");
    std::printf("results: %s\n", options.json.c_str());
  }
}

}  // namespace

void register_bench_hibrids(CLI::App& bench) {
  CLI::App* hibrids = bench.add_subcommand(
      "hibrids",
      "Time a long-document encoder (2 layers, d_model 256, 4 heads, d_ff 1024, batch 1, fp32, "
      "forward + backward) on a synthetic document of 60 sections up to depth 4, every layer "
      "window(W,W) | global(1): without a bias (base), with the HIBRIDS bias (target: "
      "hibrids/base <= 1.3) and with HIBRIDS_S; each case in a child process of its own, median "
      "of several rounds, rounds disturbed by other processes set aside. One line a case: ms, "
      "ratio, target, table size, peak memory; then the layout's memory (O(S^2 + L)) against an "
      "L x L index.");
  auto options = std::make_shared<BenchOptions>();
  hibrids->add_flag("--quick", options->quick, "small and short: L = 2048, 1 round (a smoke test)");
  hibrids->add_option("--json", options->json, "also write the results to this JSON file");
  hibrids->add_option("--length", options->length, "tokens L (default 8192; 2048 with --quick)")
      ->check(CLI::Range(std::int64_t{16}, std::int64_t{1} << 20));
  hibrids->add_option("--window", options->window, "half-width W of window(W,W) (default 256)")
      ->check(CLI::NonNegativeNumber);
  hibrids->add_option("--threads", options->threads, "threads (default: every core)")->check(CLI::PositiveNumber);
  hibrids->add_option("--rounds", options->rounds, "timed rounds a case (default 5; 1 with --quick)")
      ->check(CLI::PositiveNumber);
  hibrids->add_option("--child", options->child)->group("");
  hibrids->add_option("--child-out", options->child_out)->group("");
  on_run(hibrids, [options] {
    BenchOptions o = *options;
    if (o.length == 0) o.length = o.quick ? 2048 : 8192;
    if (o.rounds == 0) o.rounds = o.quick ? 1 : 5;
    if (o.threads == 0) o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (o.child.empty()) return run_parent(o);
    const auto c = std::find_if(cases().begin(), cases().end(), [&](const Case& k) { return o.child == k.name; });
    if (c == cases().end()) throw Error(fmt::format("bench hibrids: unknown case '{}'", o.child));
    run_child(o, *c);
  });
}

}  // namespace strata::cli
