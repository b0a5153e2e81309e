#pragma once
// A Layout as int64 tensors, the form the attention engine's masks and biases read.
// Tree relations are kept at section level (S × S, S = number of sections), never L × L:
// a token pair's relation is looked up through the tokens' section ids.
#include <ATen/core/Tensor.h>

#include "strata/doc/layout.h"

namespace strata {

struct LayoutTensors {
  at::Tensor token, position, section, paragraph, sentence, segment;  // [L] int64
  at::Tensor path_len;  // [S, S] int64, signed PathLen between sections
  at::Tensor lvl_diff;  // [S, S] int64, LvlDiff between sections
};

LayoutTensors to_tensors(const Layout& layout);

}  // namespace strata
