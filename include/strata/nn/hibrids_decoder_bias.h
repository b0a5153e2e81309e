#pragma once
// HIBRIDS-DEC (seed 001 Eq. 3): the bias on the last decoder layer's cross-attention,
//   b[t, j] = Σ_l a[t, l] · B[rel(section(l), section(j))],
// where a is the second-last layer's cross-attention (summary token t aligned to source
// token l) and B the learned table of a tree relation. Tokens of one section share their
// relations, so the sum runs over sections: A[t, s] = Σ_{l in s} a[t, l], then
// b[t, j] = (A · B_sections)[t, section(j)], costing O(T·L + T·S²), never T·L·L.
#include <ATen/core/Tensor.h>

#include "strata/attn/spec.h"
#include "strata/attn/token_layout.h"

namespace strata::nn {

// alignment [B, H, T, L] (rows sum to 1 over the keys), table [H, relation_count(relation)];
// memory_layout needs section [B, L] and path_len / lvl_diff (and section_depth for
// hibrids_selected) [B, S, S]. Returns [B, H, T, L], differentiable in alignment and table.
// Each head h reads its own alignment row and table row.
at::Tensor hibrids_decoder_bias(const at::Tensor& alignment, const attn::TokenLayout& memory_layout,
                                const at::Tensor& table, const attn::Relation& relation);

}  // namespace strata::nn
