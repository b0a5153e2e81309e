// strata bench patterns: whether injected patterns (seed 003 §4.3) make a Transformer faster.
// The seed reports ρ = 0.86 for 8 of 8 heads patterned and argues the attention then costs
// O((1 - ρ) n²); this benchmark measures what the fused kernel makes of it: forward + backward
// of a 6-layer encoder at 2,048 tokens of a man-page-like document, vanilla against 4 of 8
// and 8 of 8 heads patterned (matching_token, intra_sentence, previous_token, next_token),
// target vanilla / 8-of-8 >= 2.
//
// When the target is missed the numbers say where the time goes: each case also times one
// layer's attention alone (so the rest of the layer is the model minus layers × that), the
// block mask's compile time and tile density per head group, and one child times the
// attention with every head of one pattern, from which each case's attention is predicted
// both with perfect load balance and with the kernel's split of heads over threads.
//
// As the other benches, every case runs in a child process of its own (bench_child.h).
#include <ATen/Parallel.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../../bench/cpu_load.h"
#include "bench_child.h"
#include "commands.h"
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

constexpr std::int64_t kVocab = 8000;
constexpr std::int32_t kPeriod = 4;      // the token ending every sentence; 0-3 are special
constexpr std::int32_t kFirstWord = 5;   // word ids kFirstWord.. by falling frequency
constexpr double kZipfExponent = 1.0;    // word frequency ∝ 1 / rank^s, as in English text
constexpr int kShortestSentence = 8, kLongestSentence = 40;
constexpr double kBusyCores = 0.3;       // other processes' CPU use above which a round is set aside
constexpr double kTarget = 2.0;          // vanilla / all-patterned, at least
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

// The what-if beside them: matching_token heads on the page with its tokens reordered, once-
// seen tokens first, then by token id. Attention is the same up to that permutation, but
// equal tokens now sit together, so the block mask can skip what Eq. 4 hides: the cost a
// kernel that reorders matching_token heads would have.
constexpr const char* kSortedKind = "matching_token_sorted";

attn::LayerSpec kind_spec(const std::string& kind) {
  if (kind == kSortedKind) return kind_spec("matching_token");
  attn::LayerSpec spec;
  if (kind != "plain") spec.heads = {attn::pattern_head(attn::PatternSet().find(kind))};
  return spec;
}

// ---- the document -----------------------------------------------------------------------

// A man page of `length` tokens: sections under the usual headings, paragraphs of 2 to 6
// sentences, sentences of 8 to 40 tokens of which the last is a period, words drawn from a Zipf law
// over the vocabulary (ids by falling frequency, as a trained tokenizer numbers them), so
// words repeat and occur once in the proportions of running text. Seeded: every run sees the
// same page.
Layout man_page(std::int64_t length) {
  static const char* const headings[] = {"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS",
                                         "ENVIRONMENT", "FILES", "EXAMPLES", "BUGS", "SEE ALSO"};
  std::mt19937 random(20240607u);
  const auto below = [&random](int n) { return static_cast<int>(random() % static_cast<std::uint32_t>(n)); };
  std::vector<double> cumulative;
  double total = 0;
  for (std::int64_t rank = 1; rank <= kVocab - kFirstWord; ++rank)
    cumulative.push_back(total += 1.0 / std::pow(static_cast<double>(rank), kZipfExponent));
  const auto word = [&] {
    const double u = (static_cast<double>(random()) + 0.5) / 4294967296.0 * total;
    const auto rank = std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin();
    return static_cast<std::int32_t>(kFirstWord + std::min<std::int64_t>(rank, kVocab - kFirstWord - 1));
  };

  Layout layout;
  layout.tree.parent = {-1};
  layout.tree.depth = {0};
  layout.tree.heading = {"page"};
  std::int32_t section = 0, paragraph = -1, sentence = -1;
  int sentences_left_in_section = 0, sentences_left_in_paragraph = 0;
  while (static_cast<std::int64_t>(layout.size()) < length) {
    if (sentences_left_in_section == 0) {
      ++section;
      layout.tree.parent.push_back(0);
      layout.tree.depth.push_back(1);
      layout.tree.heading.emplace_back(headings[(section - 1) % std::size(headings)]);
      sentences_left_in_section = section == 1 ? 1 : 6 + below(15);  // NAME: one line
      sentences_left_in_paragraph = 0;
    }
    if (sentences_left_in_paragraph == 0) {
      ++paragraph;
      sentences_left_in_paragraph = 2 + below(5);
    }
    ++sentence;
    --sentences_left_in_section;
    --sentences_left_in_paragraph;
    const int tokens = kShortestSentence + below(kLongestSentence - kShortestSentence + 1);
    for (int t = 0; t < tokens && static_cast<std::int64_t>(layout.size()) < length; ++t) {
      layout.position.push_back(static_cast<std::int32_t>(layout.size()));
      layout.token.push_back(t + 1 == tokens ? kPeriod : word());
      layout.section.push_back(section);
      layout.paragraph.push_back(paragraph);
      layout.sentence.push_back(sentence);
      layout.segment.push_back(0);
    }
  }
  return layout;
}

Layout sorted_by_token(const Layout& page) {
  std::map<std::int32_t, std::int64_t> count;
  for (std::int32_t t : page.token) ++count[t];
  Layout sorted = page;
  std::stable_sort(sorted.token.begin(), sorted.token.end(), [&](std::int32_t a, std::int32_t b) {
    const bool a_once = count[a] == 1, b_once = count[b] == 1;
    return a_once != b_once ? a_once : a < b;
  });
  return sorted;
}

struct PageStats {
  std::int64_t sections = 0, sentences = 0, distinct = 0, once_seen = 0;
  std::int64_t shortest = 0, longest = 0;  // sentence tokens, the last (cut) one aside
};

PageStats page_stats(const Layout& page) {
  PageStats s;
  s.sections = page.tree.size() - 1;
  s.sentences = page.sentence.empty() ? 0 : page.sentence.back() + 1;
  std::map<std::int32_t, std::int64_t> count;
  for (std::int32_t t : page.token) ++count[t];
  s.distinct = static_cast<std::int64_t>(count.size());
  for (std::int32_t t : page.token) s.once_seen += count[t] == 1;
  std::vector<std::int64_t> sentence_tokens(static_cast<std::size_t>(s.sentences), 0);
  for (std::int32_t id : page.sentence) ++sentence_tokens[static_cast<std::size_t>(id)];
  if (s.sentences > 1) {
    const auto [lo, hi] = std::minmax_element(sentence_tokens.begin(), sentence_tokens.end() - 1);
    s.shortest = *lo;
    s.longest = *hi;
  }
  return s;
}

// ---- what a child measures besides the model --------------------------------------------

// One layer's attention alone, on random q, k, v of the model's shapes: forward + backward.
struct AttentionAlone {
  at::Tensor q, k, v;
  attn::LayerSpec spec;
  attn::AttentionCall call;
  void step() const {
    attn::attend(call, attn::Kernel::Fused).sum().backward();
    for (const at::Tensor& t : {q, k, v}) t.mutable_grad().reset();
  }
};

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

// The block mask the kernel compiles for the call: per head group, the tiles it visits and
// how many of those are partial (the predicate evaluated per pair); and the compile time,
// paid once per layer per forward.
Json block_mask_json(const attn::AttentionCall& call) {
  const attn::BlockMask mask = attn::compile_block_mask(call);
  const double compile_ms = median_ms_of([&] { (void)attn::compile_block_mask(call); }, 5);
  Json groups = Json::array();
  for (std::int64_t g = 0; g < mask.groups; ++g) {
    std::vector<std::int64_t> heads;
    for (std::size_t h = 0; h < mask.head_group.size(); ++h)
      if (mask.head_group[h] == g) heads.push_back(static_cast<std::int64_t>(h));
    std::int64_t visited = 0, full = 0;
    for (std::int64_t qt = 0; qt < mask.q_tiles; ++qt) {
      const std::int64_t r = mask.row(0, g, qt);
      for (std::int64_t e = mask.row_begin[r]; e < mask.row_begin[r + 1]; ++e) {
        ++visited;
        full += mask.full[e];
      }
    }
    const double tiles = static_cast<double>(mask.q_tiles * mask.k_tiles);
    groups.push_back({{"heads", heads},
                      {"mask", call.spec ? attn::to_string(call.spec->head(heads.front()).mask) : "all"},
                      {"tile_density", static_cast<double>(visited) / tiles},
                      {"partial_fraction", static_cast<double>(visited - full) / tiles}});
  }
  std::vector<std::int64_t> fixed;
  for (std::size_t h = 0; h < mask.head_group.size(); ++h)
    if (mask.head_group[h] < 0) fixed.push_back(static_cast<std::int64_t>(h));
  return {{"tile", mask.q_tile}, {"compile_ms", compile_ms}, {"groups", groups}, {"fixed_heads", fixed}};
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
  config.vocab_size = kVocab;
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
  const Layout sorted_page = sorted_by_token(page);
  const attn::TokenLayout sorted_tokens = attn::batch_layouts({&sorted_page});
  Json kinds = Json::object();
  std::vector<std::string> timed = head_kinds();
  timed.emplace_back(kSortedKind);
  for (const std::string& kind : timed) {
    const attn::TokenLayout& layout = kind == kSortedKind ? sorted_tokens : tokens;
    const auto alone = attention_alone(kind_spec(kind), layout, options.heads, options.d_model / options.heads);
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
// every thread. Split: as at::parallel_for hands the kernel's tasks, ordered by head, out in
// contiguous runs, one run per thread; the slowest run decides.
struct Predicted {
  double balanced_ms = 0, split_ms = 0;
};

Predicted predict(const attn::LayerSpec& spec, std::int64_t heads, int threads, const Json& kinds) {
  std::vector<double> cost;  // thread-ms per head
  for (std::int64_t h = 0; h < heads; ++h) {
    const attn::HeadSpec& head = spec.head(h);
    std::string kind = "plain";
    for (const std::string& k : head_kinds())
      if (k != "plain" && kind_spec(k).heads.front() == head) kind = k;
    cost.push_back(kinds[kind]["median_ms"].get<double>() * threads / static_cast<double>(heads));
  }
  Predicted p;
  double total = 0;
  for (double c : cost) total += c;
  p.balanced_ms = total / threads;
  for (int t = 0; t < threads; ++t) {
    double run = 0;
    for (std::int64_t h = t * heads / threads; h < (t + 1) * heads / threads; ++h) run += cost[h];
    p.split_ms = std::max(p.split_ms, run);
  }
  if (threads > heads) p.split_ms = p.balanced_ms;  // heads split into chunks: no run rule to model
  return p;
}

void print_group_line(const Json& mask) {
  for (const Json& g : mask["groups"])
    std::printf("    heads %-12s %-30s tiles visited %5.1f %%, partial %5.1f %%\n",
                g["heads"].dump().c_str(), g["mask"].get<std::string>().c_str(),
                100 * g["tile_density"].get<double>(), 100 * g["partial_fraction"].get<double>());
  if (!mask["fixed_heads"].empty())
    std::printf("    heads %-12s fixed (one key a query, no tiles)\n", mask["fixed_heads"].dump().c_str());
  std::printf("    block mask compiled in %.2f ms a call\n", mask["compile_ms"].get<double>());
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
              long(stats.distinct), long(o.length), kZipfExponent, long(kVocab),
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
  const Layout sorted_page = sorted_by_token(page);
  const attn::TokenLayout sorted_tokens = attn::batch_layouts({&sorted_page});
  Json kinds = m["head_kinds"].result;
  const double plain_ms = kinds["plain"]["median_ms"].get<double>();
  for (auto& [kind, k] : kinds.items()) {
    k["vs_plain"] = k["median_ms"].get<double>() / plain_ms;
    k["rho"] = attn::attention_sparsity(kind_spec(kind), o.heads, kind == kSortedKind ? sorted_tokens : tokens,
                                        o.length);
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
    const Predicted p = predict(spec, o.heads, o.threads, kinds);
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
  std::vector<std::string> timed = head_kinds();
  timed.emplace_back(kSortedKind);
  for (const std::string& kind : timed) {
    const Json& k = kinds[kind];
    const Json& groups = k["block_mask"]["groups"];
    const double density = groups.empty() ? 0.0 : groups[0]["tile_density"].get<double>();
    const double partial = groups.empty() ? 0.0 : groups[0]["partial_fraction"].get<double>();
    std::printf("%-21s %9.1f %10.3f %6.3f %12.1f%% %8.1f%%\n", kind.c_str(), k["median_ms"].get<double>(),
                k["vs_plain"].get<double>(), k["rho"].get<double>(), 100 * density, 100 * partial);
    if (k["busy_rounds_included"].get<bool>()) busy.append(busy.empty() ? "" : ", ").append(kind);
  }
  std::printf("%s: matching_token with the page's tokens sorted (once-seen first, then by id): what a "
              "kernel reordering those heads would cost\n",
              kSortedKind);
  for (const ModelCase& c : cases) {
    std::printf("%s block mask:\n", c.name.c_str());
    print_group_line(m[c.name].result["block_mask"]);
  }

  // The all-patterned model had its matching_token heads cost what they cost sorted.
  const attn::LayerSpec all_spec = case_spec(o.patterned, o.heads);
  const attn::HeadSpec matching = kind_spec("matching_token").heads.front();
  std::int64_t matching_heads = 0;
  for (std::int64_t h = 0; h < o.heads; ++h) matching_heads += all_spec.head(h) == matching;
  const double sorted_saving_ms = static_cast<double>(o.layers * matching_heads) / static_cast<double>(o.heads) *
                                  (kinds["matching_token"]["median_ms"].get<double>() -
                                   kinds[kSortedKind]["median_ms"].get<double>());
  const double sorted_speedup = vanilla_ms / (all_ms - sorted_saving_ms);
  const double vanilla_attention = cases_json["vanilla"]["attention_ms"].get<double>();
  const double ceiling = vanilla_ms / std::max(1e-9, vanilla_ms - vanilla_attention);
  if (!busy.empty())
    std::printf("noisy: other processes used the CPU in most rounds of %s; rerun on a quiet machine\n", busy.c_str());
  std::printf("\nspeed-up: vanilla / %s = %.2fx (target >= %.1f: %s); attention is %.0f %% of vanilla, so even "
              "free attention would give at most %.2fx\n",
              case_label(cases.back(), o.heads).c_str(), speedup, kTarget, speedup >= kTarget ? "met" : "NOT met",
              100 * vanilla_attention / vanilla_ms, ceiling);
  std::printf("with its %ld matching_token heads costing what they cost sorted, %s would take about %.0f ms: "
              "%.2fx\n",
              long(matching_heads), case_label(cases.back(), o.heads).c_str(), all_ms - sorted_saving_ms,
              sorted_speedup);

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
          {"vocabulary", kVocab},
          {"zipf_exponent", kZipfExponent},
          {"distinct_tokens", stats.distinct},
          {"once_seen_fraction", double(stats.once_seen) / double(o.length)}}},
        {"other_processes_cores_before", others_before},
        {"busy_threshold_cores", kBusyCores},
        {"speedup", speedup},
        {"speedup_of", "vanilla/patterns_n"},
        {"target", {{"op", ">="}, {"bound", kTarget}, {"met", speedup >= kTarget}}},
        {"free_attention_ceiling", ceiling},
        {"speedup_with_sorted_matching_token", sorted_speedup},
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
      "rounds; with each case's sparsity rho, its attention alone against the rest of the layer, its "
      "block mask's tile density, and the attention of each pattern alone, so a missed target says "
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
