package models

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// DataSettings record how a training's caller made its Data from a data
// set: the seed of its draws (e.g. a subset of the data set, the labelled
// subset), the rank weights' k, the validation fraction (Data.Split) and the
// share of training points that keep their label (KeepLabels). A
// checkpoint keeps them so that a resumed training draws from the same
// examples with the same weights.
type DataSettings struct {
	Seed uint64 `json:"seed"`
	// K is the rank-weight k; +Inf means uniform weights.
	K                RankK   `json:"k"`
	ValFraction      float64 `json:"val_fraction"`
	LabelledFraction float64 `json:"labelled_fraction"`
}

// RankK is a rank-weight k that JSON holds as a number, or "inf" for +Inf
// (uniform weights), which JSON numbers cannot hold.
type RankK float64

// MarshalJSON writes k as a number, +Inf as "inf".
func (k RankK) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(k), 1) {
		return []byte(`"inf"`), nil
	}
	return json.Marshal(float64(k))
}

// UnmarshalJSON reads a number or "inf".
func (k *RankK) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if s != "inf" {
			return fmt.Errorf("rank-weight k %q: want a number or \"inf\"", s)
		}
		*k = RankK(math.Inf(1))
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("rank-weight k %s: want a number or \"inf\"", b)
	}
	*k = RankK(f)
	return nil
}

// String formats k as the --k flag takes it.
func (k RankK) String() string {
	if math.IsInf(float64(k), 1) {
		return "inf"
	}
	return strconv.FormatFloat(float64(k), 'g', -1, 64)
}

// Data is a training or validation set in host memory: examples in the
// network's own form (E), with optional labels and sampling weights.
type Data[E any] struct {
	Examples []E
	// Labels holds one raw label per example, NaN for unlabelled examples (the
	// semi-supervised setting); nil when there are none.
	Labels []float64
	// Weights holds one sampling weight per example (e.g. RankWeights); nil
	// means uniform. Mini-batches are drawn with replacement in proportion.
	Weights []float64
}

// Len returns the number of examples.
func (d Data[E]) Len() int { return len(d.Examples) }

// Validate checks the lengths and, when labels are needed, that at least one
// example is labelled.
func (d Data[E]) Validate(needLabels bool) error {
	n := len(d.Examples)
	switch {
	case n == 0:
		return fmt.Errorf("data: no examples")
	case d.Labels != nil && len(d.Labels) != n:
		return fmt.Errorf("data: %d labels for %d examples", len(d.Labels), n)
	case d.Weights != nil && len(d.Weights) != n:
		return fmt.Errorf("data: %d weights for %d examples", len(d.Weights), n)
	}
	for i, y := range d.Labels {
		if math.IsInf(y, 0) {
			return fmt.Errorf("data: label %d is %v", i, y)
		}
	}
	if needLabels {
		if _, _, ok := LabelRange(d.Labels); !ok {
			return fmt.Errorf("data: the objective needs labels but no example is labelled")
		}
	}
	return nil
}

// Select returns the examples idx of d (with their labels and weights).
func (d Data[E]) Select(idx []int) Data[E] {
	out := Data[E]{Examples: make([]E, len(idx))}
	if d.Labels != nil {
		out.Labels = make([]float64, len(idx))
	}
	if d.Weights != nil {
		out.Weights = make([]float64, len(idx))
	}
	for k, i := range idx {
		out.Examples[k] = d.Examples[i]
		if d.Labels != nil {
			out.Labels[k] = d.Labels[i]
		}
		if d.Weights != nil {
			out.Weights[k] = d.Weights[i]
		}
	}
	return out
}

// Split returns the first round(frac * N) examples as the validation set and
// the others as the training set (the reference's unshuffled split; shuffle
// the data first if its order matters). Both share d's backing arrays.
func (d Data[E]) Split(frac float64) (train, val Data[E], err error) {
	if !(frac >= 0 && frac < 1) {
		return Data[E]{}, Data[E]{}, fmt.Errorf("data: validation fraction %v, want 0 <= f < 1", frac)
	}
	n := d.Len()
	nv := int(frac * float64(n))
	cut := func(s []float64, lo, hi int) []float64 {
		if s == nil {
			return nil
		}
		return s[lo:hi]
	}
	val = Data[E]{Examples: d.Examples[:nv], Labels: cut(d.Labels, 0, nv), Weights: cut(d.Weights, 0, nv)}
	train = Data[E]{Examples: d.Examples[nv:], Labels: cut(d.Labels, nv, n), Weights: cut(d.Weights, nv, n)}
	return train, val, nil
}

// LabelRange returns the smallest and largest non-NaN label; ok is false when
// there is none.
func LabelRange(labels []float64) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, y := range labels {
		if math.IsNaN(y) {
			continue
		}
		lo, hi, ok = math.Min(lo, y), math.Max(hi, y), true
	}
	return lo, hi, ok
}

// KeepLabels returns a copy of labels in which only a random share frac of
// the labelled entries keep their label and the others become NaN
// (unlabelled): the semi-supervised setting. At least one label is kept when
// frac > 0 and any is available.
func KeepLabels(labels []float64, frac float64, rng *rand.Rand) ([]float64, error) {
	if !(frac >= 0 && frac <= 1) {
		return nil, fmt.Errorf("labelled fraction %v, want 0 <= f <= 1", frac)
	}
	out := make([]float64, len(labels))
	var labelled []int
	for i, y := range labels {
		out[i] = math.NaN()
		if !math.IsNaN(y) {
			labelled = append(labelled, i)
		}
	}
	keep := int(math.Round(frac * float64(len(labelled))))
	if frac > 0 && keep == 0 && len(labelled) > 0 {
		keep = 1
	}
	rng.Shuffle(len(labelled), func(a, b int) { labelled[a], labelled[b] = labelled[b], labelled[a] })
	for _, i := range labelled[:keep] {
		out[i] = labels[i]
	}
	return out, nil
}
