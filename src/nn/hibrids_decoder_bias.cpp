#include "strata/nn/hibrids_decoder_bias.h"

#include <torch/torch.h>

#include "strata/core/error.h"

namespace strata::nn {

at::Tensor hibrids_decoder_bias(const at::Tensor& alignment, const attn::TokenLayout& memory_layout,
                                const at::Tensor& table, const attn::Relation& relation) {
  const attn::TokenLayout& m = memory_layout;
  if (!m.section.defined() || !m.path_len.defined() || !m.lvl_diff.defined())
    throw Error("HIBRIDS-DEC needs the source layout's section ids and section tree");
  const std::int64_t batch = alignment.size(0), heads = alignment.size(1), steps = alignment.size(2),
                     length = alignment.size(3);
  // A layout of one item is shared by every row (beam search over one document).
  if ((m.section.size(0) != batch && m.section.size(0) != 1) || m.section.size(1) != length)
    throw Error("HIBRIDS-DEC: source layout [" + std::to_string(m.section.size(0)) + ", " +
                std::to_string(m.section.size(1)) + "] does not match the cross-attention's [" +
                std::to_string(batch) + ", " + std::to_string(length) + "]");
  const at::Tensor ids = attn::section_relation_ids(relation, m.path_len, m.lvl_diff, m.section_depth)
                             .to(torch::kInt64)
                             .to(alignment.device());  // [B or 1, S, S]
  const std::int64_t sections = ids.size(1);
  const at::Tensor section = m.section.to(alignment.device(), torch::kInt64)
                                 .expand({batch, length})
                                 .reshape({batch, 1, 1, length})
                                 .expand({batch, heads, steps, length});
  // A[b, h, t, s]: the alignment mass on each section.
  const at::Tensor per_section =
      torch::zeros({batch, heads, steps, sections}, alignment.options()).scatter_add(3, section, alignment);
  // B_sections[b, h, x, y] = table[h, ids[b, x, y]].
  const at::Tensor pair_bias = table.index_select(1, ids.flatten())
                                   .view({heads, ids.size(0), sections, sections})
                                   .transpose(0, 1)
                                   .expand({batch, heads, sections, sections});
  return torch::matmul(per_section, pair_bias).gather(3, section);
}

}  // namespace strata::nn
