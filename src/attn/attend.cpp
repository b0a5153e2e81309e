#include <torch/torch.h>

#include "kernels/reference.h"
#include "strata/attn/attention_call.h"
#include "strata/core/error.h"

namespace strata::attn {

Kernel kernel_from_name(std::string_view name) {
  if (name == "reference") return Kernel::Reference;
  throw Error("unknown attention kernel '" + std::string(name) + "' (known: reference)");
}

std::string_view kernel_name(Kernel kernel) {
  switch (kernel) {
    case Kernel::Reference: return "reference";
  }
  return "?";
}

at::Tensor attend(const AttentionCall& call, Kernel kernel) {
  switch (kernel) {
    case Kernel::Reference: return reference_attention(call);
  }
  throw Error("attend: unknown kernel");
}

}  // namespace strata::attn
