package torch

var opGraphGRU = newOp("tlbo::graph_gru", "")

// GRUSchedule orders the messages of a directed acyclic graph by level for
// GraphGRU: the messages of level v are Levels[v]..Levels[v+1]-1, with
// labels Label (int64, one per message); their incoming rows are the pairs
// PairLevels[v]..PairLevels[v+1]-1, pair k reading table row Src[k] (0: the
// zero row, i+1: message i of an earlier level) into message Dst[k] of the
// level (its index within the level; pairs sorted by it).
type GRUSchedule struct {
	Label, Src, Dst    *Tensor
	Levels, PairLevels []int64
}

// GraphGRU returns the message table (messages+1, H) of the sum-GRU of
// Jin et al.'s junction-tree VAE over a schedule: row 0 is zero and message
// i, with label l and incoming rows h_k, is row i+1:
//
//	s = sum_k h_k             (tanh(s) when tanh is set)
//	z = sigmoid(xz[l] + s wz^T)
//	r_k = sigmoid(xr[l] + h_k ur^T)
//	p = tanh(xh[l] + (sum_k r_k h_k) wh^T)
//	h = (1 - z) s + z p
//
// xz, xr, xh (labels, H) are the label terms with the biases; wz, ur, wh are
// (H, H). Differentiable in those six. One native operator for the whole
// schedule (native/ops.cpp): the same values as the step composed of ATen
// operators level by level, without its autograd graph.
func GraphGRU(xz, xr, xh, wz, ur, wh *Tensor, s GRUSchedule, tanh bool) *Tensor {
	return opGraphGRU.tensor(xz, xr, xh, wz, ur, wh, s.Label, s.Src, s.Dst, s.Levels, s.PairLevels, tanh)
}
