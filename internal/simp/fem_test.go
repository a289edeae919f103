package simp

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"
)

func TestElementStiffness(t *testing.T) {
	for _, nu := range []float64{0, 0.3, 1.0 / 3, 0.45} {
		k := ElementStiffness(nu)
		km := mat.NewDense(8, 8, k[:])
		for i := range 8 {
			for j := range 8 {
				if math.Abs(k[i*8+j]-k[j*8+i]) > 1e-15 {
					t.Fatalf("nu %v: K[%d,%d] %v != K[%d,%d] %v", nu, i, j, k[i*8+j], j, i, k[j*8+i])
				}
			}
		}
		// Local node coordinates (x right, y up): lower-left, lower-right, upper-right, upper-left.
		xy := [4][2]float64{{0, 0}, {1, 0}, {1, 1}, {0, 1}}
		modes := make([][]float64, 3)
		for _, c := range xy {
			modes[0] = append(modes[0], 1, 0)
			modes[1] = append(modes[1], 0, 1)
			modes[2] = append(modes[2], -c[1], c[0]) // rotation about the origin
		}
		for m, u := range modes {
			var f mat.VecDense
			f.MulVec(km, mat.NewVecDense(8, u))
			if mat.Norm(&f, math.Inf(1)) > 1e-14 {
				t.Errorf("nu %v: rigid-body mode %d gives forces %v", nu, m, f.RawVector().Data)
			}
		}
		var eig mat.EigenSym
		if !eig.Factorize(mat.NewSymDense(8, k[:]), false) {
			t.Fatal("eigendecomposition failed")
		}
		vals := eig.Values(nil) // ascending
		for i, v := range vals {
			if (i < 3) != (math.Abs(v) < 1e-12) || v < -1e-12 {
				t.Errorf("nu %v: eigenvalues %v: want exactly three zeros and five positive", nu, vals)
				break
			}
		}
	}
}

func TestEdofsOrder(t *testing.T) {
	// Element (ex 1, ey 0) of a 3x2 mesh: upper-left node 3, lower-left 4,
	// lower-right 7, upper-right 6.
	got := edofs(2, 2)
	want := [8]int{8, 9, 14, 15, 12, 13, 6, 7}
	if got != want {
		t.Fatalf("edofs = %v, want %v", got, want)
	}
}

// TestPatch loads the right edge of a solid block with a uniform unit
// traction; Q4 elements reproduce the uniform stress exactly:
// u_x = x/E and u_y = nu*(iy - iy0)/E (y up, iy down).
func TestPatch(t *testing.T) {
	p := NewProblem(4, 3, 1)
	p.Nu = 0.3
	for iy := 0; iy <= p.NelY; iy++ {
		p.Fixed = append(p.Fixed, Fixed{Node: p.Node(0, iy), Axis: X})
		w := 1.0
		if iy == 0 || iy == p.NelY {
			w = 0.5
		}
		p.Loads = append(p.Loads, Load{Node: p.Node(p.NelX, iy), Axis: X, Value: w})
	}
	const iy0 = 1
	p.Fixed = append(p.Fixed, Fixed{Node: p.Node(0, iy0), Axis: Y})
	m := newFEM(p, nil)
	x := filled(p.NelX*p.NelY, 1.0)
	c, err := m.solve(x, make([]float64, len(x)))
	if err != nil {
		t.Fatal(err)
	}
	u := m.displacements()
	for n := range p.Nodes() {
		ix, iy := p.NodeXY(n)
		wx, wy := float64(ix), p.Nu*float64(iy-iy0)
		if math.Abs(u[2*n]-wx) > 1e-10 || math.Abs(u[2*n+1]-wy) > 1e-10 {
			t.Fatalf("node %d (%d,%d): u = (%v, %v), want (%v, %v)", n, ix, iy, u[2*n], u[2*n+1], wx, wy)
		}
	}
	// Work of the loads: traction 1 on height 3 times the stretch 4.
	if want := 3.0 * 4; math.Abs(c-want) > 1e-10 {
		t.Fatalf("compliance %v, want %v", c, want)
	}
}

// denseSolve assembles the full stiffness matrix of design x, removes the
// fixed dofs and solves with a dense Cholesky: an oracle independent of the
// band storage.
func denseSolve(t *testing.T, p Problem, x []float64) []float64 {
	ndof := 2 * p.Nodes()
	k := mat.NewSymDense(ndof, nil)
	ke := ElementStiffness(p.Nu)
	for e, xe := range x {
		d := edofs(p.NelY, e)
		for a := range 8 {
			for b := a; b < 8; b++ {
				i, j := d[a], d[b]
				k.SetSym(i, j, k.At(i, j)+math.Pow(xe, p.Penal)*ke[a*8+b])
			}
		}
	}
	fixed := p.fixedDofs()
	var free []int
	for d := range ndof {
		if !fixed[d] {
			free = append(free, d)
		}
	}
	kr := mat.NewSymDense(len(free), nil)
	f := mat.NewVecDense(len(free), nil)
	for i, di := range free {
		for j := i; j < len(free); j++ {
			kr.SetSym(i, j, k.At(di, free[j]))
		}
	}
	for _, l := range p.Loads {
		for i, d := range free {
			if d == 2*l.Node+int(l.Axis) {
				f.SetVec(i, f.AtVec(i)+l.Value)
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(kr) {
		t.Fatal("dense Cholesky failed")
	}
	var ur mat.VecDense
	if err := ch.SolveVecTo(&ur, f); err != nil {
		t.Fatal(err)
	}
	u := make([]float64, ndof)
	for i, d := range free {
		u[d] = ur.AtVec(i)
	}
	return u
}

func TestBandMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 6 {
		p := smallRandomProblem(rng, 5+trial, 3+trial%3)
		x := make([]float64, p.NelX*p.NelY)
		for i := range x {
			x[i] = 0.001 + rng.Float64()
		}
		want := denseSolve(t, p, x)
		for _, chol := range []BandCholesky{nil, gonum.Implementation{}} {
			m := newFEM(p, chol)
			if _, err := m.solve(x, make([]float64, len(x))); err != nil {
				t.Fatal(err)
			}
			got := m.displacements()
			scale := 0.0
			for _, v := range want {
				scale = max(scale, math.Abs(v))
			}
			for d := range got {
				if math.Abs(got[d]-want[d]) > 1e-9*scale {
					t.Fatalf("trial %d (%T): u[%d] = %v, dense %v", trial, chol, d, got[d], want[d])
				}
			}
		}
	}
}

// smallRandomProblem draws supports and loads on an nelx x nely mesh until
// the problem is valid.
func smallRandomProblem(rng *rand.Rand, nelx, nely int) Problem {
	for {
		p := NewProblem(nelx, nely, 0.2+0.6*rng.Float64())
		for range 1 + rng.IntN(4) {
			p.Fixed = append(p.Fixed, Fixed{Node: rng.IntN(p.Nodes()), Axis: Axis(rng.IntN(2))})
		}
		for range 1 + rng.IntN(3) {
			p.Loads = append(p.Loads, Load{Node: rng.IntN(p.Nodes()), Axis: Axis(rng.IntN(2)), Value: rng.NormFloat64()})
		}
		if p.Validate() == nil {
			return p
		}
	}
}

// TestRigidBodyRule compares Problem.RigidBody with the null space of the
// reduced stiffness matrix of a solid 3x2 mesh for many support sets.
func TestRigidBodyRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	seen := map[bool]int{}
	for range 400 {
		p := NewProblem(3, 2, 1)
		for range rng.IntN(5) {
			p.Fixed = append(p.Fixed, Fixed{Node: rng.IntN(p.Nodes()), Axis: Axis(rng.IntN(2))})
		}
		singular := minEigenReduced(p) < 1e-10
		if singular != p.RigidBody() {
			t.Fatalf("supports %v: RigidBody %v, but the reduced matrix singular = %v", p.Fixed, p.RigidBody(), singular)
		}
		seen[singular]++
	}
	if seen[true] < 20 || seen[false] < 20 {
		t.Fatalf("too few cases of a kind: %v", seen)
	}
	// The hard cases by hand: x on one row with y in one column turns
	// about their meeting point; two columns of y-supports do not.
	p := NewProblem(3, 2, 1)
	p.Fixed = []Fixed{{p.Node(0, 1), X}, {p.Node(3, 1), X}, {p.Node(2, 0), Y}}
	if !p.RigidBody() || minEigenReduced(p) > 1e-10 {
		t.Fatal("x-supports on one row and one y-support must leave a rotation")
	}
	p.Fixed = append(p.Fixed, Fixed{p.Node(1, 2), Y})
	if p.RigidBody() || minEigenReduced(p) < 1e-10 {
		t.Fatal("y-supports in two columns must stop the rotation")
	}
}

// minEigenReduced returns the smallest eigenvalue of the solid mesh's
// stiffness matrix without the fixed dofs.
func minEigenReduced(p Problem) float64 {
	ke := ElementStiffness(p.Nu)
	fixed := p.fixedDofs()
	idx := map[int]int{}
	for d := range 2 * p.Nodes() {
		if !fixed[d] {
			idx[d] = len(idx)
		}
	}
	k := mat.NewSymDense(len(idx), nil)
	for e := range p.NelX * p.NelY {
		d := edofs(p.NelY, e)
		for a := range 8 {
			for b := a; b < 8; b++ {
				i, ok1 := idx[d[a]]
				j, ok2 := idx[d[b]]
				if ok1 && ok2 {
					k.SetSym(i, j, k.At(i, j)+ke[a*8+b])
				}
			}
		}
	}
	var eig mat.EigenSym
	eig.Factorize(k, false)
	return eig.Values(nil)[0]
}

func TestFailedFactorisationIsError(t *testing.T) {
	p := mbbSized(6, 2, 0.3)
	p.Nu = 1.5 // bypasses Validate: makes the element matrix negative definite
	m := newFEM(p, nil)
	x := filled(p.NelX*p.NelY, 0.5)
	if _, err := m.solve(x, make([]float64, len(x))); !errors.Is(err, ErrNotPositiveDefinite) {
		t.Fatalf("err = %v, want ErrNotPositiveDefinite", err)
	}
}

func TestSolveRejectsRigidBody(t *testing.T) {
	p := mbb(0.3)
	p.Fixed = p.Fixed[:len(p.Fixed)-1] // no y-support left
	if _, err := Solve(context.Background(), p, Options{}); !errors.Is(err, ErrRigidBody) {
		t.Fatalf("err = %v, want ErrRigidBody", err)
	}
	p = mbb(0.3)
	p.Loads = []Load{{Node: 0, Axis: X, Value: 1}} // on a fixed dof
	if _, err := Solve(context.Background(), p, Options{}); !errors.Is(err, ErrNoLoad) {
		t.Fatalf("err = %v, want ErrNoLoad", err)
	}
}
