package models

import (
	"fmt"
	"math"

	"github.com/tlbo-native/tlbo-native/torch"
)

// MetricKind names a deep-metric-learning loss (DESIGN.md section 4).
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
// Positives are the pairs with dy < Eta and negatives those with dy >= Eta
// (DESIGN.md); the reference code counts dy == Eta as positive, which only
// matters for exact ties.
type Metric struct {
	Kind MetricKind `json:"kind"`
	// Eta splits positives (dy < Eta) from negatives (dy >= Eta); in (0, 1).
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
// computed from differences (exact on the diagonal, unlike the matmul form).
func pairSquares(z *torch.Tensor) *torch.Tensor {
	diff := z.Unsqueeze(1).Sub(z.Unsqueeze(0))
	return diff.Square().SumDims([]int64{2}, false)
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
// distance, a positive pair (dy < eta) costs
// ReLU[(max(eta, dz)/eta) (min(eta, dz) - dy)] and a negative pair (dy >= eta)
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
	positive := dy.LtScalar(eta)
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

// tripletDiffs returns, for the valid triplets (anchor i, positive j,
// negative k) in row-major (i, j, k) order, dz_ij - dz_ik and the weight
// products wp_ij wn_ik, as 1-d tensors. Positives are j != i with
// dy_ij < eta and negatives k with dy_ik >= eta (so k != i); wp and wn (B, B)
// may be nil for weights 1. Only the valid triplets are gathered (a (B, B, B)
// bool mask is the one cubic tensor), so the costly terms see no others.
func tripletDiffs(z, dz, dy *torch.Tensor, b int64, eta float64, wp, wn *torch.Tensor) (diff, w *torch.Tensor) {
	pos := dy.LtScalar(eta).LogicalAnd(offDiagonal(z, b))
	neg := dy.GeScalar(eta)
	idx := pos.Unsqueeze(2).LogicalAnd(neg.Unsqueeze(1)).Nonzero() // (V, 3): i, j, k
	ij, ik := flatPairs(z, idx, b)
	at := func(m, index *torch.Tensor) *torch.Tensor { return m.Reshape(-1).IndexSelect(0, index) }
	diff = at(dz, ij).Sub(at(dz, ik))
	if wp != nil {
		w = at(wp, ij).Mul(at(wn, ik))
	}
	return diff, w
}

// flatPairs returns, for the rows (a, i, j) of the int64 (V, 3) idx, the flat
// indices a*B + i and a*B + j into a (B, B) matrix.
func flatPairs(z, idx *torch.Tensor, b int64) (ai, aj *torch.Tensor) {
	// An integer product: no float rounding of the indices.
	stride := own(z, torch.FromInt64([]int64{b}, []int64{}...)).To(z.Device())
	a := idx.Select(1, 0).Mul(stride)
	return a.Add(idx.Select(1, 1)), a.Add(idx.Select(1, 2))
}

// SoftTripletLoss is the soft triplet loss of T-LBO: over anchors i, positives j
// (j != i, dy_ij < eta) and negatives k (dy_ik >= eta), the sum of
// softplus(dz_ij - dz_ik) w_p w_n with w_p = f(eta - dy_ij)/f(eta),
// w_n = f(dy_ik - eta)/f(1 - eta), f(a) = tanh(a/(2 nu)), divided by the
// number of strictly positive terms. nu = 0 means unset: w_p = w_n = 1.
func SoftTripletLoss(z, y *torch.Tensor, eta, nu float64) *torch.Tensor {
	b, err := checkPair("soft triplet loss", z, y)
	if err != nil {
		return torch.ErrTensor(err)
	}
	dz, dy := pairDistances(z, y)
	var wp, wn *torch.Tensor
	if nu > 0 {
		f := func(t *torch.Tensor) *torch.Tensor { return t.DivScalar(2 * nu).Tanh() }
		wp = f(dy.RSubScalar(eta)).DivScalar(math.Tanh(eta / (2 * nu)))
		wn = f(dy.AddScalar(-eta)).DivScalar(math.Tanh((1 - eta) / (2 * nu)))
	}
	diff, w := tripletDiffs(z, dz, dy, b, eta, wp, wn)
	terms := diff.Softplus()
	if w != nil {
		terms = terms.Mul(w)
	}
	return meanOverPositive(terms)
}

// HardTripletLoss is the triplet loss with a margin: over the triplets of
// SoftTripletLoss, the sum of ReLU(margin + dz_ij - dz_ik), divided by the
// number of strictly positive terms.
func HardTripletLoss(z, y *torch.Tensor, eta, margin float64) *torch.Tensor {
	b, err := checkPair("hard triplet loss", z, y)
	if err != nil {
		return torch.ErrTensor(err)
	}
	dz, dy := pairDistances(z, y)
	diff, _ := tripletDiffs(z, dz, dy, b, eta, nil, nil)
	return meanOverPositive(diff.AddScalar(margin).Relu())
}

// Constants of the log-ratio loss, as in the reference: the squared latent
// distance is shifted by logRatioDistEps/B before the square root, and both
// distances by logRatioLogEps before the logarithm (labels can tie).
const (
	logRatioDistEps = 1e-4
	logRatioLogEps  = 1e-6
)

// LogRatioLoss is the log-ratio loss (Kim et al. 2019): over anchors a and
// pairs (i, j) of other points with dy_ai < dy_aj, the sum of
// (log dz_ai - log dz_aj - log dy_ai + log dy_aj)^2 divided by the number of
// such triplets, with dz = sqrt(|z_a - z_i|^2 + 1e-4/B) and 1e-6 added to both
// distances inside the logarithms (the reference's guards).
//
// With u = log dz - log dy (B, B) and M the (B, B, B) 0/1 mask of valid
// triplets, the sum is expanded as sum u_ai^2 (r_ai + c_ai) - 2 sum_a u_a M_a u_a
// (r, c the row and column counts of M), so that the cubic work is one batched
// matrix product instead of elementwise logarithms and squares.
func LogRatioLoss(z, y *torch.Tensor) *torch.Tensor {
	b, err := checkPair("log-ratio loss", z, y)
	if err != nil {
		return torch.ErrTensor(err)
	}
	dz := pairSquares(z).AddScalar(logRatioDistEps / float64(b)).Sqrt()
	dy := y.Unsqueeze(1).Sub(y.Unsqueeze(0)).Abs()
	u := dz.AddScalar(logRatioLogEps).Log().Sub(dy.AddScalar(logRatioLogEps).Log())
	var mask, counts, n *torch.Tensor
	torch.NoGrad(func() {
		off := offDiagonal(z, b)
		mask = dy.Unsqueeze(2).Lt(dy.Unsqueeze(1)).
			LogicalAnd(off.Unsqueeze(2)).LogicalAnd(off.Unsqueeze(1)).ToDType(u.DType()) // [a, i, j]
		counts = mask.SumDims([]int64{2}, false).Add(mask.SumDims([]int64{1}, false))
		n = mask.Sum().ClampMin(1)
	})
	cross := u.Unsqueeze(1).Bmm(mask).Squeeze(1).Mul(u).Sum()
	return u.Square().Mul(counts).Sum().Sub(cross.MulScalar(2)).Div(n)
}
