package simp

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/blas"

	"github.com/tlbo-native/tlbo-native/internal/openblas"
)

// BandCholesky factorises and solves symmetric positive definite band
// systems in gonum's band storage (lapack.Float64 has both methods).
type BandCholesky interface {
	Dpbtrf(ul blas.Uplo, n, kd int, ab []float64, ldab int) bool
	Dpbtrs(ul blas.Uplo, n, kd, nrhs int, ab []float64, ldab int, b []float64, ldb int)
}

// ErrNotPositiveDefinite is wrapped by the error of a failed factorisation.
var ErrNotPositiveDefinite = errors.New("stiffness matrix is not positive definite")

// edofs returns the 8 dofs of element e in top88's order.
func edofs(nely, e int) [8]int {
	ex, ey := e/nely, e%nely
	ll := ex*(nely+1) + ey + 1 // lower-left node: one row below the upper-left
	lr := ll + nely + 1
	return [8]int{2 * ll, 2*ll + 1, 2 * lr, 2*lr + 1, 2 * (lr - 1), 2*(lr-1) + 1, 2 * (ll - 1), 2*(ll-1) + 1}
}

// fem is the finite-element model of one problem: the stiffness matrix with
// the fixed dofs eliminated, assembled in band storage (gonum's Upper, row i
// holding columns i..i+kd), and the workspace of its solves.
type fem struct {
	nel, ndof int
	penal     float64
	ke        [64]float64
	index     []int32    // per dof: free-dof index, or -1 when fixed
	free      [][8]int32 // per element: free-dof index of each local dof, or -1
	pos       []int32    // per element, per local pair a <= b: position in ab, or -1
	kePair    [36]float64
	n, kd     int // free dofs, half bandwidth
	ab        []float64
	f, u      []float64
	chol      BandCholesky
}

func newFEM(p Problem, chol BandCholesky) *fem {
	if chol == nil {
		chol = openblas.Lapack{}
	}
	m := &fem{nel: p.NelX * p.NelY, ndof: 2 * p.Nodes(), penal: p.Penal, ke: ElementStiffness(p.Nu), chol: chol}
	index := make([]int32, m.ndof)
	for _, f := range p.Fixed {
		index[2*f.Node+int(f.Axis)] = -1
	}
	for d := range index {
		if index[d] == 0 {
			index[d] = int32(m.n)
			m.n++
		}
	}
	m.free = make([][8]int32, m.nel)
	for e := range m.nel {
		lo, hi := int32(m.n), int32(-1)
		for a, d := range edofs(p.NelY, e) {
			i := index[d]
			m.free[e][a] = i
			if i >= 0 {
				lo, hi = min(lo, i), max(hi, i)
			}
		}
		m.kd = max(m.kd, int(hi-lo))
	}
	m.index = index
	m.pairs()
	m.f = make([]float64, m.n)
	for _, l := range p.Loads {
		if i := index[2*l.Node+int(l.Axis)]; i >= 0 {
			m.f[i] += l.Value
		}
	}
	m.ab = make([]float64, m.n*(m.kd+1))
	m.u = make([]float64, m.n)
	return m
}

// pairs precomputes where each element's upper-triangle entries land in ab.
func (m *fem) pairs() {
	ld := int32(m.kd + 1)
	m.pos = make([]int32, 0, 36*m.nel)
	k := 0
	for a := range 8 {
		for b := a; b < 8; b++ {
			m.kePair[k] = m.ke[a*8+b]
			k++
		}
	}
	for e := range m.nel {
		fr := &m.free[e]
		for a := range 8 {
			for b := a; b < 8; b++ {
				i, j := min(fr[a], fr[b]), max(fr[a], fr[b])
				if i < 0 {
					m.pos = append(m.pos, -1)
				} else {
					m.pos = append(m.pos, i*ld+j-i)
				}
			}
		}
	}
}

// solve assembles K(x), solves K u = f and returns the compliance f'u,
// filling ce with each element's u_e' K0 u_e.
func (m *fem) solve(x, ce []float64) (float64, error) {
	clear(m.ab)
	for e, xe := range x {
		E := pow(xe, m.penal)
		pos := m.pos[36*e : 36*e+36]
		for k, p := range pos {
			if p >= 0 {
				m.ab[p] += E * m.kePair[k]
			}
		}
	}
	if !m.chol.Dpbtrf(blas.Upper, m.n, m.kd, m.ab, m.kd+1) {
		return 0, ErrNotPositiveDefinite
	}
	copy(m.u, m.f)
	m.chol.Dpbtrs(blas.Upper, m.n, m.kd, 1, m.ab, m.kd+1, m.u, 1)
	c := 0.0
	for e := range m.nel {
		ce[e] = m.energy(e)
		c += pow(x[e], m.penal) * ce[e]
	}
	return c, nil
}

// energy returns u_e' K0 u_e of element e from the current solution.
func (m *fem) energy(e int) float64 {
	var ue [8]float64
	for a, i := range m.free[e] {
		if i >= 0 {
			ue[a] = m.u[i]
		}
	}
	s := 0.0
	for a := range 8 {
		row := m.ke[a*8 : a*8+8]
		t := 0.0
		for b, v := range ue {
			t += row[b] * v
		}
		s += ue[a] * t
	}
	return s
}

// displacements returns the full displacement vector (fixed dofs zero).
func (m *fem) displacements() []float64 {
	u := make([]float64, m.ndof)
	for d, i := range m.index {
		if i >= 0 {
			u[d] = m.u[i]
		}
	}
	return u
}

// pow is x^p with a fast path for the usual p = 3.
func pow(x, p float64) float64 {
	if p == 3 {
		return x * x * x
	}
	return math.Pow(x, p)
}
