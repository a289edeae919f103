package weighting_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tlbo-native/tlbo-native/models/weighting"
)

// Rank weights w_i = 1/(kN + rank_i), rank 0 the best score: with k = 1 and
// N = 3 the best point weighs 1/3, the worst 1/5; k = +Inf weighs all alike,
// and an unlabelled point (NaN) ranks just below the worst labelled one.
func ExampleRankWeights() {
	scores := []float64{3, 1, 2}
	show := func(what string, w []float64, err error) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-12s %.4f\n", what, w)
	}
	w, err := weighting.RankWeights(scores, 1, true)
	show("maximise", w, err)
	w, err = weighting.RankWeights(scores, 1, false)
	show("minimise", w, err)
	w, err = weighting.RankWeights(scores, math.Inf(1), true)
	show("k = inf", w, err)
	w, err = weighting.RankWeights([]float64{3, math.NaN(), 2}, 1, true)
	show("unlabelled", w, err)
	// Output:
	// maximise     [0.3333 0.2000 0.2500]
	// minimise     [0.2000 0.3333 0.2500]
	// k = inf      [1.0000 1.0000 1.0000]
	// unlabelled   [0.3333 0.2000 0.2500]
}

// Mini-batches are drawn with replacement in proportion to the weights, as
// torch's WeightedRandomSampler; a seeded generator gives the same draws.
func ExampleWeightedSampler() {
	s, err := weighting.NewWeightedSampler([]float64{1, 3, 0}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	counts := make([]int, 3)
	for _, i := range s.Sample(100000) {
		counts[i]++
	}
	fmt.Printf("shares %.2f %.2f %.2f\n", float64(counts[0])/1e5, float64(counts[1])/1e5, float64(counts[2])/1e5)
	// Output:
	// shares 0.25 0.75 0.00
}
