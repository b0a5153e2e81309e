// fused_attention(): input checks, dtype handling and the autograd node around the passes in
// fused_forward.cpp / fused_backward.cpp.
//
// The node is a hand-made torch::autograd::Node rather than a torch::autograd::Function:
// backward needs C++ state that IValue cannot hold (the PairRules and the block mask, shared
// through a FusedPlan), and a Node keeps it as a plain member.
#include "fused.h"

#include <torch/csrc/autograd/functions/utils.h>
#include <torch/torch.h>

#include <memory>
#include <string>

#include "fused_passes.h"
#include "strata/core/error.h"

namespace strata::attn {

namespace {

using torch::autograd::SavedVariable;
using torch::autograd::variable_list;

std::string shape(const at::Tensor& t) {
  std::string s = "[";
  for (std::int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "]";
}

// What PairRules does not check: q, k, v agree in shape, dtype and device.
void check_inputs(const AttentionCall& call) {
  const at::Tensor &q = call.q, &k = call.k, &v = call.v;
  if (!q.defined() || !k.defined() || !v.defined()) throw Error("fused attention needs q, k and v");
  if (q.dim() != 4 || k.dim() != 4 || k.sizes() != v.sizes() || q.size(0) != k.size(0) ||
      q.size(1) != k.size(1) || q.size(3) != k.size(3))
    throw Error("fused attention: q " + shape(q) + ", k " + shape(k) + ", v " + shape(v) +
                " must be [B, H, Lq, Dh], [B, H, P + Lk, Dh], [B, H, P + Lk, Dh]");
  if (q.size(3) == 0) throw Error("fused attention: head dimension Dh is 0");
  for (const at::Tensor* t : {&q, &k, &v, &call.bias_table, &call.dense_bias}) {
    if (!t->defined()) continue;
    if (!t->device().is_cpu())
      throw Error("fused attention runs on CPU tensors, got one on " + t->device().str());
    const auto type = t->scalar_type();
    if (type != at::kFloat && type != at::kDouble && type != at::kBFloat16)
      throw Error(std::string("fused attention supports float, double and bfloat16, got ") +
                  c10::toString(type));
  }
  if (k.scalar_type() != q.scalar_type() || v.scalar_type() != q.scalar_type())
    throw Error(std::string("fused attention: q, k, v dtypes differ (") +
                c10::toString(q.scalar_type()) + ", " + c10::toString(k.scalar_type()) + ", " +
                c10::toString(v.scalar_type()) + ")");
}

// The compute-dtype, autograd-free version of an input (undefined stays so): contiguous,
// or for q, k, v ([B, H, L, D]) with each row's elements contiguous (heads_strided), as a
// projection's output viewed as heads is.
at::Tensor prepare(const at::Tensor& t, at::ScalarType compute, bool heads_strided = false) {
  if (!t.defined()) return t;
  const at::Tensor c = t.detach().to(compute);
  const bool rows_contiguous = c.dim() == 4 && (c.size(3) <= 1 || c.stride(3) == 1) &&
                               (c.size(2) <= 1 || c.stride(2) >= c.size(3));
  return heads_strided && rows_contiguous ? c : c.contiguous();
}

template <class T>
T* ptr_or_null(const at::Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

// The rows of a [B, H, L, D] tensor whose rows are contiguous (null for an undefined one).
// A dimension of size 1 has no meaningful stride: its row is given as D, so that a product's
// leading dimension is never below the row's length.
template <class T>
HeadRows<T> head_rows(const at::Tensor& t) {
  if (!t.defined()) return {};
  HeadRows<T> rows;
  rows.data = t.data_ptr<std::remove_const_t<T>>();
  rows.batch_stride = t.stride(0);
  rows.head_stride = t.stride(1);
  rows.row_stride = t.size(2) > 1 ? t.stride(2) : t.size(3);
  return rows;
}

// The kernel's inputs, in the compute dtype.
struct Inputs {
  at::Tensor q, k, v, table, dense;

  template <class T>
  FusedInputs<T> views() const {
    FusedInputs<T> in;
    in.q = head_rows<const T>(q);
    in.k = head_rows<const T>(k);
    in.v = head_rows<const T>(v);
    in.table = ptr_or_null<T>(table);
    in.dense = ptr_or_null<T>(dense);
    return in;
  }
};

class FusedAttentionBackward final : public torch::autograd::Node {
 public:
  // Inputs in edge order: q, k, v, bias_table, dense_bias.
  static constexpr int kInputs = 5;

  std::shared_ptr<const FusedPlan> plan;
  // Compute-dtype inputs and output as the forward read them, and the forward's side outputs.
  SavedVariable q, k, v, table, dense, out;
  at::Tensor lse, keep;
  std::array<at::ScalarType, kInputs> input_type{};
  std::vector<std::int64_t> dense_shape;

  std::string name() const override { return "strata::attn::FusedAttentionBackward"; }

  void release_variables() override {
    for (SavedVariable* s : {&q, &k, &v, &table, &dense, &out}) s->reset_data();
    lse.reset();
    keep.reset();
  }

  variable_list apply(variable_list&& grads) override {
    variable_list result(kInputs);
    if (!grads[0].defined()) return result;
    // Our raw loops record nothing, but the helper tensor ops would under create_graph.
    torch::NoGradGuard no_grad;
    const auto self = shared_from_this();
    const at::Tensor qc = q.unpack(self), kc = k.unpack(self), vc = v.unpack(self);
    const at::Tensor tc = table.unpack(self), dc = dense.unpack(self), oc = out.unpack(self);
    const at::ScalarType compute = qc.scalar_type();
    const at::Tensor dout = prepare(grads[0], compute, /*heads_strided=*/true);
    // dq, dk, dv are laid out as q, k, v are (written whole by the kernel, so left unset):
    // for heads viewed from a projection's output, each gradient reaches the projection
    // without a copy.
    auto wanted = [&](int i, const at::Tensor& like) { return task_should_compute_output(i) && like.defined(); };
    auto grad_like = [&](int i, const at::Tensor& like) { return wanted(i, like) ? at::empty_like(like) : at::Tensor(); };
    at::Tensor dq = grad_like(0, qc), dk = grad_like(1, kc), dv = grad_like(2, vc);
    at::Tensor dtable = wanted(3, tc) ? at::zeros_like(tc) : at::Tensor();
    at::Tensor ddense;  // [B, H, Lq, N]: summed down to the bias's broadcast shape below
    if (task_should_compute_output(4) && dc.defined())
      ddense = at::zeros({plan->batch, plan->heads, plan->lq, plan->keys}, qc.options());

    const Inputs inputs{qc, kc, vc, tc, dc};
    AT_DISPATCH_FLOATING_TYPES(compute, "fused_attention_backward", [&] {
      FusedGrads<scalar_t> g;
      g.dq = head_rows<scalar_t>(dq);
      g.dk = head_rows<scalar_t>(dk);
      g.dv = head_rows<scalar_t>(dv);
      g.dtable = ptr_or_null<scalar_t>(dtable);
      g.ddense = ptr_or_null<scalar_t>(ddense);
      fused_backward<scalar_t>(*plan, inputs.views<scalar_t>(), head_rows<const scalar_t>(oc),
                               lse.data_ptr<scalar_t>(), ptr_or_null<scalar_t>(keep),
                               head_rows<const scalar_t>(dout), g);
    });
    if (ddense.defined()) ddense = ddense.sum_to_size(dense_shape);
    const at::Tensor computed[kInputs] = {dq, dk, dv, dtable, ddense};
    for (int i = 0; i < kInputs; ++i)
      if (computed[i].defined()) result[i] = computed[i].to(input_type[i]);
    return result;
  }
};

}  // namespace

at::Tensor fused_attention(const AttentionCall& call) {
  check_inputs(call);
  PairRules rules(call);
  BlockMask mask = call.block_mask ? *call.block_mask : fused_block_mask(rules);
  auto plan = std::make_shared<const FusedPlan>(std::move(rules), std::move(mask), call);

  // bf16 is computed in fp32: the tiles and BLAS have no bf16 path, and fp32 accumulation
  // is what bf16 training wants anyway.
  const at::ScalarType compute = call.q.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  at::Tensor q, k, v, table, dense, out, lse, keep;
  {
    torch::NoGradGuard no_grad;
    q = prepare(call.q, compute, /*heads_strided=*/true);
    k = prepare(call.k, compute, /*heads_strided=*/true);
    v = prepare(call.v, compute, /*heads_strided=*/true);
    table = plan->has_table ? prepare(call.bias_table, compute) : at::Tensor();
    dense = prepare(call.dense_bias, compute);
    const auto options = q.options();
    // Laid out as q is (so heads viewed from a projection give heads the output projection
    // reads without a copy); every row written by the kernel.
    out = at::empty_like(q);
    lse = at::empty({plan->batch, plan->heads, plan->lq}, options);
    if (plan->any_top_p) keep = at::zeros({plan->batch, plan->heads, plan->keys}, options);
    const Inputs inputs{q, k, v, table, dense};
    AT_DISPATCH_FLOATING_TYPES(compute, "fused_attention_forward", [&] {
      fused_forward<scalar_t>(*plan, inputs.views<scalar_t>(), head_rows<scalar_t>(out),
                              lse.data_ptr<scalar_t>(), ptr_or_null<scalar_t>(keep));
    });
  }
  at::Tensor result = call.q.scalar_type() == compute ? out : out.to(call.q.scalar_type());

  const at::Tensor& table_in = plan->has_table ? call.bias_table : at::Tensor();
  if (!torch::autograd::compute_requires_grad(call.q, call.k, call.v, table_in, call.dense_bias))
    return result;
  auto node = std::shared_ptr<FusedAttentionBackward>(new FusedAttentionBackward(),
                                                      torch::autograd::deleteNode);
  node->set_next_edges(
      torch::autograd::collect_next_edges(call.q, call.k, call.v, table_in, call.dense_bias));
  torch::autograd::set_history(result, node);
  node->plan = plan;
  node->q = SavedVariable(q, false);
  node->k = SavedVariable(k, false);
  node->v = SavedVariable(v, false);
  node->table = SavedVariable(table, false);
  node->dense = SavedVariable(dense, false);
  // When the result is `out` itself it is this node's output: saved as such, so an in-place
  // change to it before backward is reported instead of silently used.
  node->out = SavedVariable(out, /*is_output=*/result.is_same(out));
  node->lse = lse;
  node->keep = keep;
  const at::Tensor* inputs[] = {&call.q, &call.k, &call.v, &table_in, &call.dense_bias};
  for (int i = 0; i < FusedAttentionBackward::kInputs; ++i)
    if (inputs[i]->defined()) node->input_type[i] = inputs[i]->scalar_type();
  if (call.dense_bias.defined()) node->dense_shape = call.dense_bias.sizes().vec();
  return result;
}

}  // namespace strata::attn
