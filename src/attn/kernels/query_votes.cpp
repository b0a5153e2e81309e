#include "query_votes.h"

#include <torch/torch.h>

#include <string>

#include "strata/core/error.h"

namespace strata::attn {

at::Tensor query_votes(const AttentionCall& call) {
  const at::Tensor& padding = call.query_padding;
  if (!padding.defined()) return {};
  const std::int64_t batch = call.q.size(0), lq = call.q.size(2);
  if (padding.dim() != 2 || (padding.size(0) != batch && padding.size(0) != 1) ||
      padding.size(1) != lq) {
    std::string shape = "[";
    for (std::int64_t d = 0; d < padding.dim(); ++d)
      shape += (d ? ", " : "") + std::to_string(padding.size(d));
    const std::string one = "[1, " + std::to_string(lq) + "]";
    throw Error("attention call: query_padding has shape " + shape + "], expected " +
                (batch == 1 ? one : "[" + std::to_string(batch) + ", " + std::to_string(lq) +
                                        "] or " + one) +
                " (true for a real query)");
  }
  return padding.to(torch::kCPU, torch::kBool).expand({batch, lq}).to(torch::kUInt8).contiguous();
}

}  // namespace strata::attn
