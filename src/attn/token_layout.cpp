#include "strata/attn/token_layout.h"

#include <torch/torch.h>

#include <algorithm>
#include <string>
#include <unordered_map>

#include "strata/core/error.h"

namespace strata::attn {

namespace {
const at::Tensor* first_token_field(const TokenLayout& t) {
  for (const at::Tensor* f :
       {&t.section, &t.paragraph, &t.sentence, &t.segment, &t.document, &t.token, &t.repeated, &t.task})
    if (f->defined()) return f;
  return nullptr;
}
}  // namespace

std::int64_t TokenLayout::batch() const {
  const at::Tensor* f = first_token_field(*this);
  return f != nullptr ? f->size(0) : 0;
}

std::int64_t TokenLayout::length() const {
  const at::Tensor* f = first_token_field(*this);
  return f != nullptr ? f->size(1) : 0;
}

TokenLayout batch_layouts(const std::vector<const Layout*>& layouts, std::int64_t length) {
  if (layouts.empty()) throw Error("batch_layouts: no layouts to batch");
  const auto batch = static_cast<std::int64_t>(layouts.size());
  std::int64_t longest = 0, sections = 1;
  for (const Layout* layout : layouts) {
    longest = std::max(longest, static_cast<std::int64_t>(layout->size()));
    sections = std::max<std::int64_t>(sections, layout->tree.size());
  }
  if (length == 0) length = longest;
  for (std::int64_t b = 0; b < batch; ++b)
    if (static_cast<std::int64_t>(layouts[b]->size()) > length)
      throw Error("batch_layouts: item " + std::to_string(b) + " has " +
                  std::to_string(layouts[b]->size()) + " tokens, more than the batch length " +
                  std::to_string(length) + " (truncate it with LayoutOptions::max_tokens)");

  auto ids = [&] { return torch::empty({batch, length}, torch::kInt32); };
  TokenLayout t{ids(),
                ids(),
                ids(),
                ids(),
                ids(),
                ids(),
                ids(),
                torch::zeros({batch, sections, sections}, torch::kInt32),
                torch::zeros({batch, sections, sections}, torch::kInt32),
                torch::zeros({batch, sections}, torch::kInt32),
                /*task=*/at::Tensor()};
  t.document.zero_();
  for (std::int64_t b = 0; b < batch; ++b) {
    const Layout& layout = *layouts[b];
    const auto real = static_cast<std::int64_t>(layout.size());
    std::int32_t* section = t.section[b].data_ptr<std::int32_t>();
    std::int32_t* paragraph = t.paragraph[b].data_ptr<std::int32_t>();
    std::int32_t* sentence = t.sentence[b].data_ptr<std::int32_t>();
    std::int32_t* segment = t.segment[b].data_ptr<std::int32_t>();
    std::int32_t* token = t.token[b].data_ptr<std::int32_t>();
    std::int32_t* repeated = t.repeated[b].data_ptr<std::int32_t>();
    std::unordered_map<std::int32_t, int> occurrences;
    for (std::int32_t id : layout.token) ++occurrences[id];
    for (std::int64_t p = 0; p < real; ++p) {
      section[p] = layout.section[p];
      paragraph[p] = layout.paragraph[p];
      sentence[p] = layout.sentence[p];
      segment[p] = layout.segment[p];
      token[p] = layout.token[p];
      repeated[p] = occurrences[layout.token[p]] > 1 ? 1 : 0;
    }
    const std::int32_t last_segment = real > 0 ? layout.segment[real - 1] : 0;
    for (std::int64_t p = real; p < length; ++p) {
      section[p] = 0;
      paragraph[p] = sentence[p] = -1;
      segment[p] = last_segment;
      token[p] = -1;
      repeated[p] = 0;
    }
    std::int32_t* path = t.path_len[b].data_ptr<std::int32_t>();
    std::int32_t* level = t.lvl_diff[b].data_ptr<std::int32_t>();
    std::int32_t* depth = t.section_depth[b].data_ptr<std::int32_t>();
    for (int x = 0; x < layout.tree.size(); ++x) {
      depth[x] = layout.tree.depth[x];
      for (int y = 0; y < layout.tree.size(); ++y) {
        path[x * sections + y] = layout.tree.path_len(x, y);
        level[x * sections + y] = layout.tree.lvl_diff(x, y);
      }
    }
  }
  return t;
}

TreeClamping tree_clamping(const Relation& relation, const SectionTree& tree) {
  TreeClamping out;
  for (int x = 0; x < tree.size(); ++x)
    for (int y = 0; y < tree.size(); ++y) {
      ++out.pairs;
      const SectionPair pair{tree.path_len(x, y), tree.lvl_diff(x, y), tree.depth[x], y - x};
      out.clamped += tree_relation_clamped(relation, pair) ? 1 : 0;
    }
  return out;
}

TokenLayout select_items(const TokenLayout& layout, const at::Tensor& index) {
  TokenLayout out = layout;
  for (at::Tensor* field : {&out.section, &out.paragraph, &out.sentence, &out.segment,
                            &out.document, &out.token, &out.repeated, &out.task, &out.path_len,
                            &out.lvl_diff, &out.section_depth})
    if (field->defined() && field->size(0) != 1) *field = field->index_select(0, index);
  return out;
}

at::Tensor section_relation_ids(const Relation& relation, const at::Tensor& path_len,
                                const at::Tensor& lvl_diff, const at::Tensor& section_depth) {
  const at::Tensor path = path_len.to(torch::kCPU, torch::kInt32).contiguous();
  const at::Tensor level = lvl_diff.to(torch::kCPU, torch::kInt32).contiguous();
  const at::Tensor depth = section_depth.defined()
                               ? section_depth.to(torch::kCPU, torch::kInt32).contiguous()
                               : at::Tensor();
  const std::int64_t items = path.size(0), sections = path.size(1);
  at::Tensor ids = torch::empty({items, sections, sections}, torch::kInt32);
  const std::int32_t* p = path.data_ptr<std::int32_t>();
  const std::int32_t* l = level.data_ptr<std::int32_t>();
  const std::int32_t* d = depth.defined() ? depth.data_ptr<std::int32_t>() : nullptr;
  std::int32_t* out = ids.data_ptr<std::int32_t>();
  for (std::int64_t b = 0; b < items; ++b)
    for (std::int64_t x = 0; x < sections; ++x)
      for (std::int64_t y = 0; y < sections; ++y) {
        const std::int64_t at = (b * sections + x) * sections + y;
        const SectionPair pair{p[at], l[at], d != nullptr ? d[b * sections + x] : 0, y - x};
        out[at] = tree_relation_id(relation, pair);
      }
  return ids;
}

}  // namespace strata::attn
