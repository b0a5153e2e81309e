#include <torch/torch.h>

#include "kernels/fused.h"
#include "kernels/reference.h"
#include "kernels/token_sorted.h"
#include "strata/attn/attention_call.h"
#include "strata/core/error.h"

namespace strata::attn {

Kernel kernel_from_name(std::string_view name) {
  if (name == "reference") return Kernel::Reference;
  if (name == "fused") return Kernel::Fused;
  throw Error("unknown attention kernel '" + std::string(name) + "' (known: reference, fused)");
}

std::string_view kernel_name(Kernel kernel) {
  switch (kernel) {
    case Kernel::Reference: return "reference";
    case Kernel::Fused: return "fused";
  }
  return "?";
}

at::Tensor attend(const AttentionCall& call, Kernel kernel) {
  switch (kernel) {
    case Kernel::Reference: return reference_attention(call);
    case Kernel::Fused: return token_sorting_applies(call) ? attend_token_sorted(call) : fused_attention(call);
  }
  throw Error("attend: unknown kernel");
}

at::Tensor attend_keeping_weights(const AttentionCall& call, at::Tensor& weights) {
  return reference_attention(call, &weights);
}

}  // namespace strata::attn
