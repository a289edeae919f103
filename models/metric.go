package models

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/tlbo-native/tlbo-native/torch"
)

// MetricKind names a deep-metric-learning loss (docs/design.md section 4).
type MetricKind string

// The metric losses.
const (
	// MetricNone adds no metric term.
	MetricNone MetricKind = ""
	// MetricSimple is w_ij |dz_ij - dy_ij| over pairs (S-LBO).
	MetricSimple MetricKind = "simple"
	// MetricContrastive is the paper's soft contrastive loss (C-LBO).
	MetricContrastive MetricKind = "contrastive"
	// MetricHardContrastive is the hard contrastive loss: dz for positives,
	// ReLU(dy - dz) for negatives.
	MetricHardContrastive MetricKind = "hard-contrastive"
	// MetricTriplet is the soft triplet loss, smoothed by the temperature Nu when
	// it is set (T-LBO).
	MetricTriplet MetricKind = "triplet"
	// MetricHardTriplet is the triplet loss ReLU(margin + dz_ij - dz_ik).
	MetricHardTriplet MetricKind = "hard-triplet"
	// MetricLogRatio is the log-ratio loss of Kim et al. (2019) (LR-LBO).
	MetricLogRatio MetricKind = "log-ratio"
)

// Metric is a metric loss with its parameters. The labels it receives are the
// min-max normalised labels of the current training set, in [0, 1].
//
// Positives are the pairs with dy <= Eta and negatives those with dy > Eta,
// as the authors' code (metrics.py) splits them; the paper writes dy < eta,
// which differs only for exact ties. We follow the code, which made the
// paper's numbers (docs/design.md section 11).
type Metric struct {
	Kind MetricKind `json:"kind"`
	// Eta splits positives (dy <= Eta) from negatives (dy > Eta); in (0, 1).
	Eta float64 `json:"eta"`
	// Nu is the smoothing temperature of the soft triplet loss; 0 means unset
	// (w_p = w_n = 1).
	Nu float64 `json:"nu,omitempty"`
	// Margin is the margin of the hard triplet loss.
	Margin float64 `json:"margin,omitempty"`
}

// Validate checks the parameters the kind uses.
func (m Metric) Validate() error {
	switch m.Kind {
	case MetricNone, MetricSimple, MetricLogRatio:
		return nil
	case MetricContrastive, MetricHardContrastive, MetricTriplet, MetricHardTriplet:
	default:
		return fmt.Errorf("metric loss: unknown kind %q", m.Kind)
	}
	if !(m.Eta > 0 && m.Eta < 1) {
		return fmt.Errorf("metric loss %s: eta = %v, want 0 < eta < 1", m.Kind, m.Eta)
	}
	if m.Kind == MetricTriplet && (m.Nu < 0 || math.IsNaN(m.Nu) || math.IsInf(m.Nu, 0)) {
		return fmt.Errorf("metric loss %s: nu = %v, want nu > 0 (or 0 for unset)", m.Kind, m.Nu)
	}
	if m.Kind == MetricHardTriplet && !(m.Margin >= 0) {
		return fmt.Errorf("metric loss %s: margin = %v, want >= 0", m.Kind, m.Margin)
	}
	return nil
}

// Loss returns the metric loss of latent samples z (B, d) with normalised
// labels y (B) as a scalar tensor; the zero loss when Kind is MetricNone.
func (m Metric) Loss(z, y *torch.Tensor) *torch.Tensor {
	if err := m.Validate(); err != nil {
		return torch.ErrTensor(err)
	}
	switch m.Kind {
	case MetricSimple:
		return SimpleLoss(z, y, nil)
	case MetricContrastive:
		return ContrastiveLoss(z, y, m.Eta, false)
	case MetricHardContrastive:
		return ContrastiveLoss(z, y, m.Eta, true)
	case MetricTriplet:
		return SoftTripletLoss(z, y, m.Eta, m.Nu)
	case MetricHardTriplet:
		return HardTripletLoss(z, y, m.Eta, m.Margin)
	case MetricLogRatio:
		return LogRatioLoss(z, y)
	}
	return z.Sum().MulScalar(0)
}

// checkPair checks z (B, d) and y (B) and returns B.
func checkPair(name string, z, y *torch.Tensor) (int64, error) {
	if err := z.Err(); err != nil {
		return 0, err
	}
	if err := y.Err(); err != nil {
		return 0, err
	}
	zs, ys := z.Shape(), y.Shape()
	if len(zs) != 2 || len(ys) != 1 || zs[0] != ys[0] {
		return 0, fmt.Errorf("%s: want z of shape (B, d) and y of shape (B), got %v and %v", name, zs, ys)
	}
	return zs[0], nil
}

// own adopts a factory-made tensor into ref's scope, if ref has one.
func own(ref, t *torch.Tensor) *torch.Tensor {
	if sc := ref.Scope(); sc != nil {
		return sc.Own(t)
	}
	return t
}

// pairDistances returns the Euclidean distances dz (B, B) between the rows of
// z, with a zero gradient where two rows coincide (as torch.cdist), and the
// label distances dy = |y_i - y_j|.
func pairDistances(z, y *torch.Tensor) (dz, dy *torch.Tensor) {
	sq := pairSquares(z)
	nonzero := sq.GtScalar(0)
	safe := torch.Where(nonzero, sq, sq.OnesLike())
	dz = torch.Where(nonzero, safe.Sqrt(), sq.ZerosLike())
	dy = y.Unsqueeze(1).Sub(y.Unsqueeze(0)).Abs()
	return dz, dy
}

// pairSquares returns the squared Euclidean distances between the rows of z,
// computed from differences (exact on the diagonal and for close points,
// unlike the matmul form |a|^2 + |b|^2 - 2 a.b). The gradient is routed
// through the matmul form, which has the same derivative, 2 (z_i - z_j), so
// that autograd keeps no (B, B, d) tensor: its backward is two small matrix
// products instead of reductions over B^2 d entries.
func pairSquares(z *torch.Tensor) *torch.Tensor {
	var exact *torch.Tensor
	torch.NoGrad(func() {
		diff := z.Unsqueeze(1).Sub(z.Unsqueeze(0))
		exact = diff.Square().SumDims([]int64{2}, false)
	})
	if !z.RequiresGrad() || !torch.GradEnabled() {
		return exact
	}
	norms := z.Square().SumDims([]int64{1}, true)
	mm := norms.Add(norms.Transpose(0, 1)).Sub(z.MatMul(z.Transpose(0, 1)).MulScalar(2))
	return exact.Add(mm.Sub(mm.Detach())) // the exact values, mm's gradient
}

// meanOverPositive divides the sum of loss by the number of its strictly
// positive entries (at least 1), the reference's normalisation.
func meanOverPositive(loss *torch.Tensor) *torch.Tensor {
	n := loss.GtScalar(0).ToDType(loss.DType()).Sum().ClampMin(1)
	return loss.Sum().Div(n)
}

// offDiagonal returns the (B, B) bool mask of i != j on z's device.
func offDiagonal(z *torch.Tensor, b int64) *torch.Tensor {
	return own(z, torch.Eye(b, z.DType(), z.Device())).EqScalar(0)
}

// SimpleLoss is the simple metric loss: the sum over pairs i < j of
// w_ij |dz_ij - dy_ij|, divided by the number of strictly positive terms.
// pairWeights (B, B) may be nil for w_ij = 1; the training loop passes nil,
// because the sample weights already act through weighted sampling.
func SimpleLoss(z, y, pairWeights *torch.Tensor) *torch.Tensor {
	if _, err := checkPair("simple loss", z, y); err != nil {
		return torch.ErrTensor(err)
	}
	dz, dy := pairDistances(z, y)
	loss := dz.Sub(dy).Abs()
	if pairWeights != nil {
		loss = loss.Mul(pairWeights)
	}
	return meanOverPositive(loss.Triu(1))
}

// ContrastiveLoss is the contrastive metric loss over pairs i < j, divided by
// the number of strictly positive terms. With dz the latent and dy the label
// distance, a positive pair (dy <= eta) costs
// ReLU[(max(eta, dz)/eta) (min(eta, dz) - dy)] and a negative pair (dy > eta)
// ReLU[(2 - min(eta, dz)/eta) (dy - max(eta, dz))] (the soft variant), or dz,
// resp. ReLU(dy - dz) (hard).
//
// The soft variant follows the paper (Grosnit et al. 2022, App. B). The
// reference code computes (2 - min(eta, dz))/eta for negatives instead of
// 2 - min(eta, dz)/eta (an operator-precedence slip); this is not reproduced.
func ContrastiveLoss(z, y *torch.Tensor, eta float64, hard bool) *torch.Tensor {
	if _, err := checkPair("contrastive loss", z, y); err != nil {
		return torch.ErrTensor(err)
	}
	dz, dy := pairDistances(z, y)
	positive := dy.LeScalar(eta)
	var pos, neg *torch.Tensor
	if hard {
		pos = dz
		neg = dy.Sub(dz)
	} else {
		hi, lo := dz.ClampMin(eta), dz.ClampMax(eta)
		pos = hi.DivScalar(eta).Mul(lo.Sub(dy))
		neg = lo.DivScalar(eta).RSubScalar(2).Mul(dy.Sub(hi))
	}
	loss := torch.Where(positive, pos, neg).Relu()
	return meanOverPositive(loss.Triu(1))
}

// tripletChunkElems bounds the size of the (anchors, positives, negatives)
// block one chunk of the triplet losses materialises: small enough for its
// few passes to stay in cache, large enough that the per-op overhead does not
// dominate (on a batch of 256 with latent 25, 2^14 to 2^19 were tried on CPU;
// 2^18 was fastest, 2^14 twice as slow).
const tripletChunkElems = 1 << 18

// padDistance replaces the distances of the padding entries of the triplet
// blocks: a positive at -padDistance or a negative at +padDistance makes
// dz_ij - dz_ik so negative that softplus and ReLU are exactly 0, with a zero
// gradient, so padding adds nothing to the sums or the counts.
const padDistance = 1e30

// triplets holds, for each anchor that has both a positive and a negative, its
// latent distances to its positives (first) and to its negatives, padded to
// common widths, and the weights on the same entries (nil for weights 1).
// Anchors are sorted by their number of positives, so that chunks of
// consecutive anchors need little padding.
type triplets struct {
	dp, dn *torch.Tensor // (A, maxP) and (A, maxN) distances
	wp, wn *torch.Tensor // the weights on the same entries, or nil
	np, nn []int64       // the positive and negative count of each anchor
}

// tripletSets gathers the triplets of a batch: positives j of anchor i are the
// j != i with posW_ij > 0 and negatives the k with negW_ik > 0; posW and negW
// (B, B) are 0/1 masks, or the weights w_p and w_n set to 0 outside the sets.
// Only (B, B)-sized tensors are gathered here.
func tripletSets(dz, posW, negW *torch.Tensor, weighted bool) triplets {
	var t triplets
	var perm, pOrder, nOrder, pPad, nPad *torch.Tensor
	var maxP, maxN int64
	torch.NoGrad(func() {
		b := dz.Shape()[0]
		pm := posW.GtScalar(0).LogicalAnd(offDiagonal(dz, b))
		nm := negW.GtScalar(0)
		np, err1 := pm.SumDims([]int64{1}, false).Int64s()
		nn, err2 := nm.SumDims([]int64{1}, false).Int64s()
		if err := errors.Join(err1, err2); err != nil {
			t.dp = torch.ErrTensor(err)
			return
		}
		var anchors []int64
		for i := range np {
			if np[i] > 0 && nn[i] > 0 {
				anchors = append(anchors, int64(i))
			}
		}
		slices.SortStableFunc(anchors, func(a, c int64) int { return cmp.Compare(np[a], np[c]) })
		for _, i := range anchors {
			t.np, t.nn = append(t.np, np[i]), append(t.nn, nn[i])
			maxP, maxN = max(maxP, np[i]), max(maxN, nn[i])
		}
		if len(anchors) == 0 {
			return
		}
		perm = own(dz, torch.FromInt64(anchors, int64(len(anchors)))).To(dz.Device())
		pm, nm = pm.IndexSelect(0, perm), nm.IndexSelect(0, perm)
		// Members first in every row: a sort of the 0/1 masks.
		_, pOrder = pm.ToDType(dz.DType()).Sort(1, true)
		_, nOrder = nm.ToDType(dz.DType()).Sort(1, true)
		pOrder, nOrder = pOrder.Narrow(1, 0, maxP), nOrder.Narrow(1, 0, maxN)
		pPad = pm.Gather(1, pOrder).LogicalNot()
		nPad = nm.Gather(1, nOrder).LogicalNot()
	})
	if perm == nil {
		return t
	}
	rows := dz.IndexSelect(0, perm)
	t.dp = rows.Gather(1, pOrder).MaskedFill(pPad, -padDistance)
	t.dn = rows.Gather(1, nOrder).MaskedFill(nPad, padDistance)
	if weighted {
		t.wp = posW.IndexSelect(0, perm).Gather(1, pOrder)
		t.wn = negW.IndexSelect(0, perm).Gather(1, nOrder)
	}
	return t
}

// chunks splits the anchors 0..len(np)-1 into runs [start, end) whose padded
// blocks (anchors x max positives x max negatives) hold at most
// tripletChunkElems entries, or one anchor.
func (t triplets) chunks() [][2]int {
	var out [][2]int
	for s := 0; s < len(t.np); {
		e, p, n := s+1, t.np[s], t.nn[s]
		for e < len(t.np) {
			p2, n2 := max(p, t.np[e]), max(n, t.nn[e])
			if int64(e+1-s)*p2*n2 > tripletChunkElems {
				break
			}
			e, p, n = e+1, p2, n2
		}
		out = append(out, [2]int{s, e})
		s = e
	}
	return out
}

// split cuts the sets' rows into the chunks' anchors: one split per tensor,
// whose backward assembles the gradient once, where a narrow per chunk would
// make a gradient of the whole tensor for every chunk (O(B^3) for a batch of
// B). The weights are nil when the sets have none.
func (t triplets) split(chunks [][2]int) (dp, dn, wp, wn []*torch.Tensor, err error) {
	sizes := make([]int64, len(chunks))
	for i, c := range chunks {
		sizes[i] = int64(c[1] - c[0])
	}
	var errs [4]error
	dp, errs[0] = t.dp.SplitSizes(sizes, 0)
	dn, errs[1] = t.dn.SplitSizes(sizes, 0)
	if t.wp != nil {
		wp, errs[2] = t.wp.SplitSizes(sizes, 0)
		wn, errs[3] = t.wn.SplitSizes(sizes, 0)
	}
	return dp, dn, wp, wn, errors.Join(errs[:]...)
}

// tripletLoss returns sum over triplets of term(dz_ij - dz_ik) w_p w_n divided
// by the number of strictly positive summands (at least 1), computed over
// chunks of anchors so that no (B, B, B) tensor is formed. fused says that
// term is softplus: the chunks' sums are then taken by torch.SoftplusPairSum
// and the summands counted by positiveSoftplusCount.
func tripletLoss(dz *torch.Tensor, t triplets, term func(*torch.Tensor) *torch.Tensor, fused bool) *torch.Tensor {
	if t.dp == nil {
		return dz.Sum().MulScalar(0)
	}
	if err := t.dp.Err(); err != nil {
		return torch.ErrTensor(err)
	}
	chunks := t.chunks()
	dps, dns, wps, wns, err := t.split(chunks)
	if err != nil {
		return torch.ErrTensor(err)
	}
	var parts, counts []*torch.Tensor
	if fused {
		counts = append(counts, t.positiveSoftplusCount(underflowLog(dz.DType())))
	}
	for i, c := range chunks {
		p, q := slices.Max(t.np[c[0]:c[1]]), slices.Max(t.nn[c[0]:c[1]])
		dp, dn := dps[i].Narrow(1, 0, p), dns[i].Narrow(1, 0, q)
		var wp, wn *torch.Tensor
		if wps != nil {
			wp, wn = wps[i].Narrow(1, 0, p), wns[i].Narrow(1, 0, q)
		}
		if fused {
			if wp == nil {
				wp, wn = dp.OnesLike(), dn.OnesLike()
			}
			parts = append(parts, torch.SoftplusPairSum(dp, dn, wp, wn))
			continue
		}
		terms := term(dp.Unsqueeze(2).Sub(dn.Unsqueeze(1))) // (n, p, q)
		if wp != nil {
			// sum_jk terms_ijk wn_ik wp_ij as a batched matrix-vector product.
			parts = append(parts, terms.Bmm(wn.Unsqueeze(2)).Squeeze(2).Mul(wp).Sum())
		} else {
			parts = append(parts, terms.Sum())
		}
		torch.NoGrad(func() {
			if wp != nil { // the summands as rounded one by one: term * (w_p w_n)
				terms = terms.Mul(wp.Unsqueeze(2).Mul(wn.Unsqueeze(1)))
			}
			counts = append(counts, terms.GtScalar(0).Sum())
		})
	}
	sum := torch.Stack(parts, 0).Sum()
	count := torch.Stack(counts, 0).Sum().ToDType(dz.DType()) // summed as integers
	return sum.Div(count.ClampMin(1))
}

// underflowLog is the log of half the smallest positive number of dtype dt
// (0 for a dtype torch.SoftplusPairSum does not take): a number whose exact
// value is above it rounds to a positive one.
func underflowLog(dt torch.DType) float64 {
	switch dt {
	case torch.Float32:
		return -150 * math.Ln2
	case torch.Float64:
		return -1075 * math.Ln2
	}
	return 0
}

// positiveSoftplusCount returns the number (an int64 scalar tensor) of the
// summands softplus(dp_j - dn_k) wp_j wn_k of the sets that round to a
// positive number, the reference's count, without forming them: a summand
// can round to 0 only where softplus(x) is exp(x) to all precision, so it
// counts when u_j - v_k > floor (underflowLog) with u = dp + log wp and
// v = dn - log wn. When the smallest u minus the largest v clears floor,
// every triplet counts; otherwise a search of each anchor's sorted v answers.
// Padding (distance -1e30 or +1e30, weight 0) never counts.
func (t triplets) positiveSoftplusCount(floor float64) *torch.Tensor {
	var count *torch.Tensor
	torch.NoGrad(func() {
		u, v := t.dp, t.dn
		if t.wp != nil {
			u, v = t.dp.Add(t.wp.Log()), t.dn.Sub(t.wn.Log())
		}
		lo := u.MaskedFill(u.LtScalar(-padDistance/2), math.Inf(1)).Min()
		hi := v.MaskedFill(v.GtScalar(padDistance/2), math.Inf(-1)).Max()
		gap, err := lo.Sub(hi).Item()
		if err != nil {
			count = torch.ErrTensor(err)
			return
		}
		if gap > floor {
			var all int64
			for a := range t.np {
				all += t.np[a] * t.nn[a]
			}
			count = own(t.dp, torch.FromInt64([]int64{all})).Squeeze(0).To(t.dp.Device()) // 0-d, as a sum
			return
		}
		sorted, _ := v.Sort(1, false)
		count = torch.SearchSorted(sorted, u.AddScalar(-floor), false).Sum()
	})
	return count
}

// SoftTripletLoss is the soft triplet loss of T-LBO: over anchors i, positives j
// (j != i, dy_ij <= eta) and negatives k (dy_ik > eta), the sum of
// softplus(dz_ij - dz_ik) w_p w_n with w_p = f(eta - dy_ij)/f(eta),
// w_n = f(dy_ik - eta)/f(1 - eta), f(a) = tanh(a/(2 nu)), divided by the
// number of strictly positive terms. nu = 0 means unset: w_p = w_n = 1.
func SoftTripletLoss(z, y *torch.Tensor, eta, nu float64) *torch.Tensor {
	if _, err := checkPair("soft triplet loss", z, y); err != nil {
		return torch.ErrTensor(err)
	}
	dz, dy := pairDistances(z, y)
	return tripletLoss(dz, softTripletSets(dz, dy, eta, nu), (*torch.Tensor).Softplus, underflowLog(dz.DType()) != 0)
}

// softTripletSets gathers the soft triplet loss's triplets of a batch from
// its latent and label distances, with nu's weights (none for nu = 0).
func softTripletSets(dz, dy *torch.Tensor, eta, nu float64) triplets {
	posW, negW := dy.LeScalar(eta).ToDType(dz.DType()), dy.GtScalar(eta).ToDType(dz.DType())
	if nu > 0 {
		f := func(t *torch.Tensor) *torch.Tensor { return t.DivScalar(2 * nu).Tanh() }
		posW = posW.Mul(f(dy.RSubScalar(eta)).DivScalar(math.Tanh(eta / (2 * nu))))
		negW = negW.Mul(f(dy.AddScalar(-eta)).DivScalar(math.Tanh((1 - eta) / (2 * nu))))
	}
	return tripletSets(dz, posW, negW, nu > 0)
}

// HardTripletLoss is the triplet loss with a margin: over the triplets of
// SoftTripletLoss, the sum of ReLU(margin + dz_ij - dz_ik), divided by the
// number of strictly positive terms.
func HardTripletLoss(z, y *torch.Tensor, eta, margin float64) *torch.Tensor {
	if _, err := checkPair("hard triplet loss", z, y); err != nil {
		return torch.ErrTensor(err)
	}
	dz, dy := pairDistances(z, y)
	t := tripletSets(dz, dy.LeScalar(eta).ToDType(dz.DType()), dy.GtScalar(eta).ToDType(dz.DType()), false)
	term := func(d *torch.Tensor) *torch.Tensor { return d.AddScalar(margin).Relu() }
	return tripletLoss(dz, t, term, false)
}

// Constants of the log-ratio loss, as in the reference: the squared latent
// distance is shifted by logRatioDistEps/B before the square root, and both
// distances by logRatioLogEps before the logarithm (labels can tie).
const (
	logRatioDistEps = 1e-4
	logRatioLogEps  = 1e-6
)

// logRatioChunkElems bounds the (anchors, B, B) mask of one chunk of the
// log-ratio loss (on a batch of 256, 2^16 to 2^30 were tried on CPU; 2^18 was
// fastest, 1.6 times faster than one chunk).
const logRatioChunkElems = 1 << 18

// LogRatioLoss is the log-ratio loss (Kim et al. 2019): over anchors a and
// pairs (i, j) of other points with dy_ai < dy_aj, the sum of
// (log dz_ai - log dz_aj - log dy_ai + log dy_aj)^2 divided by the number of
// such triplets, with dz = sqrt(|z_a - z_i|^2 + 1e-4/B) and 1e-6 added to both
// distances inside the logarithms (the reference's guards).
//
// With u = log dz - log dy (B, B), zeroed on the diagonal, and F the (B, B, B)
// 0/1 mask dy_ai < dy_aj, the sum over the valid triplets (i, j != a) is
// sum_a sum_ij F_aij (u_ai - u_aj)^2 - sum_{a, j} [dy_aj > 0] u_aj^2 (the
// entries i = a that F counts; those with j = a are never counted), expanded
// as u^2 . F 1 + 1 . F u^2 - 2 u . F u, so that the cubic work is one
// comparison and one batched product with (1, u, u^2), over chunks of
// anchors, instead of elementwise logarithms and squares.
func LogRatioLoss(z, y *torch.Tensor) *torch.Tensor {
	b, err := checkPair("log-ratio loss", z, y)
	if err != nil {
		return torch.ErrTensor(err)
	}
	dz := pairSquares(z).AddScalar(logRatioDistEps / float64(b)).Sqrt()
	dy := y.Unsqueeze(1).Sub(y.Unsqueeze(0)).Abs()
	var off, rowA *torch.Tensor
	torch.NoGrad(func() {
		off = offDiagonal(z, b).ToDType(z.DType())
		rowA = dy.GtScalar(0).ToDType(z.DType()) // the pairs (i = a, j) that F counts but M does not
	})
	// u with u_aa = 0, so that F's entries with i = a or j = a drop out of the
	// cross term; F 1, F u and F u² come from one batched product.
	u := dz.AddScalar(logRatioLogEps).Log().Sub(dy.AddScalar(logRatioLogEps).Log()).Mul(off)
	u2 := u.Square()
	cols := torch.Stack([]*torch.Tensor{off.OnesLike(), u, u2}, 2) // (B, B, 3)
	// Chunks of anchors keep the cubic mask small enough to stay in cache.
	step := max(1, logRatioChunkElems/(b*b))
	var parts, counts []*torch.Tensor
	for s := int64(0); s < b; s += step {
		c := min(step, b-s)
		var f *torch.Tensor
		torch.NoGrad(func() {
			dyc := dy.Narrow(0, s, c)
			f = dyc.Unsqueeze(2).Lt(dyc.Unsqueeze(1)).ToDType(u.DType()) // F[a, i, j] = dy_ai < dy_aj
		})
		prod := f.Bmm(cols.Narrow(0, s, c)) // (c, B, 3): F 1, F u, F u²
		rows, fu, fu2 := prod.Select(2, 0), prod.Select(2, 1), prod.Select(2, 2)
		uc, u2c := u.Narrow(0, s, c), u2.Narrow(0, s, c)
		parts = append(parts, u2c.Mul(rows).Sum().Add(fu2.Sum()).Sub(uc.Mul(fu).Sum().MulScalar(2)))
		torch.NoGrad(func() { counts = append(counts, rows.Mul(off.Narrow(0, s, c)).Sum()) })
	}
	var n *torch.Tensor
	torch.NoGrad(func() { n = torch.Stack(counts, 0).Sum().ClampMin(1) })
	return torch.Stack(parts, 0).Sum().Sub(u2.Mul(rowA).Sum()).Div(n)
}
