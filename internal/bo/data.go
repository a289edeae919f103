package bo

import (
	"fmt"
	"math"
)

// runData is the retraining data: the labelled start, then the objects the
// run evaluated (Data.Failed marks the failed evaluations, never the best).
type runData[O any] struct {
	Data[O]
	util []float64 // sign * score of each object
	// known maps the key of every object to its first score.
	known map[string]float64
	// accepted holds the model's verdict (Model.Accept) on the first
	// len(accepted) objects; later ones are not asked yet.
	accepted []bool
	initBest int // index of the best initial point that did not fail (-1: none)
}

// start sets the retraining data to the labelled start.
func (r *runner[O]) start(data Data[O]) {
	idx := make([]int, len(data.Objects))
	for i := range idx {
		idx[i] = i
	}
	if f := r.cfg.LabelledFraction; f > 0 && f < 1 {
		idx = labelledSubset(len(idx), f, newRand(r.cfg.Seed, streamLabelled, 0))
	}
	r.data.known = make(map[string]float64, len(idx)+r.cfg.Budget)
	for _, i := range idx {
		r.appendData(data.Objects[i], data.Scores[i], data.failed(i))
	}
	r.data.initBest = r.data.bestIndex()
}

// appendData adds a labelled object to the retraining data; failed says
// its evaluation failed.
func (r *runner[O]) appendData(obj O, score float64, failed bool) {
	r.data.Objects = append(r.data.Objects, obj)
	r.data.Scores = append(r.data.Scores, score)
	r.data.util = append(r.data.util, r.sign*score)
	r.data.Failed = append(r.data.Failed, failed)
	if key := r.task.Key(obj); !r.data.seen(key) {
		r.data.known[key] = score
	}
}

// seen reports whether the object of key is in the data.
func (d *runData[O]) seen(key string) bool {
	_, ok := d.known[key]
	return ok
}

// isKnown reports whether the objective's score of key is known, so that it
// must not be evaluated again: the objective is deterministic and the object
// is in the data or was evaluated in the run.
func (r *runner[O]) isKnown(key string) bool {
	return r.task.Deterministic() && r.data.seen(key)
}

// utilAt returns the utilities of the data points idx.
func (d *runData[O]) utilAt(idx []int) []float64 {
	u := make([]float64, len(idx))
	for i, j := range idx {
		u[i] = d.util[j]
	}
	return u
}

// acceptedData returns the indices of the first n data objects that the
// model accepts, asking it about those it has not been asked about; each
// newly refused object is logged. It fails when the model accepts none.
func (r *runner[O]) acceptedData(n int) ([]int, error) {
	for i := len(r.data.accepted); i < n; i++ {
		err := r.vae.Accept(r.data.Objects[i])
		if err != nil {
			r.logf("note: %s is left out of retraining and the surrogate's data: %v", r.task.Key(r.data.Objects[i]), err)
		}
		r.data.accepted = append(r.data.accepted, err == nil)
	}
	var idx []int
	for i, ok := range r.data.accepted[:n] {
		if ok {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil, fmt.Errorf("the model accepts none of the %d data objects", n)
	}
	return idx, nil
}

// best is the best point so far.
type bestPoint struct {
	score  float64
	object string
}

// best is the best point of the data, failed evaluations included (the
// journal's incumbent: the surrogate's view).
func (r *runner[O]) best() bestPoint {
	i := argmax(r.data.util)
	return bestPoint{score: r.data.Scores[i], object: r.task.Key(r.data.Objects[i])}
}

// bestSucceeded is the best point whose evaluation did not fail, the one
// reported; NaN and "" when every one failed.
func (r *runner[O]) bestSucceeded() bestPoint {
	i := r.data.bestIndex()
	if i < 0 {
		return bestPoint{score: math.NaN()}
	}
	return bestPoint{score: r.data.Scores[i], object: r.task.Key(r.data.Objects[i])}
}

// bestIndex returns the index of the best data point whose evaluation did
// not fail, -1 when none.
func (d *runData[O]) bestIndex() int {
	best := -1
	for i, u := range d.util {
		if !d.failed(i) && (best < 0 || u > d.util[best]) {
			best = i
		}
	}
	return best
}

// initialBest is the best score of the labelled start that did not fail,
// NaN when none.
func (d *runData[O]) initialBest() float64 {
	if d.initBest < 0 {
		return math.NaN()
	}
	return d.Scores[d.initBest]
}
