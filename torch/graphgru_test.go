package torch

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// gruCase is a random schedule: levels of messages, each message of level v
// > 0 reading up to three rows of earlier levels (repeats allowed), and
// random inputs for H = 5 and 4 labels.
type gruCase struct {
	label, src, dst    []int64
	levels, pairLevels []int64
	inputs             [6][]float64 // xz, xr, xh (4, 5), wz, ur, wh (5, 5)
}

const gruH, gruLabels = 5, 4

func newGRUCase(rng *rand.Rand) gruCase {
	var c gruCase
	c.levels, c.pairLevels = []int64{0}, []int64{0}
	for v := range 4 {
		n := 1 + rng.IntN(4)
		for k := range n {
			c.label = append(c.label, rng.Int64N(gruLabels))
			if v == 0 {
				continue
			}
			for range rng.IntN(4) {
				c.src = append(c.src, rng.Int64N(c.levels[v]+1)) // row 0 or an earlier message
				c.dst = append(c.dst, int64(k))
			}
		}
		c.levels = append(c.levels, c.levels[v]+int64(n))
		c.pairLevels = append(c.pairLevels, int64(len(c.src)))
	}
	for i := range c.inputs {
		n := gruH * gruH
		if i < 3 {
			n = gruLabels * gruH
		}
		c.inputs[i] = make([]float64, n)
		for j := range c.inputs[i] {
			c.inputs[i][j] = rng.NormFloat64()
		}
	}
	return c
}

// leaves returns the case's six inputs as float64 leaves requiring gradients.
func (c gruCase) leaves(sc *Scope) []*Tensor {
	out := make([]*Tensor, 6)
	for i, v := range c.inputs {
		rows := int64(gruH)
		if i < 3 {
			rows = gruLabels
		}
		out[i] = sc.Own(FromFloat64(v, rows, gruH)).SetRequiresGrad(true)
	}
	return out
}

func (c gruCase) schedule(sc *Scope) GRUSchedule {
	return GRUSchedule{Label: sc.Own(FromInt64(c.label)), Src: sc.Own(FromInt64(c.src)), Dst: sc.Own(FromInt64(c.dst)),
		Levels: c.levels, PairLevels: c.pairLevels}
}

// composedGRU is GraphGRU composed of ATen operators, level by level, the
// table growing by concatenation.
func composedGRU(x []*Tensor, s GRUSchedule, c gruCase, tanh bool) *Tensor {
	table := x[0].NewZeros([]int64{1, gruH})
	for v := range len(c.levels) - 1 {
		lo, hi, plo, phi := c.levels[v], c.levels[v+1], c.pairLevels[v], c.pairLevels[v+1]
		lab, src, dst := s.Label.Narrow(0, lo, hi-lo), s.Src.Narrow(0, plo, phi-plo), s.Dst.Narrow(0, plo, phi-plo)
		hIn := table.IndexSelect(0, src)
		sum := table.NewZeros([]int64{hi - lo, gruH}).IndexAdd(0, dst, hIn)
		if tanh {
			sum = sum.Tanh()
		}
		z := x[0].IndexSelect(0, lab).Add(Linear(sum, x[3], nil)).Sigmoid()
		r := x[1].IndexSelect(0, lab.IndexSelect(0, dst)).Add(Linear(hIn, x[4], nil)).Sigmoid()
		g := table.NewZeros([]int64{hi - lo, gruH}).IndexAdd(0, dst, r.Mul(hIn))
		p := x[2].IndexSelect(0, lab).Add(Linear(g, x[5], nil)).Tanh()
		h := z.RSubScalar(1).Mul(sum).Add(z.Mul(p))
		table = Cat([]*Tensor{table, h}, 0)
	}
	return table
}

// gruLoss is sum(table * w) for fixed weights w, its value and the
// gradients of the six inputs.
func gruLoss(t *testing.T, c gruCase, w []float64, tanh, fused bool) (float64, [6][]float64) {
	t.Helper()
	sc := NewScope()
	defer sc.Close()
	x, s := c.leaves(sc), c.schedule(sc)
	var table *Tensor
	if fused {
		table = sc.Own(GraphGRU(x[0], x[1], x[2], x[3], x[4], x[5], s, tanh))
	} else {
		table = sc.Own(composedGRU(x, s, c, tanh))
	}
	loss := sc.Own(table.Mul(sc.Own(FromFloat64(w, table.Shape()...))).Sum())
	v, err := loss.Item()
	if err != nil {
		t.Fatal(err)
	}
	if err := loss.Backward(); err != nil {
		t.Fatal(err)
	}
	var grads [6][]float64
	for i, l := range x {
		g, err := l.Grad()
		if err != nil {
			t.Fatal(err)
		}
		if grads[i], err = sc.Own(g).Float64s(); err != nil {
			t.Fatal(err)
		}
	}
	return v, grads
}

// TestGraphGRUMatchesComposed compares tlbo::graph_gru with the same GRU
// composed of ATen operators level by level, values and the gradients of
// all six inputs, in float64 to 1e-12 (the two sum in different orders),
// with and without the tanh of the summed message, on random schedules
// that repeat rows and read the zero row.
func TestGraphGRUMatchesComposed(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 4 {
		c := newGRUCase(rng)
		w := make([]float64, (c.levels[len(c.levels)-1]+1)*gruH)
		for i := range w {
			w[i] = rng.NormFloat64()
		}
		for _, tanh := range []bool{false, true} {
			got, gg := gruLoss(t, c, w, tanh, true)
			want, wg := gruLoss(t, c, w, tanh, false)
			if math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
				t.Errorf("trial %d tanh %v: loss %.15g, composed %.15g", trial, tanh, got, want)
			}
			for i := range gg {
				for j := range gg[i] {
					if math.Abs(gg[i][j]-wg[i][j]) > 1e-12*(1+math.Abs(wg[i][j])) {
						t.Errorf("trial %d tanh %v: input %d gradient [%d] %.15g, composed %.15g", trial, tanh, i, j, gg[i][j], wg[i][j])
					}
				}
			}
		}
	}
}

// TestGraphGRUGradient checks the operator's gradients against central
// finite differences of the loss in float64 (step 1e-6; the difference
// quotient's error, of order 1e-12 / 1e-6 plus h^2 terms, stays below 1e-7).
func TestGraphGRUGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	c := newGRUCase(rng)
	w := make([]float64, (c.levels[len(c.levels)-1]+1)*gruH)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	for _, tanh := range []bool{false, true} {
		_, grads := gruLoss(t, c, w, tanh, true)
		for i := range c.inputs {
			for _, j := range []int{0, 7, len(c.inputs[i]) - 1} {
				const h = 1e-6
				x0 := c.inputs[i][j]
				c.inputs[i][j] = x0 + h
				up, _ := gruLoss(t, c, w, tanh, true)
				c.inputs[i][j] = x0 - h
				down, _ := gruLoss(t, c, w, tanh, true)
				c.inputs[i][j] = x0
				fd := (up - down) / (2 * h)
				if math.Abs(fd-grads[i][j]) > 1e-7*(1+math.Abs(fd)) {
					t.Errorf("tanh %v: input %d [%d]: gradient %.10g, finite difference %.10g", tanh, i, j, grads[i][j], fd)
				}
			}
		}
	}
}

// TestGraphGRUNoGrad: without gradients the operator gives the same table
// (it keeps no intermediates then); a schedule of no messages gives the
// zero row alone.
func TestGraphGRUNoGrad(t *testing.T) {
	c := newGRUCase(rand.New(rand.NewPCG(7, 8)))
	sc := NewScope()
	defer sc.Close()
	x, s := c.leaves(sc), c.schedule(sc)
	with, err := sc.Own(GraphGRU(x[0], x[1], x[2], x[3], x[4], x[5], s, false)).Float64s()
	if err != nil {
		t.Fatal(err)
	}
	var without []float64
	NoGrad(func() { without, err = sc.Own(GraphGRU(x[0], x[1], x[2], x[3], x[4], x[5], s, false)).Float64s() })
	if err != nil {
		t.Fatal(err)
	}
	for i := range with {
		if with[i] != without[i] {
			t.Fatalf("row value %d: %g with gradients, %g without", i, with[i], without[i])
		}
	}
	empty := GRUSchedule{Label: sc.Own(FromInt64(nil)), Src: sc.Own(FromInt64(nil)), Dst: sc.Own(FromInt64(nil)),
		Levels: []int64{0}, PairLevels: []int64{0}}
	table := sc.Own(GraphGRU(x[0], x[1], x[2], x[3], x[4], x[5], empty, false))
	if v, err := table.Float64s(); err != nil || len(v) != gruH || v[0] != 0 {
		t.Errorf("empty schedule: %v, %v; want one zero row", v, err)
	}
}

// TestGraphGRURefusesBadInput: a pair reading a row of its own level, pairs
// out of order, offsets that do not cover the messages and mismatched
// shapes are refused with the operator's name.
func TestGraphGRURefusesBadInput(t *testing.T) {
	sc := NewScope()
	defer sc.Close()
	c := newGRUCase(rand.New(rand.NewPCG(9, 10)))
	x := c.leaves(sc)
	ints := func(v ...int64) *Tensor { return sc.Own(FromInt64(v)) }
	good := GRUSchedule{Label: ints(0, 1, 2), Src: ints(1, 2), Dst: ints(0, 0), Levels: []int64{0, 2, 3}, PairLevels: []int64{0, 0, 2}}
	if err := sc.Own(GraphGRU(x[0], x[1], x[2], x[3], x[4], x[5], good, false)).Err(); err != nil {
		t.Fatalf("good schedule: %v", err)
	}
	bad := map[string]GRUSchedule{
		"own level":  {Label: ints(0, 1, 2), Src: ints(1, 3), Dst: ints(0, 0), Levels: []int64{0, 2, 3}, PairLevels: []int64{0, 0, 2}},
		"order":      {Label: ints(0, 1, 2, 3), Src: ints(1, 2), Dst: ints(1, 0), Levels: []int64{0, 2, 4}, PairLevels: []int64{0, 0, 2}},
		"dst range":  {Label: ints(0, 1, 2), Src: ints(1, 2), Dst: ints(0, 1), Levels: []int64{0, 2, 3}, PairLevels: []int64{0, 0, 2}},
		"levels":     {Label: ints(0, 1, 2), Src: ints(1, 2), Dst: ints(0, 0), Levels: []int64{0, 2}, PairLevels: []int64{0, 2}},
		"pair count": {Label: ints(0, 1, 2), Src: ints(1, 2), Dst: ints(0), Levels: []int64{0, 2, 3}, PairLevels: []int64{0, 0, 2}},
		"label":      {Label: ints(0, 1, 9), Src: ints(1, 2), Dst: ints(0, 0), Levels: []int64{0, 2, 3}, PairLevels: []int64{0, 0, 2}},
	}
	for name, s := range bad {
		err := sc.Own(GraphGRU(x[0], x[1], x[2], x[3], x[4], x[5], s, false)).Err()
		if err == nil || (name != "label" && !strings.Contains(err.Error(), "graph_gru")) {
			t.Errorf("%s: error %v, want one naming graph_gru", name, err)
		}
	}
	if err := sc.Own(GraphGRU(x[0], x[1], x[3], x[3], x[4], x[5], good, false)).Err(); err == nil {
		t.Error("xh of the weights' shape: no error")
	}
}
