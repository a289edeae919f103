// Package adapters wires any registered task (internal/task) to the small
// interfaces of package bo: a task's Objective is a bo.Task over objects of
// type any, and Model turns a task's retrainable VAE into a bo.Model, so that
// bo itself imports neither torch nor the model packages and knows no task.
package adapters

import (
	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// Task returns a task's objective as the loop's black box.
func Task(o task.Objective) bo.Task[any] { return o }

// Model is a task's VAE as a bo.Model.
type Model struct {
	task.Model
}

var _ bo.Model[any] = (*Model)(nil)

// NewModel wraps a task's model.
func NewModel(m task.Model) *Model { return &Model{Model: m} }

// Encode returns the encoder means of objs as a matrix (one row per object).
func (m *Model) Encode(objs []any) (*mat.Dense, error) {
	mu, err := m.Model.Encode(objs)
	if err != nil {
		return nil, err
	}
	return mat.NewDense(len(objs), m.LatentDim(), mu), nil
}

// Decode decodes the rows of z.
func (m *Model) Decode(z *mat.Dense, seed uint64) ([]any, []bool, error) {
	n, d := z.Dims()
	flat := make([]float64, 0, n*d)
	for i := range n {
		flat = append(flat, z.RawRowView(i)...)
	}
	return m.Model.Decode(flat, seed)
}

// Retrain trains the model on the request's objects with its ELBO and
// returns the mean losses (total, rec, kl, pred, metric) and the KL weight.
func (m *Model) Retrain(req bo.RetrainRequest[any]) (map[string]float64, error) {
	l, err := m.Model.Retrain(task.RetrainRequest{Objects: req.Objects, Scores: req.Scores, Weights: req.Weights,
		Epochs: req.Epochs, Seed: req.Seed})
	if err != nil {
		return nil, err
	}
	return map[string]float64{"total": l.Total, "rec": l.Rec, "kl": l.KL, "pred": l.Pred, "metric": l.Metric, "beta": l.Beta}, nil
}
