#pragma once
// The block masks the fused kernel compiles for one attention call, as JSON for the
// benchmarks' "where the time goes": per pass (the heads it runs in token order, then the
// rest) and per head group, the tiles visited and the partial ones.
#include <nlohmann/json.hpp>

#include "strata/attn/attention_call.h"

namespace strata::bench {

// {tile, compile_ms, token_ordered_heads, groups [{heads, mask, order, tile_density,
// partial_fraction}], fixed_heads}; compile_ms is the median of 5 compilations of every pass,
// the head split and the token reordering included: what a layer pays per forward.
nlohmann::ordered_json kernel_block_masks(const attn::AttentionCall& call);

}  // namespace strata::bench
