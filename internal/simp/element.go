package simp

// ElementStiffness returns top88's closed-form stiffness matrix of a unit
// square Q4 element in plane stress with Young's modulus 1 and Poisson's
// ratio nu, row-major 8 x 8 in top88's dof order (lower-left, lower-right,
// upper-right, upper-left; x then y each).
func ElementStiffness(nu float64) [64]float64 {
	a11 := [4][4]float64{{12, 3, -6, -3}, {3, 12, 3, 0}, {-6, 3, 12, -3}, {-3, 0, -3, 12}}
	a12 := [4][4]float64{{-6, -3, 0, 3}, {-3, -6, -3, -6}, {0, -3, -6, 3}, {3, -6, 3, -6}}
	b11 := [4][4]float64{{-4, 3, -2, 9}, {3, -4, -9, 4}, {-2, -9, -4, -3}, {9, 4, -3, -4}}
	b12 := [4][4]float64{{2, -3, 4, -9}, {-3, 2, 9, -2}, {4, 9, 2, 3}, {-9, -2, 3, 2}}
	scale := 1 / (1 - nu*nu) / 24
	var k [64]float64
	for i := range 4 {
		for j := range 4 {
			k[i*8+j] = scale * (a11[i][j] + nu*b11[i][j])
			k[(i+4)*8+j+4] = k[i*8+j]
			k[i*8+j+4] = scale * (a12[i][j] + nu*b12[i][j])
			k[(i+4)*8+j] = scale * (a12[j][i] + nu*b12[j][i]) // the transposed block
		}
	}
	return k
}
