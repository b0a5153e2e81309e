#include "strata/attn/layout_tensors.h"

#include <torch/torch.h>

namespace strata {

namespace {
at::Tensor ids(const std::vector<std::int32_t>& values) {
  return torch::tensor(at::ArrayRef<std::int32_t>(values), torch::kInt32).to(torch::kInt64);
}
}  // namespace

LayoutTensors to_tensors(const Layout& layout) {
  LayoutTensors t;
  t.token = ids(layout.token);
  t.position = ids(layout.position);
  t.section = ids(layout.section);
  t.paragraph = ids(layout.paragraph);
  t.sentence = ids(layout.sentence);
  t.segment = ids(layout.segment);
  const int s = layout.tree.size();
  t.path_len = torch::empty({s, s}, torch::kInt64);
  t.lvl_diff = torch::empty({s, s}, torch::kInt64);
  auto path = t.path_len.accessor<std::int64_t, 2>();
  auto lvl = t.lvl_diff.accessor<std::int64_t, 2>();
  for (int x = 0; x < s; ++x)
    for (int y = 0; y < s; ++y) {
      path[x][y] = layout.tree.path_len(x, y);
      lvl[x][y] = layout.tree.lvl_diff(x, y);
    }
  return t;
}

}  // namespace strata
