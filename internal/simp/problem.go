package simp

import (
	"errors"
	"fmt"
	"math"
)

// Axis is the direction of a support or a load.
type Axis int

// The two axes of the plane; the dof of node n along axis a is 2n+a.
const (
	X Axis = 0
	Y Axis = 1
)

// String returns "x" or "y".
func (a Axis) String() string {
	if a == Y {
		return "y"
	}
	return "x"
}

// Fixed is a support: the displacement of Node along Axis is zero.
type Fixed struct {
	Node int
	Axis Axis
}

// Load is a point force of Value along Axis at Node.
type Load struct {
	Node  int
	Axis  Axis
	Value float64
}

// Problem is one compliance minimisation problem with its SIMP settings.
type Problem struct {
	NelX, NelY int     // elements along x and y
	VolFrac    float64 // target volume fraction (also the starting density)
	Penal      float64 // SIMP penalty p in E = x^p
	RMin       float64 // filter radius in elements
	Nu         float64 // Poisson's ratio
	XMin       float64 // lower bound on the densities
	Iterations int     // OC iterations (no convergence stop)
	Move       float64 // OC move limit
	Damping    float64 // OC damping exponent
	Fixed      []Fixed
	Loads      []Load
}

// Defaults of the settings a spec may leave out (docs/design.md section 7).
const (
	DefaultPenal      = 3.0
	DefaultRMin       = 1.5
	DefaultNu         = 1.0 / 3
	DefaultXMin       = 0.001
	DefaultIterations = 100
	DefaultMove       = 0.2
	DefaultDamping    = 0.5
)

// maxElements bounds the mesh so that a typo in a spec cannot exhaust memory.
const maxElements = 1 << 22

// NewProblem returns a problem on an nelx x nely mesh with the default
// settings and no supports or loads.
func NewProblem(nelx, nely int, volfrac float64) Problem {
	return Problem{
		NelX: nelx, NelY: nely, VolFrac: volfrac,
		Penal: DefaultPenal, RMin: DefaultRMin, Nu: DefaultNu, XMin: DefaultXMin,
		Iterations: DefaultIterations, Move: DefaultMove, Damping: DefaultDamping,
	}
}

// Nodes returns the number of nodes of the mesh.
func (p Problem) Nodes() int { return (p.NelX + 1) * (p.NelY + 1) }

// Node returns the number of the node at column ix and row iy (iy = 0 at the top).
func (p Problem) Node(ix, iy int) int { return ix*(p.NelY+1) + iy }

// NodeXY returns the column and row of node n.
func (p Problem) NodeXY(n int) (ix, iy int) { return n / (p.NelY + 1), n % (p.NelY + 1) }

// ErrRigidBody is wrapped by the error of a problem whose supports leave a
// rigid-body mode.
var ErrRigidBody = errors.New("supports leave a rigid-body mode")

// ErrNoLoad is wrapped by the error of a problem without a nonzero load on a
// free dof.
var ErrNoLoad = errors.New("no nonzero load on a free dof")

// Validate reports the first thing wrong with p: sizes, settings, nodes out
// of range, non-finite numbers, no effective load, or supports that leave a
// rigid-body mode.
func (p Problem) Validate() error {
	if err := p.validateSettings(); err != nil {
		return err
	}
	n := p.Nodes()
	for i, f := range p.Fixed {
		if f.Node < 0 || f.Node >= n {
			return fmt.Errorf("fixed[%d]: node %d out of range [0, %d)", i, f.Node, n)
		}
		if f.Axis != X && f.Axis != Y {
			return fmt.Errorf("fixed[%d]: bad axis %d", i, f.Axis)
		}
	}
	for i, l := range p.Loads {
		if l.Node < 0 || l.Node >= n {
			return fmt.Errorf("loads[%d]: node %d out of range [0, %d)", i, l.Node, n)
		}
		if l.Axis != X && l.Axis != Y {
			return fmt.Errorf("loads[%d]: bad axis %d", i, l.Axis)
		}
		if !finite(l.Value) {
			return fmt.Errorf("loads[%d]: value %v is not finite", i, l.Value)
		}
	}
	if !p.hasLoad() {
		return ErrNoLoad
	}
	if p.RigidBody() {
		return fmt.Errorf("%w (%s)", ErrRigidBody, p.supportSummary())
	}
	return nil
}

func (p Problem) validateSettings() error {
	switch {
	case p.NelX < 1 || p.NelY < 1:
		return fmt.Errorf("nelx %d, nely %d: both must be at least 1", p.NelX, p.NelY)
	case p.NelX > maxElements || p.NelY > maxElements || p.NelX*p.NelY > maxElements:
		return fmt.Errorf("nelx %d x nely %d: more than %d elements", p.NelX, p.NelY, maxElements)
	}
	for _, f := range []struct {
		name   string
		v      float64
		lo, hi float64
		openLo bool
	}{
		{"xmin", p.XMin, 0, 1, true},
		{"volfrac", p.VolFrac, p.XMin, 1, false},
		{"penal", p.Penal, 1, 20, false},
		{"rmin", p.RMin, 0, math.MaxFloat64, true},
		{"nu", p.Nu, -1, 0.5, true},
		{"move", p.Move, 0, 1, true},
		{"damping", p.Damping, 0, 10, true},
	} {
		if !finite(f.v) || f.v > f.hi || f.v < f.lo || (f.openLo && f.v == f.lo) {
			open := "["
			if f.openLo {
				open = "("
			}
			return fmt.Errorf("%s %v: must be in %s%v, %v]", f.name, f.v, open, f.lo, f.hi)
		}
	}
	if p.Nu == 0.5 {
		return fmt.Errorf("nu %v: must be below 0.5", p.Nu)
	}
	if p.Iterations < 0 || p.Iterations > 100000 {
		return fmt.Errorf("iterations %d: must be in [0, 100000]", p.Iterations)
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// hasLoad reports whether some load is nonzero on a dof that is not fixed.
func (p Problem) hasLoad() bool {
	fixed := p.fixedDofs()
	f := make(map[int]float64)
	for _, l := range p.Loads {
		if d := 2*l.Node + int(l.Axis); !fixed[d] {
			f[d] += l.Value
		}
	}
	for _, v := range f {
		if v != 0 {
			return true
		}
	}
	return false
}

func (p Problem) fixedDofs() map[int]bool {
	m := make(map[int]bool, len(p.Fixed))
	for _, f := range p.Fixed {
		m[2*f.Node+int(f.Axis)] = true
	}
	return m
}

// RigidBody reports whether the supports leave a rigid-body mode. The mesh
// is connected and every element has a positive stiffness, so the reduced
// stiffness matrix is singular exactly when some rigid motion
// u(x, y) = (a - t*y, b + t*x) vanishes at every fixed dof. An x-support at
// (x, y) imposes a - t*y = 0 and a y-support b + t*x = 0; the only solution
// is zero iff there are x- and y-supports and either the x-supports lie on
// two rows or the y-supports lie on two columns (otherwise the body can
// turn about the point where the one row and the one column meet).
func (p Problem) RigidBody() bool {
	rows := map[int]bool{} // rows (iy) of the x-supports
	cols := map[int]bool{} // columns (ix) of the y-supports
	for _, f := range p.Fixed {
		ix, iy := p.NodeXY(f.Node)
		if f.Axis == X {
			rows[iy] = true
		} else {
			cols[ix] = true
		}
	}
	return len(rows) == 0 || len(cols) == 0 || (len(rows) < 2 && len(cols) < 2)
}

func (p Problem) supportSummary() string {
	nx, ny := 0, 0
	for _, f := range p.Fixed {
		if f.Axis == X {
			nx++
		} else {
			ny++
		}
	}
	return fmt.Sprintf("%d x-supports, %d y-supports", nx, ny)
}
