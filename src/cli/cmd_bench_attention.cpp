// strata bench attention: what the fused attention kernel costs in wall-clock and memory,
// against libtorch's composite attention and against itself on sparse specs, so that the
// claim "a spec that hides 86 % of the pairs costs about 14 % of the dense work" is measured.
//
// Every case runs in a child process of its own (this binary re-executed with a hidden
// --child flag, spawned before the parent starts any thread pool): it builds its inputs,
// warms up, times forward + backward rounds, sets aside rounds during which other processes
// used the CPU (bench/cpu_load.h) and reports the median, plus its resident memory before
// the first step and its peak (VmHWM) after the last; the parent adds the child's ru_maxrss.
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/softmax.h>

#include <algorithm>
#include <cmath>
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
#include "bench_child.h"
#include "commands.h"
#include "strata/attn/pair_rules.h"
#include "head_visibility.h"
#include "strata/attn/attention_call.h"
#include "strata/attn/spec.h"
#include "strata/attn/token_layout.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/doc/layout.h"

namespace strata::cli {

namespace {

using Json = nlohmann::ordered_json;

constexpr std::int64_t kHeads = 8;
constexpr std::int64_t kHeadDim = 64;
constexpr int kSections = 7;        // equal sections of the synthetic layout
constexpr double kBusyCores = 0.3;  // other processes' CPU use above which a round is set aside
constexpr const char* kFlopsAccounting =
    "14 * L^2 * Dh * H flops a step: forward 4 (Q K^T and P V, 2 each), backward 10 "
    "(recomputed Q K^T, dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q)";

struct BenchOptions {
  bool quick = false;
  std::string json;
  std::int64_t length = 0;  // 0: 4096, or 1024 with --quick
  int threads = 0;          // 0: every core
  int rounds = 0;           // 0: 7, or 3 with --quick
  std::string child;        // hidden: the case this process runs
  std::string child_out;    // hidden: where it writes its result
};

struct Case {
  const char* id;     // a) .. f) of the printout
  const char* name;
  const char* label;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> list{
      {"a", "composite", "libtorch composite, dense (matmul, softmax, matmul)"},
      {"b", "fused_dense", "fused, dense (no spec)"},
      {"c", "fused_window", "fused, window hiding ~50 %"},
      {"d", "fused_same_section", "fused, same_section (7 sections)"},
      {"e", "fused_hibrids", "fused, window + HIBRIDS bias"},
      {"f", "sgemm", "at::mm, square sgemm"},
  };
  return list;
}

// ---- the child: one case ----------------------------------------------------------------

// A document of `length` tokens in 7 equal sections of a two-level tree (1 with children 2
// and 3, 4 with children 5 and 6, then 7), sentences of 24 tokens, paragraphs of 4
// sentences, token ids in a fixed scattered order over 1000 values.
Layout synthetic_layout(std::int64_t length) {
  Layout layout;
  layout.tree.parent = {-1, 0, 1, 1, 0, 4, 4, 0};
  layout.tree.depth = {0, 1, 2, 2, 1, 2, 2, 1};
  for (int s = 0; s < layout.tree.size(); ++s) layout.tree.heading.push_back(fmt::format("section {}", s));
  for (std::int64_t i = 0; i < length; ++i) {
    const auto p = static_cast<std::int32_t>(i);
    layout.position.push_back(p);
    layout.token.push_back(static_cast<std::int32_t>(4 + (i * 7919) % 1000));
    layout.section.push_back(static_cast<std::int32_t>(1 + i * kSections / length));
    layout.sentence.push_back(p / 24);
    layout.paragraph.push_back(p / 96);
    layout.segment.push_back(0);
  }
  return layout;
}

// The half-width w of window(w, w) closest to showing half of the L x L pairs:
// (2w + 1) L - w (w + 1) = L^2 / 2 gives w ~ L (1 - 1/sqrt 2).
std::int64_t half_window(std::int64_t length) {
  return std::llround(static_cast<double>(length) * (1.0 - 1.0 / std::sqrt(2.0)));
}

// One case, ready to time: step() runs forward and backward of the output's sum.
struct Workload {
  std::function<void()> step;
  std::string spec;   // what the kernel is asked, for the printout
  // Exact hidden pairs / all pairs, averaged over heads; NaN (null in JSON) for sgemm.
  double rho = 0;
  double flops = 0;   // per step, by the accounting above (sgemm: 2 n^3)
};

// The inputs and the spec a fused case keeps alive while it is timed.
struct FusedState {
  at::Tensor q, k, v, table;
  Layout layout;
  attn::TokenLayout tokens;
  attn::LayerSpec spec;
  attn::AttentionCall call;
};

// The spec's printout (a line per head, then the bias) on one line.
std::string one_line(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at))
    text.replace(at, 1, "; ");
  return text;
}

double exact_sparsity(const attn::AttentionCall& call) {
  if (!call.spec) return 0;
  const attn::PairRules rules(call);
  // One entry stands for every head.
  const std::int64_t distinct = call.spec->heads.size() == 1 ? 1 : rules.heads();
  double hidden = 0;
  for (std::int64_t h = 0; h < distinct; ++h)
    hidden += 1.0 - static_cast<double>(count_visible(rules, 0, h)) /
                        (static_cast<double>(rules.queries()) * static_cast<double>(rules.keys()));
  return hidden / static_cast<double>(distinct);
}

void clear_grads(std::initializer_list<at::Tensor> tensors) {
  for (const at::Tensor& t : tensors)
    if (t.defined()) t.mutable_grad().reset();
}

at::Tensor random_heads(std::int64_t length) {
  return at::randn({1, kHeads, length, kHeadDim}).requires_grad_(true);
}

Workload composite_workload(std::int64_t length) {
  const at::Tensor q = random_heads(length), k = random_heads(length), v = random_heads(length);
  const double scale = 1.0 / std::sqrt(static_cast<double>(kHeadDim));
  Workload w;
  w.spec = "softmax(Q K^T * scale) V, no mask; autograd keeps the weights (12 L^2 Dh H flops)";
  w.flops = 12.0 * static_cast<double>(length * length * kHeadDim * kHeads);
  w.step = [=] {
    const at::Tensor scores = at::matmul(q, k.transpose(-2, -1)).mul(scale);
    at::matmul(at::softmax(scores, -1), v).sum().backward();
    clear_grads({q, k, v});
  };
  return w;
}

Workload fused_workload(const std::string& name, std::int64_t length) {
  auto state = std::make_shared<FusedState>();
  state->q = random_heads(length);
  state->k = random_heads(length);
  state->v = random_heads(length);
  state->layout = synthetic_layout(length);
  state->tokens = attn::batch_layouts({&state->layout});
  attn::AttentionCall& call = state->call;
  call.q = state->q;
  call.k = state->k;
  call.v = state->v;
  call.training = true;
  call.query_layout = &state->tokens;
  call.key_layout = &state->tokens;
  const std::int64_t w = half_window(length);
  if (name == "fused_window" || name == "fused_hibrids") state->spec.heads[0].mask = attn::Mask::window(w, w);
  if (name == "fused_same_section") state->spec.heads[0].mask = attn::Mask::of(attn::MaskKind::SameSection);
  if (name == "fused_hibrids") {
    state->spec.bias.kind = attn::RelationKind::Hibrids;
    state->table = at::randn({kHeads, attn::relation_count(state->spec.bias)}).mul(0.1).requires_grad_(true);
    call.bias_table = state->table;
  }
  if (name != "fused_dense") call.spec = &state->spec;

  Workload work;
  work.spec = call.spec ? one_line(attn::to_string(state->spec)) : "null spec (every pair)";
  work.rho = exact_sparsity(call);
  work.flops = 14.0 * static_cast<double>(length * length * kHeadDim * kHeads);
  work.step = [state] {
    attn::attend(state->call, attn::Kernel::Fused).sum().backward();
    clear_grads({state->q, state->k, state->v, state->table});
  };
  return work;
}

Workload sgemm_workload(bool quick) {
  const std::int64_t n = quick ? 1024 : 2048;
  const at::Tensor a = at::randn({n, n}), b = at::randn({n, n});
  Workload w;
  w.spec = fmt::format("[{0} x {0}] x [{0} x {0}] fp32", n);
  w.rho = std::nan("");
  w.flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  w.step = [=] { (void)at::mm(a, b); };
  return w;
}

void run_child(const BenchOptions& options) {
  at::set_num_threads(options.threads);
  at::manual_seed(1234);
  (void)at::mm(at::randn({64, 64}), at::randn({64, 64}));  // start the thread pools
  const Workload work = options.child == "composite" ? composite_workload(options.length)
                        : options.child == "sgemm"   ? sgemm_workload(options.quick)
                                                     : fused_workload(options.child, options.length);
  const long inputs_kb = status_kb("VmRSS");
  for (int i = 0; i < (options.quick ? 1 : 2); ++i) work.step();  // warm-up

  const TimedRounds rounds = time_rounds(work.step, options.rounds, kBusyCores);
  Json result{{"spec", work.spec}, {"rho", work.rho}, {"flops_per_step", work.flops}};
  result.update(rounds.to_json());
  result["inputs_kb"] = inputs_kb;
  result["hwm_kb"] = status_kb("VmHWM");
  write_file_atomic(options.child_out, result.dump());
}

// ---- the parent: spawn, collect, compare ------------------------------------------------

struct Measured {
  Json result;
  double maxrss_mb = 0;  // the child's ru_maxrss: the whole process, libtorch included
  double growth_mb = 0;  // VmHWM minus VmRSS once the inputs were built: what the steps added
};

Measured measure(const BenchOptions& options, const Case& c) {
  std::vector<std::string> args{"--length", std::to_string(options.length), "--threads",
                                std::to_string(options.threads), "--rounds", std::to_string(options.rounds)};
  if (options.quick) args.push_back("--quick");
  ChildResult child = run_case_in_child("attention", c.name, args);
  Measured m;
  m.result = std::move(child.result);
  m.maxrss_mb = child.maxrss_mb;
  m.growth_mb = (m.result["hwm_kb"].get<double>() - m.result["inputs_kb"].get<double>()) / 1024.0;
  return m;
}

// A case's ratio to its peer (or f's GFLOP/s fraction), and the bound it should meet.
struct Verdict {
  double ratio = 0;
  std::string of;         // what the ratio divides, e.g. "c/b"
  std::string op;         // "<=" or ">="; empty: no target
  double bound = 0;
  bool met() const { return op == "<=" ? ratio <= bound : ratio >= bound; }
};

void run_parent(const BenchOptions& options) {
  const double others_before = bench::idle_probe(1.0);
  std::printf("attention: batch 1, %ld heads, head dim %ld, L = %ld, fp32, forward + backward of "
              "out.sum(), %d threads, median of %d rounds%s\n",
              long(kHeads), long(kHeadDim), long(options.length), options.threads, options.rounds,
              options.quick ? " (--quick)" : "");
  std::printf("other processes' CPU use before the start: %.2f cores%s\n", others_before,
              others_before > kBusyCores ? "  -- machine busy: timings may be noisy" : "");
  std::fflush(stdout);

  std::map<std::string, Measured> m;
  for (std::size_t i = 0; i < cases().size(); ++i) {
    const Case& c = cases()[i];
    std::fprintf(stderr, "bench attention: [%zu/%zu] %s ...\n", i + 1, cases().size(), c.name);
    m[c.name] = measure(options, c);
    std::fprintf(stderr, "bench attention: [%zu/%zu] %s %.1f ms\n", i + 1, cases().size(), c.name,
                 m[c.name].result["median_ms"].get<double>());
  }
  const auto ms = [&](const char* name) { return m[name].result["median_ms"].get<double>(); };
  const auto rho = [&](const char* name) { return m[name].result["rho"].get<double>(); };

  std::map<std::string, Verdict> verdicts;
  verdicts["fused_dense"] = {ms("composite") / ms("fused_dense"), "a/b", ">=", 1.5};
  verdicts["fused_window"] = {ms("fused_window") / ms("fused_dense"), "c/b", "<=", 1.25 * (1 - rho("fused_window"))};
  verdicts["fused_same_section"] = {ms("fused_same_section") / ms("fused_dense"), "d/b", "<=",
                                    1.25 * (1 - rho("fused_same_section"))};
  verdicts["fused_hibrids"] = {ms("fused_hibrids") / ms("fused_window"), "e/c", "<=", 1.3};
  const double sgemm_gflops = m["sgemm"].result["flops_per_step"].get<double>() / ms("sgemm") * 1e-6;
  const double fused_gflops = m["fused_dense"].result["flops_per_step"].get<double>() / ms("fused_dense") * 1e-6;
  verdicts["sgemm"] = {fused_gflops / sgemm_gflops, "b/f GFLOP/s", "", 0};

  std::printf("\n%-2s %-19s %10s %7s %-11s %-9s %-4s %6s %8s %8s\n", "", "case", "ms", "ratio", "of",
              "target", "met", "rho", "peak MB", "+MB");
  Json cases_json = Json::object();
  std::string busy;  // cases whose median had to include busy rounds
  for (const Case& c : cases()) {
    const Measured& r = m[c.name];
    Json entry = r.result;
    std::printf("%-2s %-19s %10.1f ", c.id, c.name, r.result["median_ms"].get<double>());
    if (const auto v = verdicts.find(c.name); v == verdicts.end()) {
      std::printf("%7s %-11s %-9s %-4s", "-", "", "", "");
    } else {
      const Verdict& verdict = v->second;
      const bool judged = !verdict.op.empty();
      std::printf("%7.3f %-11s %-9s %-4s", verdict.ratio, verdict.of.c_str(),
                  judged ? fmt::format("{} {:.3f}", verdict.op, verdict.bound).c_str() : "-",
                  judged ? (verdict.met() ? "yes" : "NO") : "");
      entry["ratio"] = verdict.ratio;
      entry["ratio_of"] = verdict.of;
      if (judged) entry["target"] = {{"op", verdict.op}, {"bound", verdict.bound}, {"met", verdict.met()}};
    }
    const Json& case_rho = r.result["rho"];
    std::printf(" %6s %8.0f %8.0f\n", case_rho.is_number() ? fmt::format("{:.3f}", case_rho.get<double>()).c_str() : "-",
                r.maxrss_mb, r.growth_mb);
    if (r.result["busy_rounds_included"].get<bool>()) busy += std::string(busy.empty() ? "" : ", ") + c.id;
    for (const char* internal : {"inputs_kb", "hwm_kb"}) entry.erase(internal);
    entry["label"] = c.label;
    entry["peak_rss_mb"] = r.maxrss_mb;
    entry["rss_growth_mb"] = r.growth_mb;
    cases_json[c.name] = std::move(entry);
  }
  std::printf("\n");
  for (const Case& c : cases())
    std::printf("%s) %s: %s\n", c.id, c.label, m[c.name].result["spec"].get<std::string>().c_str());
  std::printf("GFLOP/s: fused dense %.1f of sgemm %.1f = %.3f; %s\n", fused_gflops, sgemm_gflops,
              fused_gflops / sgemm_gflops, kFlopsAccounting);
  std::printf("peak MB: the case's whole process (ru_maxrss); +MB: what its steps added over its inputs "
              "(VmHWM - VmRSS)\n");
  if (!busy.empty())
    std::printf("noisy: other processes used the CPU in most rounds of %s; rerun on a quiet machine\n",
                busy.c_str());
  std::printf("attention: fused dense %.2fx libtorch composite (peak %.0f MB vs %.0f MB)\n",
              verdicts["fused_dense"].ratio, m["fused_dense"].maxrss_mb, m["composite"].maxrss_mb);

  if (!options.json.empty()) {
    const Json result{{"benchmark", "attention"},
                      {"batch", 1},
                      {"heads", kHeads},
                      {"head_dim", kHeadDim},
                      {"length", options.length},
                      {"dtype", "float32"},
                      {"step", "forward + backward of out.sum(), gradients for q, k, v (and the bias table)"},
                      {"threads", options.threads},
                      {"rounds", options.rounds},
                      {"quick", options.quick},
                      {"other_processes_cores_before", others_before},
                      {"busy_threshold_cores", kBusyCores},
                      {"flops_accounting", kFlopsAccounting},
                      {"fused_dense_gflops", fused_gflops},
                      {"sgemm_gflops", sgemm_gflops},
                      {"memory_method",
                       "each case in a child process: peak_rss_mb = its ru_maxrss; rss_growth_mb = "
                       "VmHWM after the rounds minus VmRSS once the inputs were built"},
                      {"cases", std::move(cases_json)}};
    write_file_atomic(options.json, result.dump(2) + "\n");
    std::printf("results: %s\n", options.json.c_str());
  }
}

}  // namespace

void register_bench_attention(CLI::App& bench) {
  CLI::App* attention = bench.add_subcommand(
      "attention",
      "Time the fused attention kernel (batch 1, 8 heads, head dim 64, fp32, forward + "
      "backward) against its peers, each case in a child process of its own, median of "
      "several rounds, rounds disturbed by other processes set aside: a) libtorch composite "
      "attention, dense; b) fused, dense (target: a/b >= 1.5); c) fused with a window hiding "
      "~50 % of the pairs and d) same_section over 7 equal sections (targets: time / b <= "
      "1.25 (1 - rho), rho = the exact hidden fraction); e) c plus a learned HIBRIDS bias "
      "(target: e/c <= 1.3); f) at::mm's sgemm GFLOP/s and the fused dense kernel's. One line "
      "a case: ms, ratio, target, rho, peak memory.");
  auto options = std::make_shared<BenchOptions>();
  attention->add_flag("--quick", options->quick, "small and short: L = 1024, 3 rounds (a smoke test)");
  attention->add_option("--json", options->json, "also write the results to this JSON file");
  attention->add_option("--length", options->length, "sequence length L (default 4096; 1024 with --quick)")
      ->check(CLI::PositiveNumber);
  attention->add_option("--threads", options->threads, "threads (default: every core)")
      ->check(CLI::PositiveNumber);
  attention->add_option("--rounds", options->rounds, "timed rounds a case (default 7; 3 with --quick)")
      ->check(CLI::PositiveNumber);
  attention->add_option("--child", options->child)->group("");
  attention->add_option("--child-out", options->child_out)->group("");
  on_run(attention, [options] {
    BenchOptions o = *options;
    if (o.length == 0) o.length = o.quick ? 1024 : 4096;
    if (o.rounds == 0) o.rounds = o.quick ? 3 : 7;
    if (o.threads == 0) o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (o.child.empty()) return run_parent(o);
    if (std::none_of(cases().begin(), cases().end(), [&](const Case& c) { return o.child == c.name; }))
      throw Error(fmt::format("bench attention: unknown case '{}'", o.child));
    run_child(o);
  });
}

}  // namespace strata::cli
