package simp

import (
	"context"
	"math"
	"testing"
)

// mbb returns DESIGN.md's 60x20 MBB beam: x fixed on the left edge, y fixed
// at the bottom-right node, a unit downward load at node 0, volfrac 0.5.
func mbb(nu float64) Problem { return mbbSized(60, 20, nu) }

// mbbSized is the MBB beam on an nelx x nely mesh.
func mbbSized(nelx, nely int, nu float64) Problem {
	p := NewProblem(nelx, nely, 0.5)
	p.Nu = nu
	for iy := 0; iy <= p.NelY; iy++ {
		p.Fixed = append(p.Fixed, Fixed{Node: p.Node(0, iy), Axis: X})
	}
	p.Fixed = append(p.Fixed, Fixed{Node: p.Node(p.NelX, p.NelY), Axis: Y})
	p.Loads = []Load{{Node: 0, Axis: Y, Value: -1}}
	return p
}

func TestMBB(t *testing.T) {
	for _, tc := range []struct {
		nu, first float64
	}{{0.3, 1007.0221}, {1.0 / 3, 1007.0226}} {
		p := mbb(tc.nu)
		res, err := Solve(context.Background(), p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("nu %.4f: first %.6f, it94 %.4f, final %.4f", tc.nu, res.ComplianceFirst, res.History[94], res.Compliance)
		if math.Abs(res.ComplianceFirst-tc.first) > 1e-4 {
			t.Errorf("nu %v: first compliance %.6f, want %.4f", tc.nu, res.ComplianceFirst, tc.first)
		}
	}
}
