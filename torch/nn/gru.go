package nn

import (
	"fmt"
	"math"

	"github.com/tlbo-native/tlbo-native/torch"
)

// GRU is a multi-layer gated recurrent unit as PyTorch's nn.GRU (unidirectional),
// with parameters weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}.
type GRU struct {
	Base
	Hidden, Layers int64
	BatchFirst     bool
	Dropout        float64
	flat           []*torch.Tensor
}

// NewGRU returns a GRU from input features to hidden units with the given layers.
func NewGRU(input, hidden, layers int64, batchFirst bool) *GRU {
	g := &GRU{Hidden: hidden, Layers: layers, BatchFirst: batchFirst}
	bound := 1 / math.Sqrt(float64(hidden))
	for k := int64(0); k < layers; k++ {
		in := input
		if k > 0 {
			in = hidden
		}
		g.flat = append(g.flat,
			g.RegisterParameter(fmt.Sprintf("weight_ih_l%d", k), uniform(bound, 3*hidden, in)),
			g.RegisterParameter(fmt.Sprintf("weight_hh_l%d", k), uniform(bound, 3*hidden, hidden)),
			g.RegisterParameter(fmt.Sprintf("bias_ih_l%d", k), uniform(bound, 3*hidden)),
			g.RegisterParameter(fmt.Sprintf("bias_hh_l%d", k), uniform(bound, 3*hidden)))
	}
	return g
}

// Forward runs the GRU over x ((N, L, in) when BatchFirst, else (L, N, in)) from
// the initial state h0 (layers, N, hidden; nil for zeros) and returns the
// outputs of the last layer and the final state.
func (g *GRU) Forward(x, h0 *torch.Tensor) (out, hn *torch.Tensor) {
	if err := x.Err(); err != nil {
		return x, x
	}
	if h0 == nil {
		shape := x.Shape()
		if len(shape) != 3 {
			err := fmt.Errorf("gru: input must have 3 dims, got shape %v", shape)
			return torch.ErrTensor(err), torch.ErrTensor(err)
		}
		n := shape[1]
		if g.BatchFirst {
			n = shape[0]
		}
		h0 = x.NewZeros([]int64{g.Layers, n, g.Hidden})
	}
	return torch.GRU(x, h0, g.flat, int(g.Layers), g.Dropout, g.IsTraining(), g.BatchFirst)
}

// GRUCell is one step of a GRU, as PyTorch's nn.GRUCell.
type GRUCell struct {
	Base
	WeightIH, WeightHH, BiasIH, BiasHH *torch.Tensor
}

// NewGRUCell returns a GRU cell from input features to hidden units.
func NewGRUCell(input, hidden int64) *GRUCell {
	bound := 1 / math.Sqrt(float64(hidden))
	c := &GRUCell{}
	c.WeightIH = c.RegisterParameter("weight_ih", uniform(bound, 3*hidden, input))
	c.WeightHH = c.RegisterParameter("weight_hh", uniform(bound, 3*hidden, hidden))
	c.BiasIH = c.RegisterParameter("bias_ih", uniform(bound, 3*hidden))
	c.BiasHH = c.RegisterParameter("bias_hh", uniform(bound, 3*hidden))
	return c
}

// Forward returns the next hidden state from input x (N, in) and state h (N, hidden).
func (c *GRUCell) Forward(x, h *torch.Tensor) *torch.Tensor {
	return torch.GRUCell(x, h, c.WeightIH, c.WeightHH, c.BiasIH, c.BiasHH)
}
