// Package weighting holds the sample weights of weighted retraining (Tripp et
// al. 2020): rank weights and a weighted sampler with replacement. It is pure
// Go, so that both the VAE training (models) and the BO loop (internal/bo) use
// the same implementation without linking libtorch.
package weighting

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// RankWeights returns the rank-based weights of Tripp et al. (2020),
// w_i = 1 / (k N + rank_i), where rank 0 is the best score (the largest when
// maximize, else the smallest) and N = len(scores). Ties are ranked in index
// order. k = +Inf gives uniform weights (all 1). NaN scores mark unlabelled
// points (the semi-supervised setting): they share the rank just below the
// worst labelled point, L = the number of labelled points.
func RankWeights(scores []float64, k float64, maximize bool) ([]float64, error) {
	if len(scores) == 0 {
		return nil, fmt.Errorf("rank weights: no scores")
	}
	if !(k > 0) {
		return nil, fmt.Errorf("rank weights: k = %v, want k > 0 (or +Inf for uniform weights)", k)
	}
	w := make([]float64, len(scores))
	if math.IsInf(k, 1) {
		for i := range w {
			w[i] = 1
		}
		return w, nil
	}
	var labelled []int
	for i, s := range scores {
		if math.IsInf(s, 0) {
			return nil, fmt.Errorf("rank weights: score %d is %v", i, s)
		}
		if !math.IsNaN(s) {
			labelled = append(labelled, i)
		}
	}
	sort.SliceStable(labelled, func(a, b int) bool {
		if maximize {
			return scores[labelled[a]] > scores[labelled[b]]
		}
		return scores[labelled[a]] < scores[labelled[b]]
	})
	kN := k * float64(len(scores))
	unlabelled := 1 / (kN + float64(len(labelled)))
	for i := range w {
		w[i] = unlabelled
	}
	for rank, i := range labelled {
		w[i] = 1 / (kN + float64(rank))
	}
	return w, nil
}

// WeightedSampler draws indices with replacement with probability proportional
// to their weights (as torch's WeightedRandomSampler), from a seeded Go RNG.
type WeightedSampler struct {
	cum []float64 // cumulative weights; cum[len-1] is the total
	rng *rand.Rand
}

// NewWeightedSampler checks the weights (finite, >= 0, positive total) and
// returns a sampler drawing from rng.
func NewWeightedSampler(weights []float64, rng *rand.Rand) (*WeightedSampler, error) {
	if len(weights) == 0 {
		return nil, fmt.Errorf("weighted sampler: no weights")
	}
	cum := make([]float64, len(weights))
	total := 0.0
	for i, w := range weights {
		if !(w >= 0) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("weighted sampler: weight %d is %v, want finite and >= 0", i, w)
		}
		total += w
		cum[i] = total
	}
	if !(total > 0) {
		return nil, fmt.Errorf("weighted sampler: weights sum to %v, want > 0", total)
	}
	return &WeightedSampler{cum: cum, rng: rng}, nil
}

// Sample returns n indices drawn with replacement.
func (s *WeightedSampler) Sample(n int) []int {
	out := make([]int, n)
	total := s.cum[len(s.cum)-1]
	for i := range out {
		u := s.rng.Float64() * total
		j := sort.SearchFloat64s(s.cum, u)
		// SearchFloat64s finds cum[j] >= u; skip zero-weight entries that tie.
		for j < len(s.cum)-1 && s.cum[j] <= u {
			j++
		}
		out[i] = j
	}
	return out
}
