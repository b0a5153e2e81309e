#include "strata/bench/long_suite.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "strata/attn/attention_call.h"
#include "strata/attn/spec.h"
#include "strata/attn/tile_products.h"
#include "strata/attn/token_layout.h"
#include "strata/bench/blas_info.h"
#include "strata/bench/child_process.h"
#include "strata/bench/session.h"
#include "strata/bench/table.h"
#include "strata/bench/timing.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/memory_reuse.h"
#include "strata/core/strings.h"
#include "strata/doc/manpage.h"
#include "strata/nn/linear_product.h"
#include "strata/nn/streamed_attention_layer.h"

namespace strata::bench {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr std::int64_t kHeads = 8;
constexpr std::int64_t kHeadDim = 64;
constexpr std::int64_t kLayerTensors = 8;       // q, k, v, dout, out, dq, dk, dv
constexpr std::int64_t kStreamedVocab = 8000;  // the streamed layer's embedding rows
constexpr double kBudgetMb = 2048;             // the "under 2 GB"

struct LongCase {
  const char* id;
  const char* name;
  const char* label;
  bool streamed;  // the whole layer chunk by chunk (nn/streamed_attention_layer.h)
};

const std::vector<LongCase>& long_cases() {
  static const std::vector<LongCase> list{
      {"a", "window_global", "window(W,W) | global(G), attention on whole tensors", false},
      {"b", "same_section_man", "same_section over the man pages' section sizes, attention on whole tensors", false},
      {"c", "window_global_streamed", "window(W,W) | global(G), the whole layer streamed", true},
      {"d", "same_section_streamed", "same_section over the man pages' section sizes, the whole layer streamed", true},
  };
  return list;
}

const LongCase& long_case(const std::string& name) {
  for (const LongCase& c : long_cases())
    if (name == c.name || name == c.id) return c;
  throw Error(fmt::format("bench long: unknown case '{}' (a, b, c or d)", name));
}

// Words of each section of the pages in `dir` (pre-order, the text before the first heading
// counted as a section of its own), page after page in name order until `length` tokens; the
// last section is cut. Pages are reused from the first when they run out.
std::vector<std::int64_t> man_section_sizes(const std::string& dir, std::int64_t length, std::int64_t& pages) {
  // A man page's name ends in its section, a digit first ("ls.1", "printf.3p.gz").
  const auto is_man_page = [](fs::path path) {
    if (path.extension() == ".gz") path = path.stem();
    const std::string section = path.extension().string();
    return section.size() >= 2 && section[1] >= '0' && section[1] <= '9';
  };
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const fs::directory_entry& entry : fs::directory_iterator(dir))
      if (entry.is_regular_file() && is_man_page(entry.path())) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<std::int64_t> sizes;
  std::int64_t total = 0;
  pages = 0;
  int passes = 0;
  for (std::size_t f = 0; total < length && !files.empty(); f = (f + 1) % files.size()) {
    if (f == 0 && passes++ > 0 && sizes.empty()) break;  // a full pass found no sections
    ManPage page;
    try {
      page = read_manpage(files[f]);
    } catch (const Error&) {
      continue;  // an unreadable page adds nothing
    }
    ++pages;
    for_each_section(page.document.root, [&](const Section& section) {
      std::int64_t words = 0;
      for (const Paragraph& paragraph : section.paragraphs)
        words += static_cast<std::int64_t>(split_words(page.document.slice(paragraph.span)).size());
      if (words == 0 || total >= length) return;
      words = std::min(words, length - total);
      sizes.push_back(words);
      total += words;
    });
  }
  if (total < length)
    throw Error(fmt::format("bench long: no man page with sections in {} (pass --man-dir)", dir));
  return sizes;
}

// Section ids [L] int32 for `sizes`, with what a page says about them.
at::Tensor man_section_ids(const LongBenchOptions& o, Json& info) {
  std::int64_t pages = 0;
  const std::vector<std::int64_t> sizes = man_section_sizes(o.man_dir, o.length, pages);
  at::Tensor ids = at::empty({o.length}, at::kInt);
  std::int32_t* section = ids.data_ptr<std::int32_t>();
  std::int64_t i = 0;
  for (std::size_t s = 0; s < sizes.size(); ++s)
    for (std::int64_t n = 0; n < sizes[s]; ++n) section[i++] = static_cast<std::int32_t>(s);
  double squares = 0;
  for (std::int64_t size : sizes) squares += static_cast<double>(size) * static_cast<double>(size);
  info["pages"] = pages;
  info["sections"] = sizes.size();
  info["mean_section_tokens"] = static_cast<double>(o.length) / static_cast<double>(sizes.size());
  info["largest_section_tokens"] = *std::max_element(sizes.begin(), sizes.end());
  info["pairs_per_token"] = squares / static_cast<double>(o.length);
  return ids;
}

// The inputs a whole-tensor case keeps alive while it is timed.
struct LongState {
  at::Tensor q, k, v, dout;
  attn::TokenLayout tokens;
  attn::LayerSpec spec;
  attn::AttentionCall call;
};

// What a streamed case keeps: the parameters, the token ids and the structure; the output
// gradient of rows [start, end) is drawn from a generator seeded by `start` when asked.
struct StreamedState {
  nn::StreamedLayerWeights weights;
  at::Tensor ids;
  nn::StreamedStructure structure;
};

std::function<void()> streamed_step(const LongBenchOptions& o, bool sections, Json& info) {
  auto state = std::make_shared<StreamedState>();
  const std::int64_t width = kHeads * kHeadDim;
  const auto param = [](std::vector<std::int64_t> shape, double scale) {
    return (at::randn(shape) * scale).requires_grad_(true);
  };
  state->weights.embedding = param({kStreamedVocab, width}, 1.0);
  for (at::Tensor* w : {&state->weights.wq, &state->weights.wk, &state->weights.wv, &state->weights.wo})
    *w = param({width, width}, 1.0 / std::sqrt(static_cast<double>(width)));
  state->weights.heads = kHeads;
  state->ids = at::randint(0, kStreamedVocab, {o.length}, at::kLong);
  if (sections) {
    state->structure.section = man_section_ids(o, info);
  } else {
    state->structure.window = o.window;
    state->structure.global = o.global;
    info["window"] = o.window;
    info["global"] = o.global;
  }
  info["chunk"] = o.chunk;
  info["spec"] = sections ? std::string("same_section") : fmt::format("window({0},{0}) | global({1})", o.window, o.global);
  const std::int64_t chunk = o.chunk;
  return [state, chunk, width] {
    const auto output_grad = [width](std::int64_t start, std::int64_t end) {
      const at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(static_cast<std::uint64_t>(start));
      return at::randn({end - start, width}, generator);
    };
    nn::streamed_attention_step(state->weights, state->ids, state->structure, output_grad, chunk);
    for (at::Tensor* w : {&state->weights.embedding, &state->weights.wq, &state->weights.wk, &state->weights.wv,
                          &state->weights.wo})
      w->mutable_grad().reset();
  };
}

// Attention alone over whole q, k, v [1, 8, L, 64].
std::function<void()> whole_tensor_step(const LongBenchOptions& o, bool sections, Json& info) {
  auto state = std::make_shared<LongState>();
  const std::int64_t length = o.length;
  if (sections) {
    state->tokens.section = man_section_ids(o, info).unsqueeze(0);
    state->spec.heads[0].mask = attn::Mask::of(attn::MaskKind::SameSection);
  } else {
    state->spec.heads[0].mask = attn::Mask::window(o.window, o.window) || attn::Mask::global(o.global);
    info["window"] = o.window;
    info["global"] = o.global;
  }
  const auto heads = [&] { return at::randn({1, kHeads, length, kHeadDim}).requires_grad_(true); };
  state->q = heads();
  state->k = heads();
  state->v = heads();
  state->dout = at::randn({1, kHeads, length, kHeadDim});
  attn::AttentionCall& call = state->call;
  call.q = state->q;
  call.k = state->k;
  call.v = state->v;
  call.training = true;
  call.spec = &state->spec;
  call.query_layout = call.key_layout = &state->tokens;
  std::string spec = attn::to_string(state->spec);
  while (!spec.empty() && spec.back() == '\n') spec.pop_back();
  info["spec"] = spec;
  return [state] {
    attn::attend(state->call, attn::Kernel::Fused).backward(state->dout);
    for (at::Tensor* t : {&state->q, &state->k, &state->v}) t->mutable_grad().reset();
  };
}

void run_child(const LongBenchOptions& o) {
  // Every whole tensor here is L x 512 floats (2 GiB at 2^20): the heap reuse that saves page
  // faults on a training step's many mid-sized blocks would leave 2 GiB holes (+40 % peak
  // memory).
  map_large_blocks();
  prepare_child(o.run.threads);
  const LongCase& c = long_case(o.run.child);
  const bool sections = std::string(c.name).rfind("same_section", 0) == 0;
  Json info;
  const std::function<void()> step = c.streamed ? streamed_step(o, sections, info) : whole_tensor_step(o, sections, info);
  MemoryMarks marks;
  const TimedRounds rounds = time_child_step(step, o.run.rounds, marks, 1);
  Json result = info;
  result.update(rounds.to_json());
  marks.add_to(result);
  write_file_atomic(o.run.child_out, result.dump());
}

// The cases --cases names, in the suite's order (all of them by default).
std::vector<LongCase> chosen_cases(const LongBenchOptions& o) {
  if (o.cases.empty()) return long_cases();
  std::vector<LongCase> chosen;
  for (const LongCase& c : long_cases())
    if (std::any_of(o.cases.begin(), o.cases.end(), [&](const std::string& name) { return &long_case(name) == &c; }))
      chosen.push_back(c);
  return chosen;
}

void run_parent(const LongBenchOptions& o) {
  Session session("long", {"strata", "bench", "long"}, o.run, kBusyCores);
  const double tensors_mb = static_cast<double>(kLayerTensors * o.length * kHeads * kHeadDim) * 4.0 / (1 << 20);
  std::printf("long: batch 1, %ld heads, head dim %ld, L = %ld, fp32, forward + backward, %d threads, median "
              "of %d rounds%s\n",
              long(kHeads), long(kHeadDim), long(o.length), o.run.threads, o.run.rounds, o.run.quick ? " (--quick)" : "");
  std::printf("BLAS: %s; fused tile products: %s; linear products: %s\n", blas_description().c_str(),
              attn::fused_tile_products(), nn::linear_products());
  session.print_load();
  const std::vector<LongCase> cases = chosen_cases(o);
  std::vector<std::string> names;
  for (const LongCase& c : cases) names.push_back(c.name);
  std::vector<std::string> args = o.run.child_args();
  for (const std::string& word :
       {std::string("--length"), std::to_string(o.length), std::string("--window"), std::to_string(o.window),
        std::string("--global"), std::to_string(o.global), std::string("--man-dir"), o.man_dir,
        std::string("--chunk"), std::to_string(o.chunk)})
    args.push_back(word);
  session.measure(names, args);

  std::printf("\n");
  Table table({{"", -2}, {"case", -23}, {"s", 8}, {"tokens/s", 10}, {"peak MB", 9}, {"peak / tensors", 15},
               {"under 2 GB", 11}});
  Json cases_json = Json::object();
  for (const LongCase& c : cases) {
    const CaseMeasurement& r = session[c.name];
    const double seconds = session.median_ms(c.name) / 1000.0;
    table.row({c.id, c.name, fixed(seconds, 2), fixed(static_cast<double>(o.length) / seconds, 0),
               fixed(r.maxrss_mb, 0), c.streamed ? "-" : fixed(r.maxrss_mb / tensors_mb, 3),
               r.maxrss_mb < kBudgetMb ? "yes" : "no"});
    session.check_noisy(c.id, r.result);
    Json entry = session.case_json(c.name, c.label);
    entry["tokens_per_s"] = static_cast<double>(o.length) / seconds;
    if (!c.streamed) entry["peak_over_layer_tensors"] = r.maxrss_mb / tensors_mb;
    entry["under_2gb"] = r.maxrss_mb < kBudgetMb;
    cases_json[c.name] = std::move(entry);
  }
  table.print();
  // The streamed layer against attention alone on whole tensors, same structure, same run.
  const auto ran = [&](const char* name) {
    return std::any_of(cases.begin(), cases.end(), [&](const LongCase& c) { return std::string(c.name) == name; });
  };
  for (const auto& [streamed, whole] : {std::pair{"window_global_streamed", "window_global"},
                                        std::pair{"same_section_streamed", "same_section_man"}}) {
    if (!ran(streamed) || !ran(whole)) continue;
    const double time_ratio = session.median_ms(streamed) / session.median_ms(whole);
    const double memory_ratio = session[streamed].maxrss_mb / session[whole].maxrss_mb;
    std::printf("%s / %s: time %.2fx, peak memory %.3fx (the whole layer streamed against attention alone)\n",
                long_case(streamed).id, long_case(whole).id, time_ratio, memory_ratio);
    cases_json[streamed]["over_whole_tensors"] = {{"time", time_ratio}, {"peak_memory", memory_ratio}};
  }
  std::printf("\n");
  for (const LongCase& c : cases) {
    const Json& result = session.result(c.name);
    std::printf("%s) %s: %s", c.id, c.label, result["spec"].get<std::string>().c_str());
    if (result.contains("sections"))
      std::printf(" (%ld sections of %ld man pages, mean %.0f tokens, largest %ld)", long(result["sections"].get<std::int64_t>()),
                  long(result["pages"].get<std::int64_t>()), result["mean_section_tokens"].get<double>(),
                  long(result["largest_section_tokens"].get<std::int64_t>()));
    std::printf("\n");
  }
  std::printf("a), b): attention alone on whole q, k, v; its tensors: %ld x L x %ld floats = %.0f MB (q, k, v, the "
              "output gradient, out, dq, dk, dv)\n",
              long(kLayerTensors), long(kHeads * kHeadDim), tensors_mb);
  std::printf("c), d): the whole layer (an embedding of %ld rows -> q, k, v projections -> attention -> output "
              "projection) forward and backward %ld queries at a time, exactly (nn/streamed_attention_layer.h): "
              "no L x %ld tensor is held\n",
              long(kStreamedVocab), long(o.chunk), long(kHeads * kHeadDim));
  std::printf("peak MB: the child's whole process (ru_maxrss), libtorch included\n");
  session.print_noisy();
  session.write_json({{"batch", 1}, {"heads", kHeads}, {"head_dim", kHeadDim}, {"length", o.length},
                      {"dtype", "float32"}, {"chunk", o.chunk},
                      {"step", "forward + backward with a fixed random output gradient"}},
                     {{"layer_tensors_mb", tensors_mb},
                      {"blas", blas_description()},
                      {"tile_products", attn::fused_tile_products()},
                      {"linear_products", nn::linear_products()}},
                     std::move(cases_json));
}

}  // namespace

void run_long_bench(LongBenchOptions o) {
  o.run.resolve(2, 1);
  if (o.length == 0) o.length = o.run.quick ? 65536 : 1048576;
  for (const std::string& name : o.cases) long_case(name);  // an unknown name fails before any run
  if (!o.run.is_child()) return run_parent(o);
  run_child(o);
}

}  // namespace strata::bench
