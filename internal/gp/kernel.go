package gp

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Kernel selects the stationary covariance function. Both are
// automatic-relevance-determination (ARD) kernels with one length-scale per
// input dimension and an output scale s:
//
//	RBF:      k(x, z) = s exp(-r²/2)
//	Matern52: k(x, z) = s (1 + √5 r + 5r²/3) exp(-√5 r)
//
// with r² = Σ_k (x_k - z_k)² / ℓ_k².
type Kernel int

const (
	// RBF is the squared-exponential kernel.
	RBF Kernel = iota
	// Matern52 is the Matérn kernel with smoothness 5/2.
	Matern52
)

// String returns the kernel's command-line name.
func (k Kernel) String() string {
	switch k {
	case RBF:
		return "rbf"
	case Matern52:
		return "matern52"
	}
	return fmt.Sprintf("Kernel(%d)", int(k))
}

// ParseKernel returns the kernel named s ("rbf" or "matern52").
func ParseKernel(s string) (Kernel, error) {
	switch strings.ToLower(s) {
	case "rbf", "se", "squared-exponential":
		return RBF, nil
	case "matern52", "matern-5/2", "matern":
		return Matern52, nil
	}
	return 0, fmt.Errorf("gp: unknown kernel %q (want rbf or matern52)", s)
}

func (k Kernel) valid() bool { return k == RBF || k == Matern52 }

// corr returns the correlation k/s at squared scaled distance r2 and the
// derivative factor κ such that ∂(k/s)/∂x̂ = -κ (x̂ - ẑ).
func (k Kernel) corr(r2 float64) (c, kappa float64) {
	if r2 < 0 {
		r2 = 0 // rounding in the expansion |a|²+|b|²-2a·b
	}
	switch k {
	case Matern52:
		r := math.Sqrt(5 * r2)
		e := math.Exp(-r)
		return (1 + r + 5*r2/3) * e, 5.0 / 3.0 * (1 + r) * e
	default:
		e := math.Exp(-0.5 * r2)
		return e, e
	}
}

// rowSqNorms returns the squared Euclidean norm of each row of a.
func rowSqNorms(a blas64.General, dst []float64) []float64 {
	if cap(dst) < a.Rows {
		dst = make([]float64, a.Rows)
	}
	dst = dst[:a.Rows]
	for i := 0; i < a.Rows; i++ {
		row := a.Data[i*a.Stride : i*a.Stride+a.Cols]
		s := 0.0
		for _, v := range row {
			s += v * v
		}
		dst[i] = s
	}
	return dst
}

// crossCorr fills c (and kappa if non-nil) with the correlations between
// the rows of the scaled inputs a (n x d) and b (m x d): c_ij = k(a_i, b_j)/s.
// aSq and bSq are the rows' squared norms. The distances come from one
// matrix product, so the cost is a dgemm plus n·m exponentials.
func crossCorr(k Kernel, a blas64.General, aSq []float64, b blas64.General, bSq []float64, c, kappa blas64.General) {
	// c = a bᵀ first, then the elementwise map in place.
	blas64.Gemm(blas.NoTrans, blas.Trans, 1, a, b, 0, c)
	parallelFor(a.Rows, b.Rows, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := c.Data[i*c.Stride : i*c.Stride+c.Cols]
			var krow []float64
			if kappa.Data != nil {
				krow = kappa.Data[i*kappa.Stride : i*kappa.Stride+kappa.Cols]
			}
			ai := aSq[i]
			for j, ab := range row {
				cv, kv := k.corr(ai + bSq[j] - 2*ab)
				row[j] = cv
				if krow != nil {
					krow[j] = kv
				}
			}
		}
	})
}

// parallelFor splits [0, n) into contiguous chunks, one per processor, when
// the work (n rows of cols elements) is large enough to pay for goroutines.
func parallelFor(n, cols int, f func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	if p == 1 || n*cols < 1<<15 || n < 2 {
		f(0, n)
		return
	}
	p = min(p, n)
	var wg sync.WaitGroup
	chunk := (n + p - 1) / p
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}

// general returns the blas64 view of a dense matrix.
func general(m *mat.Dense) blas64.General { return m.RawMatrix() }

// newGeneral allocates an r x c row-major matrix.
func newGeneral(r, c int) blas64.General {
	return blas64.General{Rows: r, Cols: c, Stride: max(c, 1), Data: make([]float64, r*c)}
}

// reshape returns g resized to r x c, reusing its storage when large enough.
func reshape(g blas64.General, r, c int) blas64.General {
	if cap(g.Data) < r*c {
		return newGeneral(r, c)
	}
	return blas64.General{Rows: r, Cols: c, Stride: max(c, 1), Data: g.Data[:r*c]}
}
