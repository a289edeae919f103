package analysis

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/tlbo-native/tlbo-native/internal/bo"
)

// PMOEvery is how often (in oracle calls) the PMO benchmark records the
// top-k mean (its freq_log).
const PMOEvery = 100

// TopKAUC returns the PMO benchmark's area under the curve of the top-k
// mean score against oracle calls, normalised by the budget (Gao et al.,
// NeurIPS 2022, mol_opt's top_auc with finish set): scores are the
// objective values of distinct molecules in the order they were called.
// Every `every` calls the mean of the k best scores so far (of all of them
// while fewer than k) is recorded; the area is the sum of the trapezoids
// between those records, starting from 0 before the first call, plus the
// trapezoid up to the last call, plus the last mean carried from there to
// the budget. Calls past the budget are not counted.
func TopKAUC(scores []float64, k, every, budget int) (float64, error) {
	switch {
	case k < 1 || every < 1 || budget < 1:
		return 0, fmt.Errorf("analysis: top-%d AUC every %d calls of a budget of %d: all must be at least 1", k, every, budget)
	case len(scores) == 0:
		return 0, errors.New("analysis: top-k AUC of a run without evaluations")
	}
	if len(scores) > budget {
		scores = scores[:budget]
	}
	sum, prev, called := 0.0, 0.0, 0
	for idx := every; idx < len(scores); idx += every {
		now := topKMean(scores[:idx], k)
		sum += float64(every) * (now + prev) / 2
		prev, called = now, idx
	}
	now := topKMean(scores, k)
	sum += float64(len(scores)-called) * (now + prev) / 2
	sum += float64(budget-len(scores)) * now
	return sum / float64(budget), nil
}

// topKMean is the mean of the k largest values (all when fewer).
func topKMean(v []float64, k int) float64 {
	s := append([]float64(nil), v...)
	sort.Sort(sort.Reverse(sort.Float64Slice(s)))
	if len(s) > k {
		s = s[:k]
	}
	m := 0.0
	for _, x := range s {
		m += x / float64(len(s))
	}
	return m
}

// TopKCurve returns the mean of the k best scores (of all while fewer than
// k) after each oracle call: element i is the top-k mean of scores[:i+1]
// (PMO's top-k curve, e.g. top-10 against oracle calls).
func TopKCurve(scores []float64, k int) []float64 {
	out := make([]float64, len(scores))
	top := make([]float64, 0, k+1) // the k best so far, descending
	for i, s := range scores {
		j := sort.Search(len(top), func(j int) bool { return top[j] < s })
		if j < k {
			top = append(top, 0)
			copy(top[j+1:], top[j:])
			top[j] = s
			if len(top) > k {
				top = top[:k]
			}
		}
		m := 0.0
		for _, x := range top {
			m += x / float64(len(top))
		}
		out[i] = m
	}
	return out
}

// PMORun is the PMO summary of one run.
type PMORun struct {
	Dir string
	// Calls is the number of oracle calls counted (initial calls, then
	// distinct evaluations; at most the budget), Initial the number of
	// them that were initial calls (bo.Curve.Initial).
	Calls, Initial int
	// Evaluations are the oracle calls counted, in order.
	Evaluations []bo.Evaluation
	// AUC maps k to the top-k AUC.
	AUC map[int]float64
	// Top are the best distinct evaluations, best first.
	Top []bo.Evaluation
}

// PMO summarises runs of a maximised objective as the PMO benchmark does:
// the top-k AUC for each k over budget oracle calls, and each run's top
// evaluations (nTop of them). A run's oracle calls are its initial calls
// (the labelled start when the objective scored it for the run, which PMO
// charges to the budget) followed by its distinct evaluations
// (bo.Curve.OracleCalls).
func PMO(curves []bo.Curve, ks []int, budget, nTop int) ([]PMORun, error) {
	var out []PMORun
	for _, c := range curves {
		if !c.Maximize {
			return nil, fmt.Errorf("analysis: %s minimises its objective; the PMO metrics are for maximised scores", c.Dir)
		}
		ev := c.OracleCalls()
		if len(ev) > budget {
			ev = ev[:budget]
		}
		scores := make([]float64, len(ev))
		for i, e := range ev {
			scores[i] = e.Score
		}
		r := PMORun{Dir: c.Dir, Calls: len(ev), Initial: min(len(c.Initial), len(ev)), Evaluations: ev, AUC: map[int]float64{}}
		for _, k := range ks {
			auc, err := TopKAUC(scores, k, PMOEvery, budget)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.Dir, err)
			}
			r.AUC[k] = auc
		}
		r.Top = TopEvaluations(ev, nTop)
		out = append(out, r)
	}
	return out, nil
}

// TopEvaluations returns the n best of ev, best first (ties in call order).
func TopEvaluations(ev []bo.Evaluation, n int) []bo.Evaluation {
	top := append([]bo.Evaluation(nil), ev...)
	sort.SliceStable(top, func(i, j int) bool { return top[i].Score > top[j].Score })
	return top[:min(n, len(top))]
}

// MeanStd returns the mean and the sample standard deviation (0 for one
// value) of v.
func MeanStd(v []float64) (mean, std float64) {
	for _, x := range v {
		mean += x / float64(len(v))
	}
	if len(v) < 2 {
		return mean, 0
	}
	for _, x := range v {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(v)-1))
}
