package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// The pair groups of Fig. 2, in the order of DistanceResult's arrays.
const (
	HighHigh = iota
	LowLow
	HighLow
)

// GroupNames names the pair groups.
var GroupNames = [3]string{"high-high", "low-low", "high-low"}

// DistanceOptions configure the Fig. 2 protocol.
type DistanceOptions struct {
	// MaxPairs bounds the pairs per group: a group with more pairs is
	// represented by MaxPairs pairs drawn uniformly with replacement
	// (0: 1,000,000).
	MaxPairs int
	// Bins is the number of histogram bins (0: 50).
	Bins int
	// Seed determines the sampled pairs.
	Seed uint64
}

func (o DistanceOptions) withDefaults() DistanceOptions {
	if o.MaxPairs == 0 {
		o.MaxPairs = 1_000_000
	}
	if o.Bins == 0 {
		o.Bins = 50
	}
	return o
}

// DistanceResult is the outcome of the protocol on one set of latent points.
type DistanceResult struct {
	// Median is the median score; High and Low the sizes of the halves.
	Median    float64
	High, Low int
	// Pairs is the number of pairs per group (all, or the sample) and
	// Sampled whether they were sampled.
	Pairs   [3]int
	Sampled [3]bool
	// Mean and Std are the mean and standard deviation of each group's
	// distances.
	Mean, Std [3]float64
	// Edges are the common bin edges (Bins + 1, from 0 to the largest
	// distance) and Density each group's normalised histogram (it
	// integrates to 1).
	Edges   []float64
	Density [3][]float64
}

// LatentDistances runs the Fig. 2 protocol: the points are split at the
// median score into a high and a low half (by rank, so that ties at the
// median cannot unbalance them; the middle point of an odd count goes to
// the high half), and the Euclidean distances of all pairs within the high
// half, within the low half and across are summarised as normalised
// histograms on common bins.
func LatentDistances(z *mat.Dense, y []float64, o DistanceOptions) (DistanceResult, error) {
	o = o.withDefaults()
	n, _, err := checkLatents(z, y)
	if err != nil {
		return DistanceResult{}, err
	}
	if o.MaxPairs < 1 || o.Bins < 1 {
		return DistanceResult{}, fmt.Errorf("analysis: max pairs %d and bins %d, want >= 1", o.MaxPairs, o.Bins)
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return y[order[a]] < y[order[b]] })
	low, high := order[:n/2], order[n/2:]
	sorted := make([]float64, n)
	for i, j := range order {
		sorted[i] = y[j]
	}
	res := DistanceResult{Median: median(sorted), High: len(high), Low: len(low)}
	rng := rand.New(rand.NewPCG(o.Seed, 0xd15))
	var dist [3][]float64
	dist[HighHigh], res.Sampled[HighHigh] = withinPairs(z, high, o.MaxPairs, rng)
	dist[LowLow], res.Sampled[LowLow] = withinPairs(z, low, o.MaxPairs, rng)
	dist[HighLow], res.Sampled[HighLow] = acrossPairs(z, high, low, o.MaxPairs, rng)
	top := 0.0
	for g := range dist {
		res.Pairs[g] = len(dist[g])
		if len(dist[g]) > 0 {
			res.Mean[g], res.Std[g] = stat.MeanStdDev(dist[g], nil)
			top = math.Max(top, floats.Max(dist[g]))
		}
	}
	if top == 0 {
		top = 1
	}
	res.Edges = make([]float64, o.Bins+1)
	floats.Span(res.Edges, 0, top)
	for g := range dist {
		res.Density[g] = density(dist[g], res.Edges)
	}
	return res, nil
}

// median returns the median of sorted values (the mean of the middle two
// for an even count, as numpy's).
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// distance is the Euclidean distance of rows i and j of z.
func distance(z *mat.Dense, i, j int) float64 {
	return floats.Distance(z.RawRowView(i), z.RawRowView(j), 2)
}

// withinPairs returns the distances of all pairs of idx, or of max pairs
// drawn uniformly with replacement when there are more.
func withinPairs(z *mat.Dense, idx []int, maxPairs int, rng *rand.Rand) ([]float64, bool) {
	m := len(idx)
	if m < 2 {
		return nil, false
	}
	if total := m * (m - 1) / 2; total <= maxPairs {
		out := make([]float64, 0, total)
		for a := range m {
			for b := a + 1; b < m; b++ {
				out = append(out, distance(z, idx[a], idx[b]))
			}
		}
		return out, false
	}
	out := make([]float64, maxPairs)
	for k := range out {
		a := rng.IntN(m)
		b := rng.IntN(m - 1)
		if b >= a {
			b++
		}
		out[k] = distance(z, idx[a], idx[b])
	}
	return out, true
}

// acrossPairs returns the distances of all pairs (a in p, b in q), or of
// max pairs drawn uniformly with replacement when there are more.
func acrossPairs(z *mat.Dense, p, q []int, maxPairs int, rng *rand.Rand) ([]float64, bool) {
	if len(p) == 0 || len(q) == 0 {
		return nil, false
	}
	if total := len(p) * len(q); total <= maxPairs {
		out := make([]float64, 0, total)
		for _, a := range p {
			for _, b := range q {
				out = append(out, distance(z, a, b))
			}
		}
		return out, false
	}
	out := make([]float64, maxPairs)
	for k := range out {
		out[k] = distance(z, p[rng.IntN(len(p))], q[rng.IntN(len(q))])
	}
	return out, true
}

// density returns the histogram of v on edges, normalised to integrate to
// 1 (all zeros for no values); the last bin includes its upper edge.
func density(v, edges []float64) []float64 {
	bins := len(edges) - 1
	out := make([]float64, bins)
	if len(v) == 0 {
		return out
	}
	width := edges[1] - edges[0]
	for _, x := range v {
		b := min(int(x/width), bins-1)
		out[b]++
	}
	for b := range out {
		out[b] /= float64(len(v)) * width
	}
	return out
}
