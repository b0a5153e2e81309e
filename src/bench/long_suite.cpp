#include "strata/bench/long_suite.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/randn.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
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

namespace strata::bench {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr std::int64_t kHeads = 8;
constexpr std::int64_t kHeadDim = 64;
constexpr std::int64_t kLayerTensors = 8;  // q, k, v, dout, out, dq, dk, dv

struct LongCase {
  const char* id;
  const char* name;
  const char* label;
};

const std::vector<LongCase>& long_cases() {
  static const std::vector<LongCase> list{
      {"a", "window_global", "window(W,W) | global(G)"},
      {"b", "same_section_man", "same_section over the man pages' section sizes"},
  };
  return list;
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

// The inputs a case keeps alive while it is timed.
struct LongState {
  at::Tensor q, k, v, dout;
  attn::TokenLayout tokens;
  attn::LayerSpec spec;
  attn::AttentionCall call;
};

void run_child(const LongBenchOptions& o) {
  // Every tensor here is L x 512 floats (2 GiB at 2^20): the heap reuse that saves page faults
  // on a training step's many mid-sized blocks would leave 2 GiB holes (+40 % peak memory).
  map_large_blocks();
  prepare_child(o.run.threads);
  auto state = std::make_shared<LongState>();
  const std::int64_t length = o.length;
  Json info;
  if (o.run.child == "window_global") {
    state->spec.heads[0].mask = attn::Mask::window(o.window, o.window) || attn::Mask::global(o.global);
    info["window"] = o.window;
    info["global"] = o.global;
  } else {
    std::int64_t pages = 0;
    const std::vector<std::int64_t> sizes = man_section_sizes(o.man_dir, length, pages);
    state->tokens.section = at::empty({1, length}, at::kInt);
    std::int32_t* section = state->tokens.section.data_ptr<std::int32_t>();
    std::int64_t i = 0;
    for (std::size_t s = 0; s < sizes.size(); ++s)
      for (std::int64_t n = 0; n < sizes[s]; ++n) section[i++] = static_cast<std::int32_t>(s);
    state->spec.heads[0].mask = attn::Mask::of(attn::MaskKind::SameSection);
    double squares = 0;
    for (std::int64_t size : sizes) squares += static_cast<double>(size) * static_cast<double>(size);
    info["pages"] = pages;
    info["sections"] = sizes.size();
    info["mean_section_tokens"] = static_cast<double>(length) / static_cast<double>(sizes.size());
    info["largest_section_tokens"] = *std::max_element(sizes.begin(), sizes.end());
    info["pairs_per_token"] = squares / static_cast<double>(length);
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
  const auto step = [state] {
    attn::attend(state->call, attn::Kernel::Fused).backward(state->dout);
    for (at::Tensor* t : {&state->q, &state->k, &state->v}) t->mutable_grad().reset();
  };
  MemoryMarks marks;
  const TimedRounds rounds = time_child_step(step, o.run.rounds, marks, 1);
  std::string spec = attn::to_string(state->spec);
  while (!spec.empty() && spec.back() == '\n') spec.pop_back();
  Json result{{"spec", spec}};
  result.update(info);
  result.update(rounds.to_json());
  marks.add_to(result);
  write_file_atomic(o.run.child_out, result.dump());
}

void run_parent(const LongBenchOptions& o) {
  Session session("long", {"strata", "bench", "long"}, o.run, kBusyCores);
  const double tensors_mb = static_cast<double>(kLayerTensors * o.length * kHeads * kHeadDim) * 4.0 / (1 << 20);
  std::printf("long: batch 1, %ld heads, head dim %ld, L = %ld, fp32, forward + backward, %d threads, median "
              "of %d rounds%s\n",
              long(kHeads), long(kHeadDim), long(o.length), o.run.threads, o.run.rounds, o.run.quick ? " (--quick)" : "");
  std::printf("BLAS: %s; fused tile products: %s\n", blas_description().c_str(), attn::fused_tile_products());
  session.print_load();
  std::vector<std::string> names;
  for (const LongCase& c : long_cases()) names.push_back(c.name);
  std::vector<std::string> args = o.run.child_args();
  for (const std::string& word :
       {std::string("--length"), std::to_string(o.length), std::string("--window"), std::to_string(o.window),
        std::string("--global"), std::to_string(o.global), std::string("--man-dir"), o.man_dir})
    args.push_back(word);
  session.measure(names, args);

  std::printf("\n");
  Table table({{"", -2}, {"case", -17}, {"s", 8}, {"tokens/s", 10}, {"peak MB", 9}, {"peak / tensors", 15}});
  Json cases_json = Json::object();
  for (const LongCase& c : long_cases()) {
    const CaseMeasurement& r = session[c.name];
    const double seconds = session.median_ms(c.name) / 1000.0;
    table.row({c.id, c.name, fixed(seconds, 2), fixed(static_cast<double>(o.length) / seconds, 0),
               fixed(r.maxrss_mb, 0), fixed(r.maxrss_mb / tensors_mb, 3)});
    session.check_noisy(c.id, r.result);
    Json entry = session.case_json(c.name, c.label);
    entry["tokens_per_s"] = static_cast<double>(o.length) / seconds;
    entry["peak_over_layer_tensors"] = r.maxrss_mb / tensors_mb;
    cases_json[c.name] = std::move(entry);
  }
  table.print();
  std::printf("\n");
  for (const LongCase& c : long_cases()) {
    const Json& result = session.result(c.name);
    std::printf("%s) %s: %s", c.id, c.label, result["spec"].get<std::string>().c_str());
    if (result.contains("sections"))
      std::printf(" (%ld sections of %ld man pages, mean %.0f tokens, largest %ld)", long(result["sections"].get<std::int64_t>()),
                  long(result["pages"].get<std::int64_t>()), result["mean_section_tokens"].get<double>(),
                  long(result["largest_section_tokens"].get<std::int64_t>()));
    std::printf("\n");
  }
  std::printf("layer tensors: %ld x L x %ld floats = %.0f MB (q, k, v, the output gradient, out, dq, dk, dv); "
              "peak MB is the child's whole process (ru_maxrss)\n",
              long(kLayerTensors), long(kHeads * kHeadDim), tensors_mb);
  session.print_noisy();
  session.write_json({{"batch", 1}, {"heads", kHeads}, {"head_dim", kHeadDim}, {"length", o.length},
                      {"dtype", "float32"}, {"step", "forward + backward with a fixed random output gradient"}},
                     {{"layer_tensors_mb", tensors_mb},
                      {"blas", blas_description()},
                      {"tile_products", attn::fused_tile_products()}},
                     std::move(cases_json));
}

}  // namespace

void run_long_bench(LongBenchOptions o) {
  o.run.resolve(2, 1);
  if (o.length == 0) o.length = o.run.quick ? 65536 : 1048576;
  if (!o.run.is_child()) return run_parent(o);
  if (std::none_of(long_cases().begin(), long_cases().end(), [&](const LongCase& c) { return o.run.child == c.name; }))
    throw Error(fmt::format("bench long: unknown case '{}'", o.run.child));
  run_child(o);
}

}  // namespace strata::bench
