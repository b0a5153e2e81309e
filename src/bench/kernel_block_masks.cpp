#include "kernel_block_masks.h"

#include <ATen/ops/tensor.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "strata/attn/block_mask.h"
#include "strata/attn/spec.h"
#include "strata/attn/token_order.h"
#include "strata/bench/timing.h"

namespace strata::bench {

namespace {

using Json = nlohmann::ordered_json;

// The call restricted to some of its heads, as the kernel splits a layer; `spec` receives
// their specs and must outlive the result.
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

// The block mask the kernel compiles for one pass. (The benchmarks' calls have no key
// padding, which the kernel would reorder with the layout.)
attn::BlockMask pass_block_mask(const attn::AttentionCall& call, const KernelPass& pass) {
  if (!pass.token_order && static_cast<std::int64_t>(pass.heads.size()) == call.q.size(1))
    return attn::fused_block_mask(call);
  attn::LayerSpec spec;
  attn::AttentionCall part = heads_call(call, pass.heads, spec);
  attn::TokenLayout ordered;
  if (pass.token_order) {
    ordered = attn::token_ordered_layout(*call.query_layout);
    part.query_layout = &ordered;
    part.key_layout = &ordered;
  }
  return attn::fused_block_mask(part);
}

// Head group g of a pass's mask: its heads (numbered in the layer), their mask, the order
// they run in, the tiles visited and how many of those are partial (the predicate evaluated
// per pair), as shares of all pairs (tile_density, partial_fraction).
Json group_json(const attn::AttentionCall& call, const KernelPass& pass, const attn::BlockMask& mask, std::int64_t g) {
  std::vector<std::int64_t> heads;
  for (std::size_t i = 0; i < mask.head_group.size(); ++i)
    if (mask.head_group[i] == g) heads.push_back(pass.heads[i]);
  return {{"heads", heads},
          {"mask", call.spec ? attn::to_string(call.spec->head(heads.front()).mask) : "all"},
          {"order", pass.token_order ? "token" : "document"},
          {"tile_density", mask.tile_density(g)},
          {"partial_fraction", mask.partial_density(g)}};
}

}  // namespace

Json kernel_block_masks(const attn::AttentionCall& call) {
  const std::vector<KernelPass> passes = kernel_passes(call);
  std::vector<double> compile_ms;
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    for (const KernelPass& pass : passes) (void)pass_block_mask(call, pass);
    compile_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
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
          {"compile_ms", median_of(compile_ms)},
          {"token_ordered_heads", ordered},
          {"groups", groups},
          {"fixed_heads", fixed}};
}

}  // namespace strata::bench
