// Package simp solves 2-d compliance minimisation by SIMP topology
// optimisation on a unit Q4 mesh, and generates the topology data set from
// random problems.
//
// Conventions (docs/design.md section 7): nelx x nely square elements; node
// n = ix*(nely+1) + iy (column-major, iy = 0 at the top), dofs 2n (x) and
// 2n+1 (y); element e = ex*nely + ey with top88's dof order (lower-left,
// lower-right, upper-right, upper-left, x then y each). Stiffness
// E_e = x_e^p with x in [xmin, 1]; top88's closed-form plane-stress element
// matrix; Sigmund's sensitivity filter; optimality criteria with a move
// limit and damping, the Lagrange multiplier by bisection; a fixed number of
// iterations. Each linear solve is a band Cholesky (LAPACK dpbtrf/dpbtrs,
// through OpenBLAS by default) of the stiffness matrix with the fixed dofs
// eliminated.
//
// Densities leave the package as images: row-major (nely, nelx), row 0 at
// the top.
package simp
