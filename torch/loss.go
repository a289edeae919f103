package torch

// Reduction says how a loss combines its per-element values.
type Reduction int

// Reductions, with libtorch's codes.
const (
	ReduceNone Reduction = 0
	ReduceMean Reduction = 1
	ReduceSum  Reduction = 2
)

var (
	opMSE       = newOp("aten::mse_loss", "")
	opBCE       = newOp("aten::binary_cross_entropy", "")
	opBCELogits = newOp("aten::binary_cross_entropy_with_logits", "")
	opCrossEntr = newOp("aten::cross_entropy_loss", "")
	opLinear    = newOp("aten::linear", "")
	opConv1d    = newOp("aten::conv1d", "")
	opConv2d    = newOp("aten::conv2d", "")
	opConvT2d   = newOp("aten::conv_transpose2d", "input")
	opBatchNorm = newOp("aten::batch_norm", "")
	opGRU       = newOp("aten::gru", "input")
	opGRUCell   = newOp("aten::gru_cell", "")
	opEmbedding = newOp("aten::embedding", "")
	opDropout   = newOp("aten::dropout", "")

	opSoftplusPairSum = newOp("tlbo::softplus_pair_sum", "")
)

// MSELoss returns the squared error between input and target.
func MSELoss(input, target *Tensor, r Reduction) *Tensor { return opMSE.tensor(input, target, int(r)) }

// BCELoss returns the binary cross-entropy of probabilities input against target
// (weight may be nil).
func BCELoss(input, target, weight *Tensor, r Reduction) *Tensor {
	return opBCE.tensor(input, target, optional(weight), int(r))
}

// BCEWithLogitsLoss returns the binary cross-entropy of sigmoid(logits) against
// target, computed stably (weight may be nil).
func BCEWithLogitsLoss(logits, target, weight *Tensor, r Reduction) *Tensor {
	return opBCELogits.tensor(logits, target, optional(weight), none, int(r))
}

// CrossEntropyLoss returns the cross-entropy of logits (N,C,...) against int64
// class targets (N,...).
func CrossEntropyLoss(logits, target *Tensor, r Reduction) *Tensor {
	return opCrossEntr.tensor(logits, target, none, int(r))
}

func optional(t *Tensor) any {
	if t == nil {
		return none
	}
	return t
}

// Linear returns x W^T + b (b may be nil).
func Linear(x, w, b *Tensor) *Tensor { return opLinear.tensor(x, w, optional(b)) }

// Conv1d applies a 1-d convolution over (N,C,L) x with weight (O,C/g,K).
func Conv1d(x, w, b *Tensor, stride, padding, dilation, groups int64) *Tensor {
	return opConv1d.tensor(x, w, optional(b), []int64{stride}, []int64{padding}, []int64{dilation}, groups)
}

// Conv2d applies a 2-d convolution over (N,C,H,W) x with weight (O,C/g,KH,KW).
func Conv2d(x, w, b *Tensor, stride, padding, dilation [2]int64, groups int64) *Tensor {
	return opConv2d.tensor(x, w, optional(b), stride[:], padding[:], dilation[:], groups)
}

// ConvTranspose2d applies a transposed 2-d convolution with weight (C,O/g,KH,KW).
func ConvTranspose2d(x, w, b *Tensor, stride, padding, outputPadding, dilation [2]int64, groups int64) *Tensor {
	return opConvT2d.tensor(x, w, optional(b), stride[:], padding[:], outputPadding[:], groups, dilation[:])
}

// BatchNorm normalises x over its channel dim 1; in training it uses the batch
// statistics and updates the running ones in place.
func BatchNorm(x, weight, bias, runningMean, runningVar *Tensor, training bool, momentum, eps float64) *Tensor {
	return opBatchNorm.tensor(x, optional(weight), optional(bias), optional(runningMean), optional(runningVar),
		training, momentum, eps, true)
}

// GRU runs a multi-layer GRU over x with initial state h0 (layers,N,H); params
// are w_ih, w_hh, b_ih, b_hh per layer. It returns the outputs and the final state.
func GRU(x, h0 *Tensor, params []*Tensor, layers int, dropout float64, train, batchFirst bool) (out, hn *Tensor) {
	return opGRU.pair(x, h0, params, true, layers, dropout, train, false, batchFirst)
}

// GRUCell runs one GRU step.
func GRUCell(x, h, wih, whh, bih, bhh *Tensor) *Tensor {
	return opGRUCell.tensor(x, h, wih, whh, optional(bih), optional(bhh))
}

// Embedding looks up the rows of weight at the int64 indices.
func Embedding(weight, indices *Tensor) *Tensor { return opEmbedding.tensor(weight, indices) }

// Dropout zeroes elements with probability p when train is true (scaling the rest).
func Dropout(x *Tensor, p float64, train bool) *Tensor { return opDropout.tensor(x, p, train) }

// SoftplusPairSum returns the sum over b, j, k of
// softplus(p[b,j] - n[b,k]) wp[b,j] wn[b,k] for p, wp of shape (B, J) and n,
// wn of shape (B, K), differentiable in p and n (the weights are constants):
// the triplet losses' reduction without their (B, J, K) block kept for
// autograd, and without subnormal numbers whatever the range of p and n
// (native/ops.cpp). Summands below 2^-60 (2^-900 in float64) are left out;
// padding entries, p = -1e30 or n = +1e30 (or infinite), add nothing.
func SoftplusPairSum(p, n, wp, wn *Tensor) *Tensor { return opSoftplusPairSum.tensor(p, n, wp, wn) }
