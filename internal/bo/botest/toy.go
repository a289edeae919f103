// Package botest is a small synthetic task and model for fast tests of the BO
// loop (the loop's tests, and the toy run of bench evaluators): objects are points x of R^D, decoded from a latent z of R^d by a
// fixed random linear map, x = round(A (z + c) + noise, 3 decimals); the
// objective is log(1 + |x - x*|²) (lower is better) for a target x* = A z*
// inside the latent prior. Latent points far from the centre, |z + c| >
// InvalidRadius, decode to nothing (an invalid decode).
//
// "Retraining" moves the centre c towards the weighted mean of the encoded
// training points, estimated from a mini-batch drawn with probability
// proportional to the weights: a cheap, seeded stand-in for weighted
// retraining, which shifts the prior towards good points as the real one
// does. Save and Load keep c, so that resumed runs see the same model.
package botest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/models/weighting"
	"gonum.org/v1/gonum/mat"
)

// InvalidRadius bounds the latent points that decode to a valid object.
const InvalidRadius = 3.5

// decodeNoise is the standard deviation of the decoder's noise.
const decodeNoise = 1e-3

// Problem is a toy task and the decoder it is built on.
type Problem struct {
	d, dim int
	a      *mat.Dense // dim x d decoder
	pinv   *mat.Dense // d x dim encoder (pseudo-inverse of a)
	target []float64  // x*
	// Optimum is z*, the latent point of the target.
	Optimum []float64
}

// New returns a problem with latent dimension d and object dimension dim
// (dim >= d), its decoder drawn from seed.
func New(d, dim int, seed uint64) (*Problem, error) {
	if d < 1 || dim < d {
		return nil, fmt.Errorf("botest: latent dimension %d and object dimension %d, want 1 <= d <= dim", d, dim)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	a := mat.NewDense(dim, d, nil)
	for i := 0; i < dim; i++ {
		for k := 0; k < d; k++ {
			a.Set(i, k, rng.NormFloat64()/math.Sqrt(float64(d)))
		}
	}
	var pinv mat.Dense
	var ata, at mat.Dense
	at.CloneFrom(a.T())
	ata.Mul(&at, a)
	if err := pinv.Solve(&ata, &at); err != nil {
		return nil, fmt.Errorf("botest: decoder is singular: %w", err)
	}
	p := &Problem{d: d, dim: dim, a: a, pinv: &pinv, Optimum: make([]float64, d)}
	for k := range p.Optimum {
		p.Optimum[k] = 1.5 * math.Cos(float64(k)) // |z*| about 1.5 sqrt(d/2): inside the prior
	}
	p.target = p.decodeRaw(p.Optimum, make([]float64, d))
	return p, nil
}

// decodeRaw returns A (z + c).
func (p *Problem) decodeRaw(z, c []float64) []float64 {
	x := make([]float64, p.dim)
	for i := range x {
		for k := 0; k < p.d; k++ {
			x[i] += p.a.At(i, k) * (z[k] + c[k])
		}
	}
	return x
}

// Task is the toy objective.
type Task struct{ p *Problem }

// Task returns the problem's objective.
func (p *Problem) Task() Task { return Task{p} }

// Score returns log(1 + |x - x*|²).
func (t Task) Score(x []float64) (float64, error) {
	if len(x) != t.p.dim {
		return 0, fmt.Errorf("botest: object has %d coordinates, want %d", len(x), t.p.dim)
	}
	s := 0.0
	for i, v := range x {
		d := v - t.p.target[i]
		s += d * d
	}
	return math.Log1p(s), nil
}

// FailureScore is the score of an invalid decode.
func (Task) FailureScore() float64 { return 5 }

// Maximize is false: lower scores are better.
func (Task) Maximize() bool { return false }

// Deterministic is true: the score is a function of the object.
func (Task) Deterministic() bool { return true }

// Key returns the coordinates as comma-separated shortest decimals.
func (Task) Key(x []float64) string {
	parts := make([]string, len(x))
	for i, v := range x {
		parts[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

// Parse reads a key back.
func (t Task) Parse(key string) ([]float64, error) {
	parts := strings.Split(key, ",")
	if len(parts) != t.p.dim {
		return nil, fmt.Errorf("botest: key %q has %d coordinates, want %d", key, len(parts), t.p.dim)
	}
	x := make([]float64, len(parts))
	for i, s := range parts {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("botest: key %q, coordinate %d: %w", key, i, err)
		}
		x[i] = v
	}
	return x, nil
}

// Model is the toy generative model; its only weights are the centre c.
type Model struct {
	p      *Problem
	centre []float64
	// Retrains counts the retrainings since the model was made or loaded.
	Retrains int
	// Rate is the fraction of the way the centre moves per epoch (default 0.5).
	Rate float64
	// Refuse, when set, makes the model refuse the objects it returns an
	// error for, as a featuriser that cannot take some molecules: Accept
	// returns the error, and Encode and Retrain fail on them.
	Refuse func(x []float64) error
	// Asked counts the calls of Accept.
	Asked int
	// Grid, when set, is the rounding step of decoded coordinates instead
	// of 0.001: a coarse grid makes most latent points decode to a few
	// objects, as a poorly trained decoder does.
	Grid float64
	// Batches records the number of points of each Decode call, in order.
	Batches []int
}

// Model returns a fresh model (centre 0) of the problem.
func (p *Problem) Model() *Model { return &Model{p: p, centre: make([]float64, p.d), Rate: 0.5} }

// LatentDim returns d.
func (m *Model) LatentDim() int { return m.p.d }

// Accept returns Refuse's verdict on x (nil without Refuse).
func (m *Model) Accept(x []float64) error {
	m.Asked++
	if m.Refuse == nil {
		return nil
	}
	return m.Refuse(x)
}

// Encode returns A⁺x - c for each object.
func (m *Model) Encode(objs [][]float64) (*mat.Dense, error) {
	z := mat.NewDense(len(objs), m.p.d, nil)
	for i, x := range objs {
		if len(x) != m.p.dim {
			return nil, fmt.Errorf("botest: object %d has %d coordinates, want %d", i, len(x), m.p.dim)
		}
		if m.Refuse != nil {
			if err := m.Refuse(x); err != nil {
				return nil, fmt.Errorf("botest: object %d: %w", i, err)
			}
		}
		for k := 0; k < m.p.d; k++ {
			z.Set(i, k, mat.Dot(m.p.pinv.RowView(k), mat.NewVecDense(m.p.dim, x))-m.centre[k])
		}
	}
	return z, nil
}

// Decode returns round(A (z + c) + noise, 3 decimals), invalid when
// |z + c| > InvalidRadius; the noise is drawn from seed.
func (m *Model) Decode(z *mat.Dense, seed uint64) ([][]float64, []bool, error) {
	n, d := z.Dims()
	if d != m.p.d {
		return nil, nil, fmt.Errorf("botest: %d-dimensional latent points, want %d", d, m.p.d)
	}
	m.Batches = append(m.Batches, n)
	rng := rand.New(rand.NewPCG(seed, 1))
	objs := make([][]float64, n)
	valid := make([]bool, n)
	for i := 0; i < n; i++ {
		row := mat.Row(nil, i, z)
		r2 := 0.0
		for k, v := range row {
			r2 += (v + m.centre[k]) * (v + m.centre[k])
		}
		x := m.p.decodeRaw(row, m.centre)
		for j := range x {
			if m.Grid > 0 {
				x[j] = math.Round((x[j]+decodeNoise*rng.NormFloat64())/m.Grid) * m.Grid
				continue
			}
			x[j] = math.Round((x[j]+decodeNoise*rng.NormFloat64())*1000) / 1000
		}
		if math.Sqrt(r2) <= InvalidRadius {
			objs[i], valid[i] = x, true
		}
	}
	return objs, valid, nil
}

// Retrain moves the centre towards the weighted mean of the encoded
// objects, estimated from 256 draws with probability proportional to the
// weights: c += Rate · epochs · mean. It reports the length of the move as
// the loss "shift".
func (m *Model) Retrain(req bo.RetrainRequest[[]float64]) (map[string]float64, error) {
	if len(req.Weights) != len(req.Objects) || len(req.Objects) == 0 {
		return nil, fmt.Errorf("botest: retrain with %d objects and %d weights", len(req.Objects), len(req.Weights))
	}
	z, err := m.Encode(req.Objects)
	if err != nil {
		return nil, err
	}
	sampler, err := weighting.NewWeightedSampler(req.Weights, rand.New(rand.NewPCG(req.Seed, 2)))
	if err != nil {
		return nil, fmt.Errorf("botest: retrain: %w", err)
	}
	mean := make([]float64, m.p.d)
	const draws = 256
	for _, i := range sampler.Sample(draws) {
		for k := range mean {
			mean[k] += z.At(i, k) / draws
		}
	}
	step := math.Min(1, m.Rate*req.Epochs)
	shift := 0.0
	for k := range m.centre {
		m.centre[k] += step * mean[k]
		shift += step * mean[k] * step * mean[k]
	}
	m.Retrains++
	return map[string]float64{"shift": math.Sqrt(shift)}, nil
}

// Save writes the centre to path (.npy).
func (m *Model) Save(path string) error {
	return numpy.WriteNPY(path, numpy.Array{Name: "centre", Shape: []int{m.p.d}, Data: append([]float64(nil), m.centre...)})
}

// Load reads the centre from path.
func (m *Model) Load(path string) error {
	a, err := numpy.ReadNPY(path)
	if err != nil {
		return fmt.Errorf("botest: load %s: %w", path, err)
	}
	c, err := a.Float64s()
	if err != nil || len(c) != m.p.d {
		return fmt.Errorf("botest: %s holds %d values (%v), want %d", path, len(c), err, m.p.d)
	}
	copy(m.centre, c)
	return nil
}

// Centre returns a copy of the model's centre.
func (m *Model) Centre() []float64 { return append([]float64(nil), m.centre...) }

// Data returns n labelled objects decoded from prior samples drawn from
// seed (invalid decodes redrawn), with their scores.
func (p *Problem) Data(n int, seed uint64) bo.Data[[]float64] {
	m, t := p.Model(), p.Task()
	rng := rand.New(rand.NewPCG(seed, 3))
	var data bo.Data[[]float64]
	z := mat.NewDense(1, p.d, nil)
	for data.Len() < n {
		for k := 0; k < p.d; k++ {
			z.Set(0, k, rng.NormFloat64())
		}
		objs, ok, _ := m.Decode(z, rng.Uint64())
		if !ok[0] {
			continue
		}
		s, _ := t.Score(objs[0])
		data.Objects = append(data.Objects, objs[0])
		data.Scores = append(data.Scores, s)
	}
	return data
}
