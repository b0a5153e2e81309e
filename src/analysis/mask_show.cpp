#include "strata/analysis/mask_show.h"

#include <ATen/ops/expand.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "strata/analysis/head_visibility.h"
#include "strata/analysis/mask_image.h"
#include "strata/attn/attention_call.h"
#include "strata/attn/block_mask.h"
#include "strata/attn/pair_rules.h"
#include "strata/attn/spec.h"
#include "strata/attn/token_layout.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/doc/layout.h"
#include "strata/doc/parse.h"
#include "strata/text/byte_bpe.h"
#include "strata/text/tokenizer.h"

namespace strata::analysis {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;  // keys in the order written

// 8192 x 8192: a PNG of 64 MB before compression.
constexpr std::int64_t kMaxPairs = std::int64_t{1} << 26;

// The spec file as a LayerSpec; every error names the file.
attn::LayerSpec read_spec(const fs::path& path) {
  const std::string text = read_file(path);
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    throw Error(fmt::format("{}: not valid JSON: {}", path.string(), e.what()));
  }
  try {
    return attn::layer_spec_from_json(json);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: {}", path.string(), e.what()));
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", path.string(), e.what()));
  }
}

// The named tokenizer, or bytes (byte-level BPE without merges: one token per byte) when
// none is named, so that a mask can be looked at before any tokenizer is trained.
std::unique_ptr<Tokenizer> tokenizer_for(const std::string& path) {
  if (!path.empty()) return load_tokenizer(path);
  const SpecialTokens specials;
  return ByteBpeTokenizer::train({}, static_cast<int>(specials.all().size()) + 256, specials);
}

std::string head_expression(const attn::HeadSpec& head) {
  switch (head.fixed) {
    case attn::FixedPattern::PreviousToken: return "fixed previous_token";
    case attn::FixedPattern::NextToken: return "fixed next_token";
    case attn::FixedPattern::None: break;
  }
  return attn::to_string(head.mask);
}

// The share of pairs inside head h's visited tiles (BlockMask::tile_density); negative for a
// fixed-pattern head (it has no group: the kernel reads one key per row).
double head_tile_density(const attn::BlockMask& mask, std::int64_t h) {
  const std::int32_t group = mask.head_group.at(static_cast<std::size_t>(h));
  return group < 0 ? -1 : mask.tile_density(group);
}

// Positions where a new section starts (after the first token).
std::vector<std::int64_t> section_starts(const Layout& layout) {
  std::vector<std::int64_t> starts;
  for (std::size_t i = 1; i < layout.size(); ++i)
    if (layout.section[i] != layout.section[i - 1]) starts.push_back(static_cast<std::int64_t>(i));
  return starts;
}

}  // namespace

void run_mask_show(const MaskShowOptions& options) {
  const attn::LayerSpec spec = read_spec(options.spec);
  const Document document = read_document(options.doc);
  const std::unique_ptr<Tokenizer> tokenizer = tokenizer_for(options.tokenizer);
  const Layout layout =
      make_layout(document, *tokenizer, {.segments = options.segments, .max_tokens = options.max_tokens});
  if (layout.size() == 0) throw Error(fmt::format("{}: the document has no text to tokenize", options.doc));
  const attn::TokenLayout tokens = attn::batch_layouts({&layout});

  const auto heads = static_cast<std::int64_t>(spec.heads.size());
  const auto length = static_cast<std::int64_t>(layout.size());
  const std::int64_t prefix = options.prefix, keys = prefix + length;
  if (length * keys > kMaxPairs)
    throw Error(fmt::format("{}: {} queries x {} keys is more than a picture can show ({} pairs at "
                            "most); lower --max-tokens or --prefix",
                            options.doc, length, keys, kMaxPairs));

  // Only visibility matters: q, k and v are stand-ins of the right shapes with head dim 1.
  attn::AttentionCall call;
  call.q = at::zeros({1, heads, length, 1});
  call.k = at::zeros({1, heads, keys, 1});
  call.v = call.k;
  call.prefix_len = prefix;
  call.spec = &spec;
  call.query_layout = &tokens;
  call.key_layout = &tokens;
  if (prefix > 0) {  // the slots split evenly among the segments, as the tokens are
    std::vector<std::int32_t> segment(static_cast<std::size_t>(prefix));
    for (std::int64_t n = 0; n < prefix; ++n)
      segment[n] = even_segment(static_cast<std::size_t>(n), static_cast<std::size_t>(prefix), options.segments);
    call.prefix_segment = at::from_blob(segment.data(), {prefix}, at::kInt).clone();
  }
  if (const std::int64_t relations = attn::relation_count(spec.bias); relations > 0)
    call.bias_table = at::zeros({heads, relations});
  if (spec.dense_bias) call.dense_bias = at::zeros({1, 1, 1, 1}).expand({1, heads, length, keys});
  const attn::PairRules rules(call);
  const attn::BlockMask block_mask = attn::fused_block_mask(rules);  // the tiles the fused kernel runs

  std::printf("%s: %zu tokens (%s%s), %d sections, %d segment%s, %ld prefix slots\n",
              options.doc.c_str(), layout.size(),
              options.tokenizer.empty() ? "bytes" : tokenizer->kind().c_str(),
              options.max_tokens > 0 ? fmt::format(", at most {}", options.max_tokens).c_str() : "",
              layout.tree.size() - 1, options.segments, options.segments == 1 ? "" : "s", long(prefix));
  std::printf("%s:\n", options.spec.c_str());
  const std::string spec_text = attn::to_string(spec);
  for (std::size_t begin = 0, end; begin < spec_text.size(); begin = end + 1) {
    end = std::min(spec_text.find('\n', begin), spec_text.size());
    std::printf("  %s\n", spec_text.substr(begin, end - begin).c_str());
  }
  std::printf("%-5s %9s %13s  %s\n", "head", "sparsity", "tile density", "mask");

  const fs::path out = options.out;
  fs::create_directories(out);
  std::vector<std::int64_t> key_lines;
  if (prefix > 0) key_lines.push_back(prefix);
  const std::vector<std::int64_t> starts = section_starts(layout);
  for (const std::int64_t s : starts) key_lines.push_back(prefix + s);
  const int digits = static_cast<int>(std::to_string(heads - 1).size());
  const double pairs = static_cast<double>(length) * static_cast<double>(keys);

  Json heads_json = Json::array();
  std::vector<std::string> written;
  for (std::int64_t h = 0; h < heads; ++h) {
    const std::string expression = head_expression(spec.head(h));
    MaskImage image{.rows = length, .cols = keys, .row_lines = starts, .col_lines = key_lines,
                    .title = fmt::format("head {}: {}", h, expression)};
    std::int64_t visible = 0;
    for_each_visible_row(rules, 0, h, [&](std::int64_t, const std::uint8_t* row) {
      image.add_row(row);
      for (std::int64_t n = 0; n < keys; ++n) visible += row[n];
    });
    const double sparsity = 1.0 - static_cast<double>(visible) / pairs;
    const double density = head_tile_density(block_mask, h);
    const std::string file = fmt::format("head-{:0{}}.{}", h, digits, options.format);
    write_file_atomic(out / file, options.format == "png" ? mask_png(image) : mask_svg(image));
    written.push_back((out / file).string());
    std::printf("%-5ld %9.4f %13s  %s\n", long(h), sparsity,
                density < 0 ? "-" : fmt::format("{:.4f}", density).c_str(), expression.c_str());
    heads_json.push_back({{"head", h},
                          {"mask", expression},
                          {"visible_pairs", visible},
                          {"pairs", length * keys},
                          {"sparsity", sparsity},
                          {"tile_density", density < 0 ? Json() : Json(density)},
                          {"file", file}});
  }
  const Json summary{{"spec", options.spec},
                     {"layer_spec", attn::to_json(spec)},
                     {"document", options.doc},
                     {"tokenizer", options.tokenizer.empty() ? "bytes" : options.tokenizer},
                     {"tokens", length},
                     {"prefix", prefix},
                     {"keys", keys},
                     {"segments", options.segments},
                     {"sections", layout.tree.size() - 1},
                     {"tile", {block_mask.q_tile, block_mask.k_tile}},
                     {"heads", std::move(heads_json)}};
  write_file_atomic(out / "sparsity.json", summary.dump(2) + "\n");
  for (const std::string& file : written) std::printf("wrote %s\n", file.c_str());
  std::printf("wrote %s\n", (out / "sparsity.json").c_str());
}

}  // namespace strata::analysis
