#pragma once
// Gradients summed over the ranks of a data-parallel run, in buckets that go out while the
// backward pass is still running (as c10d's Reducer does for DistributedDataParallel).
//
// Buckets hold the parameters in reverse order, the order backward finishes them, up to
// `bucket_bytes` each. A hook on each parameter's gradient accumulator marks it done during the
// step's last backward; a bucket whose parameters are all done is all-reduced at once, but
// always in bucket order, so that every rank issues the same collectives in the same order
// even when a parameter is unused on some ranks. finish() sends what is left and writes the
// sums back. A parameter with no gradient on any rank keeps none (AdamW then skips it, as in
// one process); each bucket carries a presence count per parameter for that.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace strata::train {

class ProcessGroup;

class GradientReducer {
 public:
  GradientReducer(ProcessGroup& group, std::vector<at::Tensor> parameters, std::int64_t bucket_bytes = 4 << 20);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // The next backward pass is the last of `step`: its finished gradients may go out.
  void arm(std::int64_t step);
  // Sends the buckets not sent yet, waits for all, and leaves every parameter's .grad the sum
  // over ranks. Returns the seconds this call spent blocked.
  double finish();

  std::int64_t bytes_per_step() const;  // what each rank sends into the all-reduces a step
  std::size_t buckets() const;

  struct State;  // gradient_reducer.cpp

 private:
  std::unique_ptr<State> state_;
};

}  // namespace strata::train
