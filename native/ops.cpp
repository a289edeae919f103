// Operators of our own, registered with libtorch's dispatcher under the
// namespace tlbo:: and reached through tlbo_op_find like ATen's own.
//
// tlbo::softplus_pair_sum(Tensor p, Tensor n, Tensor wp, Tensor wn) -> Tensor
//   sum over b, j, k of softplus(p[b,j] - n[b,k]) * wp[b,j] * wn[b,k]
//   for p, wp of shape (B, J) and n, wn of shape (B, K), differentiable in p
//   and n (wp and wn are constants). Composed of ATen operators, so it runs
//   on any device. Summands below 2^-60 (2^-900 in float64) are left out;
//   padding entries, p = -1e30 or n = +1e30 (or infinite), add nothing.
//
// Why: the summand's (B, J, K) block is the cost of the triplet losses.
// softplus(x) is formed as log1p(e) with e = exp(x), and its derivative as
// e / (1 + e): where every entry of p and n is in [0, 80] (float32; [0, 700]
// in float64), as latent distances mostly are, e = exp(p) exp(-n), one
// transcendental a summand instead of the three of softplus forward and
// backward; elsewhere e = exp(x) with x clamped to the range where log1p(e)
// rounds neither to e nor to x. Either way no transcendental sees or makes a
// subnormal number (x86 computes them in microcode; Sleef's log1p of inputs
// below about 1e-9 took 35 ns a float against 1.3). The backward recomputes
// the block in place instead of autograd keeping it. The blocks are formed
// and reduced here; the caller bounds their size (chunks of anchors).
#include <cmath>

#include <torch/torch.h>

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Cuts are the block's thresholds in a dtype. Below tiny a summand is set to
// 0 (2^-60 is below a float32 ulp of any loss it enters, whose other terms
// are of order 1e-4 and more; 2^-900 for float64). Below exact, log1p(e)
// rounds to e; above 1/exact, softplus(x) rounds to x.
// Entries of p and n are in productRange when exp(p) and exp(-n) are normal
// numbers whose products are too.
struct Cuts {
  double tiny, exact, productRange;
};

Cuts cutsOf(at::ScalarType t) {
  if (t == at::kDouble) return {0x1p-900, 0x1p-53, 700};
  return {0x1p-60, 0x1p-24, 80};
}

// Padding entries are at least this far out (1e30 or infinite).
constexpr double padding = 1e29;

// inProductRange says whether the entries of p and n, padding apart, lie in
// [0, cuts.productRange] (true when there are none). One copy to the host
// (a synchronisation on a GPU) per call.
bool inProductRange(const at::Tensor &p, const at::Tensor &n, const Cuts &cuts) {
  if (p.numel() == 0 || n.numel() == 0) return true;
  at::Tensor lo = at::minimum(p.masked_fill(p < -padding, 0).min(), n.min());
  at::Tensor hi = at::maximum(p.max(), n.masked_fill(n > padding, 0).max());
  at::Tensor range = at::stack({lo, hi}).to(at::kCPU, at::kDouble);
  const double *r = range.data_ptr<double>();
  return r[0] >= 0 && r[1] <= cuts.productRange;
}

// pairDiff returns the block x[b,j,k] = p[b,j] - n[b,k].
at::Tensor pairDiff(const at::Tensor &p, const at::Tensor &n) { return p.unsqueeze(2) - n.unsqueeze(1); }

// productExp returns the block e[b,j,k] = exp(p[b,j]) exp(-n[b,k]) (entries
// in the product range), and clampedExp exp(x) with x clamped at
// log(1/cuts.exact) (any entries); either with the entries below cuts.tiny
// set to 0.
at::Tensor productExp(const at::Tensor &p, const at::Tensor &n, const Cuts &cuts) {
  at::Tensor e = p.exp().unsqueeze(2) * n.neg().exp().unsqueeze(1);
  return at::threshold_(e, cuts.tiny, 0);
}

at::Tensor clampedExp(const at::Tensor &x, const Cuts &cuts) {
  at::Tensor e = x.clamp(std::log(cuts.tiny) - 1, -std::log(cuts.exact)).exp_();
  return at::threshold_(e, cuts.tiny, 0);
}

class SoftplusPairSum : public torch::autograd::Function<SoftplusPairSum> {
public:
  static at::Tensor forward(AutogradContext *ctx, const at::Tensor &p, const at::Tensor &n, const at::Tensor &wp,
                            const at::Tensor &wn) {
    ctx->save_for_backward({p, n, wp, wn});
    Cuts cuts = cutsOf(p.scalar_type());
    bool product = inProductRange(p, n, cuts);
    ctx->saved_data["product"] = product;
    at::Tensor x = product ? at::Tensor() : pairDiff(p, n);
    at::Tensor e = product ? productExp(p, n, cuts) : clampedExp(x, cuts);
    at::Tensor s = at::where(e < cuts.exact, e, e.clamp_min(cuts.exact).log1p_()); // softplus(p - n)
    if (!product) // where e was clamped above, softplus(x) rounds to x (and is above x elsewhere)
      at::maximum_out(s, s, x);
    return at::bmm(s, wn.unsqueeze(2)).squeeze(2).mul(wp).sum();
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const at::Tensor &p = saved[0], &n = saved[1], &wp = saved[2], &wn = saved[3];
    Cuts cuts = cutsOf(p.scalar_type());
    at::Tensor e = ctx->saved_data["product"].toBool() ? productExp(p, n, cuts) : clampedExp(pairDiff(p, n), cuts);
    e.mul_(e.add(1).reciprocal_()); // the sigmoid of p - n, without cancellation
    const at::Tensor &g = grads[0];
    at::Tensor gp = at::bmm(e, wn.unsqueeze(2)).squeeze(2).mul(wp).mul(g);
    at::Tensor gn = at::bmm(wp.unsqueeze(1), e).squeeze(1).mul(wn).mul(g).neg();
    return {gp, gn, at::Tensor(), at::Tensor()};
  }
};

at::Tensor softplusPairSum(const at::Tensor &p, const at::Tensor &n, const at::Tensor &wp, const at::Tensor &wn) {
  TORCH_CHECK(p.dim() == 2 && n.dim() == 2 && wp.sizes() == p.sizes() && wn.sizes() == n.sizes() &&
                  p.size(0) == n.size(0),
              "softplus_pair_sum: want p, wp (B, J) and n, wn (B, K); got p ", p.sizes(), ", n ", n.sizes(), ", wp ",
              wp.sizes(), ", wn ", wn.sizes());
  TORCH_CHECK(!wp.requires_grad() && !wn.requires_grad(), "softplus_pair_sum: the weights take no gradient");
  return SoftplusPairSum::apply(p, n, wp, wn);
}

} // namespace

TORCH_LIBRARY(tlbo, m) { m.def("softplus_pair_sum(Tensor p, Tensor n, Tensor wp, Tensor wn) -> Tensor"); }

TORCH_LIBRARY_IMPL(tlbo, CompositeImplicitAutograd, m) { m.impl("softplus_pair_sum", softplusPairSum); }
