package torch

// The tensor operations. Each wraps one ATen operator; names follow PyTorch.
// Binary ops broadcast like PyTorch's. The result of every op joins the scope
// of its first scoped operand (see Scope).

var (
	opAdd         = newOp("aten::add", "Tensor")
	opAddScalar   = newOp("aten::add", "Scalar")
	opSub         = newOp("aten::sub", "Tensor")
	opRSubScalar  = newOp("aten::rsub", "Scalar")
	opMul         = newOp("aten::mul", "Tensor")
	opMulScalar   = newOp("aten::mul", "Scalar")
	opDiv         = newOp("aten::div", "Tensor")
	opDivScalar   = newOp("aten::div", "Scalar")
	opNeg         = newOp("aten::neg", "")
	opPow         = newOp("aten::pow", "Tensor_Scalar")
	opPowTensor   = newOp("aten::pow", "Tensor_Tensor")
	opMaximum     = newOp("aten::maximum", "")
	opMinimum     = newOp("aten::minimum", "")
	opMatMul      = newOp("aten::matmul", "")
	opBmm         = newOp("aten::bmm", "")
	opExp         = newOp("aten::exp", "")
	opLog         = newOp("aten::log", "")
	opLog1p       = newOp("aten::log1p", "")
	opSqrt        = newOp("aten::sqrt", "")
	opSquare      = newOp("aten::square", "")
	opAbs         = newOp("aten::abs", "")
	opSin         = newOp("aten::sin", "")
	opTanh        = newOp("aten::tanh", "")
	opSigmoid     = newOp("aten::sigmoid", "")
	opSoftplus    = newOp("aten::softplus", "")
	opRelu        = newOp("aten::relu", "")
	opLeakyRelu   = newOp("aten::leaky_relu", "")
	opSoftmax     = newOp("aten::softmax", "int")
	opLogSoftmax  = newOp("aten::log_softmax", "int")
	opLogSumExp   = newOp("aten::logsumexp", "")
	opSum         = newOp("aten::sum", "")
	opSumDims     = newOp("aten::sum", "dim_IntList")
	opMean        = newOp("aten::mean", "")
	opMeanDims    = newOp("aten::mean", "dim")
	opMax         = newOp("aten::max", "")
	opMaxDim      = newOp("aten::max", "dim")
	opMin         = newOp("aten::min", "")
	opMinDim      = newOp("aten::min", "dim")
	opArgMax      = newOp("aten::argmax", "")
	opArgMin      = newOp("aten::argmin", "")
	opNorm        = newOp("aten::linalg_vector_norm", "")
	opGt          = newOp("aten::gt", "Tensor")
	opGtScalar    = newOp("aten::gt", "Scalar")
	opGe          = newOp("aten::ge", "Tensor")
	opGeScalar    = newOp("aten::ge", "Scalar")
	opLt          = newOp("aten::lt", "Tensor")
	opLtScalar    = newOp("aten::lt", "Scalar")
	opLe          = newOp("aten::le", "Tensor")
	opLeScalar    = newOp("aten::le", "Scalar")
	opEq          = newOp("aten::eq", "Tensor")
	opEqScalar    = newOp("aten::eq", "Scalar")
	opNe          = newOp("aten::ne", "Tensor")
	opLogicalAnd  = newOp("aten::logical_and", "")
	opLogicalOr   = newOp("aten::logical_or", "")
	opLogicalNot  = newOp("aten::logical_not", "")
	opIsNaN       = newOp("aten::isnan", "")
	opWhere       = newOp("aten::where", "self")
	opMaskedFill  = newOp("aten::masked_fill", "Scalar")
	opMaskedSel   = newOp("aten::masked_select", "")
	opIndexSelect = newOp("aten::index_select", "")
	opGather      = newOp("aten::gather", "")
	opScatterAdd  = newOp("aten::scatter_add", "")
	opIndexAdd    = newOp("aten::index_add", "")
	opEmbedBag    = newOp("aten::embedding_bag", "")
	opCat         = newOp("aten::cat", "")
	opStack       = newOp("aten::stack", "")
	opSplit       = newOp("aten::split", "Tensor")
	opSplitSizes  = newOp("aten::split_with_sizes", "")
	opNarrow      = newOp("aten::narrow", "")
	opSelect      = newOp("aten::select", "int")
	opTranspose   = newOp("aten::transpose", "int")
	opPermute     = newOp("aten::permute", "")
	opReshape     = newOp("aten::reshape", "")
	opView        = newOp("aten::view", "")
	opFlatten     = newOp("aten::flatten", "using_ints")
	opSqueeze     = newOp("aten::squeeze", "dim")
	opUnsqueeze   = newOp("aten::unsqueeze", "")
	opRepeat      = newOp("aten::repeat", "")
	opExpand      = newOp("aten::expand", "")
	opTriu        = newOp("aten::triu", "")
	opCdist       = newOp("aten::cdist", "")
	opCartesian   = newOp("aten::cartesian_prod", "")
	opOneHot      = newOp("aten::one_hot", "")
	opClamp       = newOp("aten::clamp", "")
	opTopK        = newOp("aten::topk", "")
	opSort        = newOp("aten::sort", "")
	opSearchSort  = newOp("aten::searchsorted", "Tensor")
	opFlip        = newOp("aten::flip", "")
	opNonzero     = newOp("aten::nonzero", "")
	opMultinomial = newOp("aten::multinomial", "")
	opClone       = newOp("aten::clone", "")
	opDetach      = newOp("aten::detach", "")
	opContiguous  = newOp("aten::contiguous", "")
	opZerosLike   = newOp("aten::zeros_like", "")
	opOnesLike    = newOp("aten::ones_like", "")
	opRandnLike   = newOp("aten::randn_like", "")
	opRandLike    = newOp("aten::rand_like", "")
)

// Add returns t + o.
func (t *Tensor) Add(o *Tensor) *Tensor { return opAdd.tensor(t, o) }

// AddScalar returns t + s.
func (t *Tensor) AddScalar(s float64) *Tensor { return opAddScalar.tensor(t, s) }

// Sub returns t - o.
func (t *Tensor) Sub(o *Tensor) *Tensor { return opSub.tensor(t, o) }

// RSubScalar returns s - t.
func (t *Tensor) RSubScalar(s float64) *Tensor { return opRSubScalar.tensor(t, s) }

// Mul returns t * o elementwise.
func (t *Tensor) Mul(o *Tensor) *Tensor { return opMul.tensor(t, o) }

// MulScalar returns t * s.
func (t *Tensor) MulScalar(s float64) *Tensor { return opMulScalar.tensor(t, s) }

// Div returns t / o elementwise.
func (t *Tensor) Div(o *Tensor) *Tensor { return opDiv.tensor(t, o) }

// DivScalar returns t / s.
func (t *Tensor) DivScalar(s float64) *Tensor { return opDivScalar.tensor(t, s) }

// Neg returns -t.
func (t *Tensor) Neg() *Tensor { return opNeg.tensor(t) }

// Pow returns t ** e.
func (t *Tensor) Pow(e float64) *Tensor { return opPow.tensor(t, e) }

// PowTensor returns t ** e elementwise.
func (t *Tensor) PowTensor(e *Tensor) *Tensor { return opPowTensor.tensor(t, e) }

// Maximum returns the elementwise maximum of t and o.
func (t *Tensor) Maximum(o *Tensor) *Tensor { return opMaximum.tensor(t, o) }

// Minimum returns the elementwise minimum of t and o.
func (t *Tensor) Minimum(o *Tensor) *Tensor { return opMinimum.tensor(t, o) }

// MatMul returns the matrix product of t and o (with torch.matmul's broadcasting).
func (t *Tensor) MatMul(o *Tensor) *Tensor { return opMatMul.tensor(t, o) }

// Bmm returns the batched matrix product of (b,n,m) t and (b,m,p) o.
func (t *Tensor) Bmm(o *Tensor) *Tensor { return opBmm.tensor(t, o) }

// Exp returns e ** t.
func (t *Tensor) Exp() *Tensor { return opExp.tensor(t) }

// Log returns the natural logarithm of t.
func (t *Tensor) Log() *Tensor { return opLog.tensor(t) }

// Log1p returns log(1 + t).
func (t *Tensor) Log1p() *Tensor { return opLog1p.tensor(t) }

// Sqrt returns the square root of t.
func (t *Tensor) Sqrt() *Tensor { return opSqrt.tensor(t) }

// Square returns t * t.
func (t *Tensor) Square() *Tensor { return opSquare.tensor(t) }

// Abs returns |t|.
func (t *Tensor) Abs() *Tensor { return opAbs.tensor(t) }

// Sin returns sin(t).
func (t *Tensor) Sin() *Tensor { return opSin.tensor(t) }

// Tanh returns tanh(t).
func (t *Tensor) Tanh() *Tensor { return opTanh.tensor(t) }

// Sigmoid returns 1 / (1 + exp(-t)).
func (t *Tensor) Sigmoid() *Tensor { return opSigmoid.tensor(t) }

// Softplus returns log(1 + exp(t)) (linear above 20, as PyTorch's default).
func (t *Tensor) Softplus() *Tensor { return opSoftplus.tensor(t, 1.0, 20.0) }

// Relu returns max(t, 0).
func (t *Tensor) Relu() *Tensor { return opRelu.tensor(t) }

// LeakyRelu returns t where t > 0 and slope * t elsewhere.
func (t *Tensor) LeakyRelu(slope float64) *Tensor { return opLeakyRelu.tensor(t, slope) }

// Softmax returns the softmax of t along dim.
func (t *Tensor) Softmax(dim int) *Tensor { return opSoftmax.tensor(t, dim) }

// LogSoftmax returns the log-softmax of t along dim.
func (t *Tensor) LogSoftmax(dim int) *Tensor { return opLogSoftmax.tensor(t, dim) }

// LogSumExp returns log(sum(exp(t))) over dims.
func (t *Tensor) LogSumExp(dims []int64, keepDim bool) *Tensor {
	return opLogSumExp.tensor(t, dims, keepDim)
}

// Sum returns the sum of all elements.
func (t *Tensor) Sum() *Tensor { return opSum.tensor(t) }

// SumDims returns the sum over dims.
func (t *Tensor) SumDims(dims []int64, keepDim bool) *Tensor {
	return opSumDims.tensor(t, dims, keepDim)
}

// Mean returns the mean of all elements.
func (t *Tensor) Mean() *Tensor { return opMean.tensor(t) }

// MeanDims returns the mean over dims.
func (t *Tensor) MeanDims(dims []int64, keepDim bool) *Tensor {
	return opMeanDims.tensor(t, dims, keepDim)
}

// Max returns the largest element.
func (t *Tensor) Max() *Tensor { return opMax.tensor(t) }

// MaxDim returns the largest values along dim and their indices.
func (t *Tensor) MaxDim(dim int, keepDim bool) (values, indices *Tensor) {
	return opMaxDim.pair(t, dim, keepDim)
}

// Min returns the smallest element.
func (t *Tensor) Min() *Tensor { return opMin.tensor(t) }

// MinDim returns the smallest values along dim and their indices.
func (t *Tensor) MinDim(dim int, keepDim bool) (values, indices *Tensor) {
	return opMinDim.pair(t, dim, keepDim)
}

// ArgMax returns the indices of the largest values along dim.
func (t *Tensor) ArgMax(dim int, keepDim bool) *Tensor { return opArgMax.tensor(t, dim, keepDim) }

// ArgMin returns the indices of the smallest values along dim.
func (t *Tensor) ArgMin(dim int, keepDim bool) *Tensor { return opArgMin.tensor(t, dim, keepDim) }

// Norm returns the Euclidean norm of all elements.
func (t *Tensor) Norm() *Tensor { return opNorm.tensor(t) }

// NormDims returns the p-norm over dims.
func (t *Tensor) NormDims(p float64, dims []int64, keepDim bool) *Tensor {
	return opNorm.tensor(t, p, dims, keepDim)
}

// Gt returns t > o elementwise (bool).
func (t *Tensor) Gt(o *Tensor) *Tensor { return opGt.tensor(t, o) }

// GtScalar returns t > s elementwise (bool).
func (t *Tensor) GtScalar(s float64) *Tensor { return opGtScalar.tensor(t, s) }

// Ge returns t >= o elementwise (bool).
func (t *Tensor) Ge(o *Tensor) *Tensor { return opGe.tensor(t, o) }

// GeScalar returns t >= s elementwise (bool).
func (t *Tensor) GeScalar(s float64) *Tensor { return opGeScalar.tensor(t, s) }

// Lt returns t < o elementwise (bool).
func (t *Tensor) Lt(o *Tensor) *Tensor { return opLt.tensor(t, o) }

// LtScalar returns t < s elementwise (bool).
func (t *Tensor) LtScalar(s float64) *Tensor { return opLtScalar.tensor(t, s) }

// Le returns t <= o elementwise (bool).
func (t *Tensor) Le(o *Tensor) *Tensor { return opLe.tensor(t, o) }

// LeScalar returns t <= s elementwise (bool).
func (t *Tensor) LeScalar(s float64) *Tensor { return opLeScalar.tensor(t, s) }

// Eq returns t == o elementwise (bool).
func (t *Tensor) Eq(o *Tensor) *Tensor { return opEq.tensor(t, o) }

// EqScalar returns t == s elementwise (bool).
func (t *Tensor) EqScalar(s float64) *Tensor { return opEqScalar.tensor(t, s) }

// Ne returns t != o elementwise (bool).
func (t *Tensor) Ne(o *Tensor) *Tensor { return opNe.tensor(t, o) }

// LogicalAnd returns t && o elementwise.
func (t *Tensor) LogicalAnd(o *Tensor) *Tensor { return opLogicalAnd.tensor(t, o) }

// LogicalOr returns t || o elementwise.
func (t *Tensor) LogicalOr(o *Tensor) *Tensor { return opLogicalOr.tensor(t, o) }

// LogicalNot returns !t elementwise.
func (t *Tensor) LogicalNot() *Tensor { return opLogicalNot.tensor(t) }

// IsNaN returns whether each element is NaN.
func (t *Tensor) IsNaN() *Tensor { return opIsNaN.tensor(t) }

// Where returns a where cond is true and b elsewhere.
func Where(cond, a, b *Tensor) *Tensor { return opWhere.tensor(cond, a, b) }

// MaskedFill returns t with the elements where mask is true set to v.
func (t *Tensor) MaskedFill(mask *Tensor, v float64) *Tensor { return opMaskedFill.tensor(t, mask, v) }

// MaskedSelect returns the elements of t where mask is true, as a 1-d tensor.
func (t *Tensor) MaskedSelect(mask *Tensor) *Tensor { return opMaskedSel.tensor(t, mask) }

// IndexSelect returns the entries of t at the int64 indices along dim.
func (t *Tensor) IndexSelect(dim int, index *Tensor) *Tensor {
	return opIndexSelect.tensor(t, dim, index)
}

// Gather returns t[index[i][j]][j] (dim 0) and the like along dim.
func (t *Tensor) Gather(dim int, index *Tensor) *Tensor { return opGather.tensor(t, dim, index) }

// ScatterAdd returns t with src added at index along dim.
func (t *Tensor) ScatterAdd(dim int, index, src *Tensor) *Tensor {
	return opScatterAdd.tensor(t, dim, index, src)
}

// IndexAdd returns t with the slices of src added at the 1-d index along dim.
func (t *Tensor) IndexAdd(dim int, index, src *Tensor) *Tensor {
	return opIndexAdd.tensor(t, dim, index, src)
}

// EmbeddingBagSum returns, for each bag k, the sum of the rows of t at
// indices[offsets[k]:offsets[k+1]] (the last bag runs to the end; aten::embedding_bag, mode sum).
func (t *Tensor) EmbeddingBagSum(indices, offsets *Tensor) *Tensor {
	ts, err := opEmbedBag.tensors(t, indices, offsets, false, 0, false, none, false)
	if err != nil {
		return errTensor(err)
	}
	closeTensors(ts[1:])
	return ts[0]
}

// Cat concatenates tensors along dim.
func Cat(ts []*Tensor, dim int) *Tensor { return opCat.tensor(ts, dim) }

// Stack stacks tensors along a new dim.
func Stack(ts []*Tensor, dim int) *Tensor { return opStack.tensor(ts, dim) }

// Split splits t into chunks of size along dim (the last may be smaller).
func (t *Tensor) Split(size int64, dim int) ([]*Tensor, error) { return opSplit.tensors(t, size, dim) }

// SplitSizes splits t into chunks of the given sizes along dim.
func (t *Tensor) SplitSizes(sizes []int64, dim int) ([]*Tensor, error) {
	return opSplitSizes.tensors(t, sizes, dim)
}

// Narrow returns the slice [start, start+length) of t along dim (a view).
func (t *Tensor) Narrow(dim int, start, length int64) *Tensor {
	return opNarrow.tensor(t, dim, start, length)
}

// Select returns t indexed at index along dim, which is removed (a view).
func (t *Tensor) Select(dim int, index int64) *Tensor { return opSelect.tensor(t, dim, index) }

// Transpose swaps dims d0 and d1 (a view).
func (t *Tensor) Transpose(d0, d1 int) *Tensor { return opTranspose.tensor(t, d0, d1) }

// Permute reorders the dims of t (a view).
func (t *Tensor) Permute(dims ...int64) *Tensor { return opPermute.tensor(t, dims) }

// Reshape returns t with the given shape (-1 infers one size).
func (t *Tensor) Reshape(shape ...int64) *Tensor { return opReshape.tensor(t, shape) }

// View returns a view of the contiguous t with the given shape.
func (t *Tensor) View(shape ...int64) *Tensor { return opView.tensor(t, shape) }

// Flatten merges dims start..end (inclusive; negative counts from the end).
func (t *Tensor) Flatten(start, end int) *Tensor { return opFlatten.tensor(t, start, end) }

// Squeeze removes dim when its size is 1.
func (t *Tensor) Squeeze(dim int) *Tensor { return opSqueeze.tensor(t, dim) }

// Unsqueeze inserts a dim of size 1 at dim.
func (t *Tensor) Unsqueeze(dim int) *Tensor { return opUnsqueeze.tensor(t, dim) }

// Repeat tiles t the given number of times along each dim.
func (t *Tensor) Repeat(times ...int64) *Tensor { return opRepeat.tensor(t, times) }

// Expand broadcasts t to shape without copying (-1 keeps a size).
func (t *Tensor) Expand(shape ...int64) *Tensor { return opExpand.tensor(t, shape) }

// Triu returns the upper triangle of a matrix from the given diagonal up.
func (t *Tensor) Triu(diagonal int) *Tensor { return opTriu.tensor(t, diagonal) }

// Cdist returns the pairwise p-norm distances between the rows of x1 (n,d) and x2 (m,d).
func Cdist(x1, x2 *Tensor, p float64) *Tensor { return opCdist.tensor(x1, x2, p) }

// CartesianProd returns the cartesian product of 1-d tensors, one row per combination.
func CartesianProd(ts ...*Tensor) *Tensor { return opCartesian.tensor(ts) }

// OneHot returns the int64 one-hot encoding of the int64 t with n classes.
func (t *Tensor) OneHot(n int) *Tensor { return opOneHot.tensor(t, n) }

// Clamp limits t to [lo, hi].
func (t *Tensor) Clamp(lo, hi float64) *Tensor { return opClamp.tensor(t, lo, hi) }

// ClampMin limits t from below.
func (t *Tensor) ClampMin(lo float64) *Tensor { return opClamp.tensor(t, lo, none) }

// ClampMax limits t from above.
func (t *Tensor) ClampMax(hi float64) *Tensor { return opClamp.tensor(t, none, hi) }

// TopK returns the k largest (or smallest) values along dim and their indices.
func (t *Tensor) TopK(k int, dim int, largest bool) (values, indices *Tensor) {
	return opTopK.pair(t, k, dim, largest, true)
}

// Sort sorts t along dim and returns the values and their original indices.
func (t *Tensor) Sort(dim int, descending bool) (values, indices *Tensor) {
	return opSort.pair(t, dim, descending)
}

// Flip reverses the order of t's elements along each of dims.
func (t *Tensor) Flip(dims ...int64) *Tensor { return opFlip.tensor(t, dims) }

// SearchSorted returns, for each entry of values, the number of entries of
// the matching row of sorted (sorted ascending along its last dimension) that
// are below it, or at most it when right is true: the index at which it would
// be inserted. sorted and values have the same leading dimensions (or sorted
// is 1-d); the result is int64 in values' shape.
func SearchSorted(sorted, values *Tensor, right bool) *Tensor {
	return opSearchSort.tensor(sorted, values, kw{"right", right})
}

// Nonzero returns the indices of the non-zero elements, one row each.
func (t *Tensor) Nonzero() *Tensor { return opNonzero.tensor(t) }

// Multinomial draws n indices per row with probabilities proportional to t.
func (t *Tensor) Multinomial(n int64, replacement bool) *Tensor {
	return opMultinomial.tensor(t, n, replacement)
}

// Clone returns a copy of t that autograd tracks.
func (t *Tensor) Clone() *Tensor { return opClone.tensor(t) }

// Detach returns t cut from the autograd graph (sharing its data).
func (t *Tensor) Detach() *Tensor { return opDetach.tensor(t) }

// Contiguous returns t laid out contiguously in memory.
func (t *Tensor) Contiguous() *Tensor { return opContiguous.tensor(t) }

// ZerosLike returns zeros shaped like t.
func (t *Tensor) ZerosLike() *Tensor { return opZerosLike.tensor(t) }

// OnesLike returns ones shaped like t.
func (t *Tensor) OnesLike() *Tensor { return opOnesLike.tensor(t) }

// RandnLike returns standard normal samples shaped like t.
func (t *Tensor) RandnLike() *Tensor { return opRandnLike.tensor(t) }

// RandLike returns uniform [0,1) samples shaped like t.
func (t *Tensor) RandLike() *Tensor { return opRandLike.tensor(t) }
