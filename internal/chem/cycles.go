package chem

import "slices"

// Neighbours returns each atom's bonded neighbours in ascending order: the
// adjacency of networkx.Graph(rdmolops.GetAdjacencyMatrix(mol)).
func (m *Mol) Neighbours() ([][]int, error) {
	bonds, err := m.Bonds()
	if err != nil {
		return nil, err
	}
	return neighbours(m.NumAtoms(), bonds), nil
}

func neighbours(n int, bonds []Bond) [][]int {
	adj := make([][]int, n)
	for _, b := range bonds {
		adj[b.Begin] = append(adj[b.Begin], b.End)
		if b.End != b.Begin {
			adj[b.End] = append(adj[b.End], b.Begin)
		}
	}
	for _, a := range adj {
		slices.Sort(a)
	}
	return adj
}

// CycleBasis returns a fundamental cycle basis of the graph with adjacency lists
// adj, exactly as networkx 2.8's cycle_basis builds it for a graph whose nodes are
// 0..n-1 and whose neighbour lists are in adj's order: connected components taken
// from the smallest remaining node (CPython's set.pop over small ints), a
// depth-first walk with a stack, and each non-tree edge closing the cycle through
// the predecessors. Which cycles make up the basis depends on this order.
func CycleBasis(adj [][]int) [][]int {
	n := len(adj)
	done := make([]bool, n)
	pred := make([]int, n)
	used := make([]map[int]bool, n) // nil: not yet reached in this component
	var cycles [][]int
	for root := 0; root < n; root++ {
		if done[root] {
			continue
		}
		var reached []int
		pred[root] = root
		used[root] = map[int]bool{}
		reached = append(reached, root)
		stack := []int{root}
		for len(stack) > 0 {
			z := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			zused := used[z]
			for _, nbr := range adj[z] {
				switch {
				case used[nbr] == nil:
					pred[nbr] = z
					stack = append(stack, nbr)
					used[nbr] = map[int]bool{z: true}
					reached = append(reached, nbr)
				case nbr == z:
					cycles = append(cycles, []int{z})
				case !zused[nbr]:
					pn := used[nbr]
					cycle := []int{nbr, z}
					p := pred[z]
					for !pn[p] {
						cycle = append(cycle, p)
						p = pred[p]
					}
					cycle = append(cycle, p)
					cycles = append(cycles, cycle)
					used[nbr][z] = true
				}
			}
		}
		for _, v := range reached {
			done[v] = true
		}
	}
	return cycles
}
