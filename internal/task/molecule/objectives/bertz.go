package objectives

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tlbo-native/tlbo-native/internal/chem"
)

// BertzCT is rdkit.Chem.GraphDescriptors.BertzCT(mol) (cutoff 100, the distance
// matrices recomputed), ported from its Python, which RDKit's C++ lacks: atoms
// are put in symmetry classes by their sorted rows of the bond-order-weighted
// distance matrix (written with %.4f, the first 100 entries), connections of
// bonded pairs and of neighbour pairs around each atom are counted by class with
// bond-order weights, and the result is the information content of the
// connections plus that of the atom types (atomic numbers).
func BertzCT(m *chem.Mol) (float64, error) {
	const cutoff = 100
	n := m.NumAtoms()
	if n < 2 {
		return 0, nil
	}
	bonds, err := m.Bonds()
	if err != nil {
		return 0, err
	}
	atoms, err := m.Atoms()
	if err != nil {
		return 0, err
	}
	bd, err := m.DistanceMatrix(true)
	if err != nil {
		return 0, err
	}

	// _CreateBondDictEtc: bond orders (aromatic 1.5, otherwise the float of
	// RDKit's BondType value) and sorted neighbour lists.
	type pair struct{ a, b int }
	order := map[pair]float64{}
	neighbors := make([][]int, n)
	for _, b := range bonds {
		a1, a2 := b.Begin, b.End
		if a1 > a2 {
			a1, a2 = a2, a1
		}
		if b.IsAromatic || b.Type == chem.Aromatic {
			order[pair{a1, a2}] = 1.5
		} else {
			order[pair{a1, a2}] = float64(b.Type)
		}
		if !contains(neighbors[a1], a2) {
			neighbors[a1] = append(neighbors[a1], a2)
		}
		if !contains(neighbors[a2], a1) {
			neighbors[a2] = append(neighbors[a2], a1)
		}
	}
	for _, l := range neighbors {
		sort.Ints(l)
	}
	bondOrder := func(a, b int) float64 {
		if a > b {
			a, b = b, a
		}
		return order[pair{a, b}]
	}

	// _AssignSymmetryClasses: classes numbered from 1 in order of first appearance.
	classes := make([]int, n)
	seen := map[string]int{}
	row := make([]float64, n)
	for i := 0; i < n; i++ {
		copy(row, bd[i*n:(i+1)*n])
		sort.Float64s(row)
		k := len(row)
		if k > cutoff {
			k = cutoff
		}
		var sb strings.Builder
		for _, x := range row[:k] {
			sb.WriteString(strconv.FormatFloat(x, 'f', 4, 64))
			sb.WriteByte(',')
		}
		key := sb.String()
		idx, ok := seen[key]
		if !ok {
			idx = len(seen)
			seen[key] = idx
		}
		classes[i] = idx + 1
	}

	// The connection counts, in the Python dict's insertion order.
	type connKey struct{ a, b, c int }
	connIndex := map[connKey]int{}
	var conns []float64
	add := func(k connKey, v float64) {
		i, ok := connIndex[k]
		if !ok {
			i = len(conns)
			connIndex[k] = i
			conns = append(conns, 0)
		}
		conns[i] += v
	}
	typeIndex := map[int]int{}
	var types []float64
	for ai := 0; ai < n; ai++ {
		z := atoms[ai].AtomicNum
		i, ok := typeIndex[z]
		if !ok {
			i = len(types)
			typeIndex[z] = i
			types = append(types, 0)
		}
		types[i]++

		hinge := classes[ai]
		nb := neighbors[ai]
		for i, ni := range nb {
			niClass := classes[ni]
			oi := bondOrder(ai, ni)
			if oi > 1 && ni > ai {
				// bond_i_order * (bond_i_order - 1) / 2; -1 marks a two-class key.
				add(connKey{min(hinge, niClass), -1, max(hinge, niClass)}, oi*(oi-1)/2)
			}
			for _, nj := range nb[i+1:] {
				njClass := classes[nj]
				oj := bondOrder(ai, nj)
				add(connKey{min(niClass, njClass), hinge, max(niClass, njClass)}, oi*oj)
			}
		}
	}
	if len(conns) == 0 {
		conns = []float64{1}
	}

	// _CalculateEntropies.
	tot := 0.0
	for _, v := range conns {
		tot += v
	}
	connectionIE := tot * (infoEntropy(conns) + math.Log(tot)/math.Log(2))
	atomTypeIE := float64(n) * infoEntropy(types)
	return atomTypeIE + connectionIE, nil
}

// infoEntropy is rdkit.ML.InfoTheory's InfoEntropy (its C++): the entropy in bits
// of the counts' proportions.
func infoEntropy(v []float64) float64 {
	total := 0.0
	for _, x := range v {
		total += x
	}
	accum := 0.0
	if total != 0 {
		for _, x := range v {
			d := x / total
			if d != 0 {
				accum += float64(-d * math.Log(d))
			}
		}
	}
	return accum / math.Log(2)
}

func contains(l []int, x int) bool {
	for _, v := range l {
		if v == x {
			return true
		}
	}
	return false
}
