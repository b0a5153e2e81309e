#pragma once
// AdamW (Loshchilov & Hutter, decoupled weight decay), computed as torch.optim.AdamW does,
// with its state exposed as named tensors so that checkpoints store it in safetensors.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace strata::train {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

struct AdamWOptions {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
};

// Weight decay applies to every parameter except biases and norms: a parameter gets none when
// its name ends with "bias", contains "layer_norm", "layernorm" or "_norm" (any case), or it
// is 1-D, or is a state-space model's A or dt (nn::is_state_space_dynamics). Embeddings and
// weight matrices decay.
bool decays(const std::string& name, const at::Tensor& parameter);

class AdamW {
 public:
  // Keeps the parameters that require grad; a tensor given twice under two names (tied
  // weights) is updated once, under its first name.
  explicit AdamW(const NamedTensors& parameters, AdamWOptions options = {});

  // One update at learning rate `lr`: p -= lr·wd·p (decaying parameters only), then Adam with
  // bias correction, eps added after sqrt(v̂). Parameters without a gradient are skipped;
  // the step count (and so the bias correction) is shared by all parameters.
  void step(double lr);
  void zero_grad();

  std::int64_t step_count() const { return step_; }
  // For state_tensors() overwritten in place (a data-parallel run's copy of rank 0's).
  void set_step_count(std::int64_t step) { step_ = step; }
  std::vector<at::Tensor> parameters() const;

  // "exp_avg/NAME" and "exp_avg_sq/NAME" for every parameter.
  NamedTensors state_tensors() const;
  // Restores what state_tensors() gave; strata::Error naming `source` on missing or extra
  // names or a shape mismatch.
  void load_state(const std::map<std::string, at::Tensor>& tensors, std::int64_t step,
                  const std::string& source = "optimizer state");

 private:
  struct Slot {
    std::string name;
    at::Tensor parameter, exp_avg, exp_avg_sq;
    bool decay;
  };
  // What `slot`'s parameter is multiplied by before the Adam step: 1 - lr·wd, or 1 when it
  // does not decay.
  double decay_factor(const Slot& slot, double lr) const;
  // One parameter's update by libtorch's per-tensor ops (what step() does in one pass for fp32
  // CPU parameters).
  void step_with_ops(Slot& slot, const at::Tensor& grad, double lr, double bias_correction1,
                     double bias_correction2);

  std::vector<Slot> slots_;
  AdamWOptions options_;
  std::int64_t step_ = 0;
};

// Scales the gradients so that their joint L2 norm is at most max_norm (as
// torch.nn.utils.clip_grad_norm_) and returns the norm before clipping. A non-finite result
// means some gradient holds inf or NaN: the gradients are then left as they are, and the
// caller should skip the update.
double clip_grad_norm(const std::vector<at::Tensor>& parameters, double max_norm);

}  // namespace strata::train
