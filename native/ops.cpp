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
//
// tlbo::graph_gru(Tensor xz, Tensor xr, Tensor xh, Tensor wz, Tensor ur, Tensor wh,
//                 Tensor label, Tensor src, Tensor dst, int[] levels, int[] pair_levels, bool tanh) -> Tensor
//   The messages of a sum-GRU over a directed acyclic graph (the graph GRU of
//   Jin et al.'s junction-tree VAE), computed level by level into one table:
//   row 0 is zero, message i is row i+1. Message i has label l = label[i] and
//   sums the rows j = src[k] of its pairs k (a pair names one incoming row):
//     s = sum_k h_j                      (tanh(s) when tanh)
//     z = sigmoid(xz[l] + s wz^T)
//     r_k = sigmoid(xr[l] + h_j ur^T)
//     p = tanh(xh[l] + (sum_k r_k * h_j) wh^T)
//     h = (1 - z) s + z p
//   The messages of level v are levels[v]..levels[v+1]-1 and their pairs
//   pair_levels[v]..pair_levels[v+1]-1, whose dst is the message's index
//   within its level (pairs sorted by message); a pair reads only rows of
//   earlier levels. xz, xr, xh (labels, H) hold the label terms (biases
//   included); wz, ur, wh are (H, H). Differentiable in those six.
//
// Why: a level composed of ATen operators in autograd's graph costs about
// thirty nodes, a table-sized zero gradient and a copy of the growing table;
// here the table is written in place, the backward keeps one table-sized
// gradient for all levels, and the weight gradients are one product each
// over all messages instead of one per level; U_r maps each row once (when
// it is made) rather than each pair that reads it.
//
// tlbo::adam_step_(Tensor(a!) param, Tensor grad, Tensor(b!) exp_avg, Tensor(c!) exp_avg_sq, float lr,
//                  float beta1, float beta2, float eps, float bias_correction1, float bias_correction2) -> ()
//   One Adam update of a parameter (torch.optim.Adam without weight decay
//   or amsgrad, whose formula it follows term for term):
//     m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//     param -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps)
//   Why: composed of ATen's in-place operators the update passes over the
//   parameter-sized tensors eight times; on the CPU with contiguous float
//   tensors this is one pass (other devices and layouts take the ATen
//   operators).
#include <cmath>
#include <vector>

#include <ATen/Parallel.h>
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

// GraphGru's intermediates by message (s, z, p, g: (n, H)) and by pair (r,
// the gathered rows hIn, the pair labels).
struct GruState {
  at::Tensor s, z, p, g, r, hIn, pairLabel;
};

struct GruArgs {
  const at::Tensor &xz, &xr, &xh, &wz, &ur, &wh, &label, &src, &dst;
  const std::vector<int64_t> &levels, &pairLevels;
  bool tanh;
};

// gruForward returns the table; with keep it fills *keep for the backward.
at::Tensor gruForward(const GruArgs &a, GruState *keep) {
  const int64_t n = a.levels.back(), pairs = a.pairLevels.back(), h = a.xz.size(1);
  auto opts = a.xz.options();
  at::Tensor table = at::zeros({n + 1, h}, opts);
  if (keep) {
    for (at::Tensor *t : {&keep->s, &keep->z, &keep->p, &keep->g})
      *t = at::empty({n, h}, opts);
    keep->r = at::empty({pairs, h}, opts);
    keep->hIn = at::empty({pairs, h}, opts);
    keep->pairLabel = at::empty({pairs}, a.label.options());
  }
  // rows returns the rows lo..hi of a kept buffer, or a new (hi-lo, H) tensor.
  auto rows = [&](at::Tensor GruState::*buf, int64_t lo, int64_t hi) {
    return keep ? (keep->*buf).slice(0, lo, hi) : at::empty({hi - lo, h}, opts);
  };
  const at::Tensor wzT = a.wz.t(), urT = a.ur.t(), whT = a.wh.t();
  // the rows' U_r images, formed once a row is made (a row is read by a few
  // pairs): row 0 zero, the last level's rows (read by none) left out
  at::Tensor uTab = at::empty({n + 1, h}, opts);
  uTab.select(0, 0).zero_();
  for (size_t v = 0; v + 1 < a.levels.size(); v++) {
    const int64_t lo = a.levels[v], hi = a.levels[v + 1], plo = a.pairLevels[v], phi = a.pairLevels[v + 1];
    if (hi == lo) continue;
    const at::Tensor lab = a.label.slice(0, lo, hi), src = a.src.slice(0, plo, phi), dst = a.dst.slice(0, plo, phi);
    at::Tensor hIn = rows(&GruState::hIn, plo, phi);
    at::index_select_out(hIn, table, 0, src);
    at::Tensor s = rows(&GruState::s, lo, hi).zero_().index_add_(0, dst, hIn);
    if (a.tanh) s.tanh_();
    at::Tensor z = rows(&GruState::z, lo, hi);
    at::addmm_out(z, a.xz.index_select(0, lab), s, wzT).sigmoid_();
    at::Tensor pl = lab.index_select(0, dst);
    if (keep) keep->pairLabel.slice(0, plo, phi).copy_(pl);
    at::Tensor r = rows(&GruState::r, plo, phi);
    at::add_out(r, a.xr.index_select(0, pl), uTab.index_select(0, src)).sigmoid_();
    at::Tensor g = rows(&GruState::g, lo, hi).zero_().index_add_(0, dst, r * hIn);
    at::Tensor p = rows(&GruState::p, lo, hi);
    at::addmm_out(p, a.xh.index_select(0, lab), g, whT).tanh_();
    at::Tensor out = table.slice(0, lo + 1, hi + 1); // (1 - z) s + z p
    at::sub_out(out, p, s).mul_(z).add_(s);
    if (v + 2 < a.levels.size()) {
      at::Tensor u = uTab.slice(0, lo + 1, hi + 1);
      at::mm_out(u, out, urT);
    }
  }
  return table;
}

class GraphGru : public torch::autograd::Function<GraphGru> {
public:
  static at::Tensor forward(AutogradContext *ctx, const at::Tensor &xz, const at::Tensor &xr, const at::Tensor &xh,
                            const at::Tensor &wz, const at::Tensor &ur, const at::Tensor &wh, const at::Tensor &label,
                            const at::Tensor &src, const at::Tensor &dst, const std::vector<int64_t> &levels,
                            const std::vector<int64_t> &pairLevels, bool tanh) {
    GruState st;
    at::Tensor table = gruForward({xz, xr, xh, wz, ur, wh, label, src, dst, levels, pairLevels, tanh}, &st);
    ctx->save_for_backward({wz, ur, wh, label, src, dst, table});
    ctx->saved_data["state"] = std::vector<at::Tensor>{st.s, st.z, st.p, st.g, st.r, st.hIn, st.pairLabel};
    ctx->saved_data["levels"] = levels;
    ctx->saved_data["pair_levels"] = pairLevels;
    ctx->saved_data["tanh"] = tanh;
    ctx->saved_data["labels"] = xz.size(0);
    return table;
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const at::Tensor &wz = saved[0], &ur = saved[1], &wh = saved[2], &label = saved[3], &srcAll = saved[4],
                     &dstAll = saved[5], &table = saved[6];
    std::vector<at::Tensor> st = ctx->saved_data["state"].toTensorVector();
    const at::Tensor &S = st[0], &Z = st[1], &P = st[2], &G = st[3], &R = st[4], &HIn = st[5], &pairLabel = st[6];
    std::vector<int64_t> levels = ctx->saved_data["levels"].toIntVector();
    std::vector<int64_t> pairLevels = ctx->saved_data["pair_levels"].toIntVector();
    const bool tanh = ctx->saved_data["tanh"].toBool();
    const int64_t labels = ctx->saved_data["labels"].toInt();
    // D accumulates the gradient of every row; a level's rows are complete
    // once the later levels, their only readers, have been passed.
    at::Tensor D = grads[0].defined() ? grads[0].clone(at::MemoryFormat::Contiguous)
                                      : at::zeros({Z.size(0) + 1, Z.size(1)}, Z.options());
    at::Tensor dZ = at::empty_like(Z), dP = at::empty_like(P), dR = at::empty_like(R);
    at::Tensor dU = at::zeros_like(D); // of the rows' U_r images
    for (size_t v = levels.size() - 1; v-- > 0;) {
      const int64_t lo = levels[v], hi = levels[v + 1], plo = pairLevels[v], phi = pairLevels[v + 1];
      if (hi == lo) continue;
      const at::Tensor src = srcAll.slice(0, plo, phi), dst = dstAll.slice(0, plo, phi);
      at::Tensor dh = D.slice(0, lo + 1, hi + 1);
      if (v + 2 < levels.size()) dh.addmm_(dU.slice(0, lo + 1, hi + 1), ur);
      const at::Tensor s = S.slice(0, lo, hi), z = Z.slice(0, lo, hi),
                       p = P.slice(0, lo, hi), r = R.slice(0, plo, phi), hIn = HIn.slice(0, plo, phi);
      at::Tensor dz = dZ.slice(0, lo, hi); // gradient of z's pre-activation
      at::sub_out(dz, p, s).mul_(dh).mul_(z).mul_(1 - z);
      at::Tensor dp = dP.slice(0, lo, hi); // of p's pre-activation
      at::mul_out(dp, p, p).neg_().add_(1).mul_(dh).mul_(z);
      at::Tensor ds = at::addmm(dh * (1 - z), dz, wz);
      if (tanh) ds.mul_(1 - s * s);
      at::Tensor dg = at::mm(dp, wh).index_select(0, dst); // by pair
      at::Tensor dr = dR.slice(0, plo, phi);                // of r's pre-activation
      at::mul_out(dr, dg, hIn).mul_(r).mul_(1 - r);
      D.index_add_(0, src, dg.mul_(r).add_(ds.index_select(0, dst)));
      dU.index_add_(0, src, dr);
    }
    at::Tensor dxz = at::zeros({labels, Z.size(1)}, Z.options()).index_add_(0, label, dZ);
    at::Tensor dxh = at::zeros({labels, Z.size(1)}, Z.options()).index_add_(0, label, dP);
    at::Tensor dxr = at::zeros({labels, Z.size(1)}, Z.options()).index_add_(0, pairLabel, dR);
    return {dxz, dxr, dxh, dZ.t().mm(S), dU.t().mm(table), dP.t().mm(G), at::Tensor(), at::Tensor(), at::Tensor(),
            at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// checkOffsets checks that off starts at 0, does not decrease and ends at end.
void checkOffsets(const std::vector<int64_t> &off, int64_t end, const char *what) {
  TORCH_CHECK(!off.empty() && off.front() == 0 && off.back() == end, "graph_gru: ", what, " must run from 0 to ", end,
              ", got ", c10::IntArrayRef(off));
  for (size_t i = 1; i < off.size(); i++)
    TORCH_CHECK(off[i] >= off[i - 1], "graph_gru: ", what, " decrease at ", i);
}

// checkPairs checks on the host that each level's pairs read earlier rows
// and name messages of the level (on other devices the index operators
// check the ranges only).
void checkPairs(const at::Tensor &src, const at::Tensor &dst, const std::vector<int64_t> &levels,
                const std::vector<int64_t> &pairLevels) {
  if (!src.is_cpu()) return;
  at::Tensor sc = src.contiguous(), dc = dst.contiguous();
  const int64_t *s = sc.data_ptr<int64_t>(), *d = dc.data_ptr<int64_t>();
  for (size_t v = 0; v + 1 < levels.size(); v++)
    for (int64_t k = pairLevels[v]; k < pairLevels[v + 1]; k++) {
      TORCH_CHECK(s[k] >= 0 && s[k] <= levels[v], "graph_gru: pair ", k, " of level ", v, " reads row ", s[k],
                  ", not a row of an earlier level (0..", levels[v], ")");
      TORCH_CHECK(d[k] >= 0 && d[k] < levels[v + 1] - levels[v] && (k == pairLevels[v] || d[k] >= d[k - 1]),
                  "graph_gru: pair ", k, " of level ", v, " names message ", d[k],
                  ", not one of the level's in order");
    }
}

at::Tensor graphGru(const at::Tensor &xz, const at::Tensor &xr, const at::Tensor &xh, const at::Tensor &wz,
                    const at::Tensor &ur, const at::Tensor &wh, const at::Tensor &label, const at::Tensor &src,
                    const at::Tensor &dst, at::IntArrayRef levelsRef, at::IntArrayRef pairLevelsRef, bool tanh) {
  TORCH_CHECK(xz.dim() == 2 && xr.sizes() == xz.sizes() && xh.sizes() == xz.sizes(),
              "graph_gru: want xz, xr, xh of one shape (labels, H); got ", xz.sizes(), ", ", xr.sizes(), ", ",
              xh.sizes());
  const int64_t h = xz.size(1);
  for (const at::Tensor *w : {&wz, &ur, &wh})
    TORCH_CHECK(w->dim() == 2 && w->size(0) == h && w->size(1) == h, "graph_gru: want wz, ur, wh (", h, ", ", h,
                "); got ", w->sizes());
  for (const at::Tensor *i : {&label, &src, &dst})
    TORCH_CHECK(i->dim() == 1 && i->scalar_type() == at::kLong, "graph_gru: want label, src, dst 1-d int64; got ",
                i->sizes(), " ", i->scalar_type());
  TORCH_CHECK(src.size(0) == dst.size(0), "graph_gru: ", src.size(0), " pair rows and ", dst.size(0), " messages");
  std::vector<int64_t> levels(levelsRef.begin(), levelsRef.end()), pairLevels(pairLevelsRef.begin(), pairLevelsRef.end());
  TORCH_CHECK(levels.size() == pairLevels.size(), "graph_gru: ", levels.size(), " level and ", pairLevels.size(),
              " pair-level offsets");
  checkOffsets(levels, label.size(0), "levels");
  checkOffsets(pairLevels, src.size(0), "pair_levels");
  checkPairs(src, dst, levels, pairLevels);
  bool grad = at::GradMode::is_enabled();
  if (grad) {
    grad = false;
    for (const at::Tensor *t : {&xz, &xr, &xh, &wz, &ur, &wh}) grad = grad || t->requires_grad();
  }
  if (!grad) return gruForward({xz, xr, xh, wz, ur, wh, label, src, dst, levels, pairLevels, tanh}, nullptr);
  return GraphGru::apply(xz, xr, xh, wz, ur, wh, label, src, dst, levels, pairLevels, tanh);
}

void adamStep(at::Tensor &param, const at::Tensor &grad, at::Tensor &m, at::Tensor &v, double lr, double beta1,
              double beta2, double eps, double bc1, double bc2) {
  TORCH_CHECK(grad.sizes() == param.sizes() && m.sizes() == param.sizes() && v.sizes() == param.sizes(),
              "adam_step_: want param, grad, exp_avg, exp_avg_sq of one shape; got ", param.sizes(), ", ",
              grad.sizes(), ", ", m.sizes(), ", ", v.sizes());
  TORCH_CHECK(bc1 > 0 && bc2 > 0, "adam_step_: bias corrections must be positive, got ", bc1, " and ", bc2);
  at::NoGradGuard noGrad;
  const double c2 = 1 / std::sqrt(bc2), step = -lr / bc1;
  auto plain = [&](const at::Tensor &t) {
    return t.is_cpu() && t.scalar_type() == param.scalar_type() && t.is_contiguous();
  };
  const bool fast = (param.scalar_type() == at::kFloat || param.scalar_type() == at::kDouble) && plain(param) &&
                    plain(grad) && plain(m) && plain(v);
  if (!fast) {
    m.mul_(beta1).add_(grad, 1 - beta1);
    v.mul_(beta2).addcmul_(grad, grad, 1 - beta2);
    param.addcdiv_(m, v.sqrt().mul_(c2).add_(eps), step);
    return;
  }
  AT_DISPATCH_FLOATING_TYPES(param.scalar_type(), "adam_step_", [&] {
    scalar_t *p = param.data_ptr<scalar_t>(), *mp = m.data_ptr<scalar_t>(), *vp = v.data_ptr<scalar_t>();
    const scalar_t *g = grad.data_ptr<scalar_t>();
    const scalar_t b1 = beta1, a1 = 1 - beta1, b2 = beta2, a2 = 1 - beta2, sc2 = c2, e = eps, st = step;
    at::parallel_for(0, param.numel(), 1 << 15, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; i++) {
        const scalar_t gi = g[i], mi = mp[i] * b1 + a1 * gi, vi = vp[i] * b2 + a2 * gi * gi;
        mp[i] = mi;
        vp[i] = vi;
        p[i] += st * (mi / (std::sqrt(vi) * sc2 + e));
      }
    });
  });
}

} // namespace

TORCH_LIBRARY(tlbo, m) {
  m.def("softplus_pair_sum(Tensor p, Tensor n, Tensor wp, Tensor wn) -> Tensor");
  m.def("graph_gru(Tensor xz, Tensor xr, Tensor xh, Tensor wz, Tensor ur, Tensor wh, Tensor label, Tensor src, "
        "Tensor dst, int[] levels, int[] pair_levels, bool tanh) -> Tensor");
  m.def("adam_step_(Tensor(a!) param, Tensor grad, Tensor(b!) exp_avg, Tensor(c!) exp_avg_sq, float lr, float beta1, "
        "float beta2, float eps, float bias_correction1, float bias_correction2) -> ()");
}

TORCH_LIBRARY_IMPL(tlbo, CompositeImplicitAutograd, m) {
  m.impl("softplus_pair_sum", softplusPairSum);
  m.impl("graph_gru", graphGru);
  m.impl("adam_step_", adamStep);
}
