package chem

// pySetOrder returns the distinct values of xs in the order CPython 3.11
// iterates set(xs) for non-negative ints (hash(i) == i): JT-VAE writes merged
// clusters as list(set(...)), and this keeps our cluster atom lists in the
// same order as theirs. It follows set_add_entry (linear probes, then
// perturbation) and set_table_resize of Objects/setobject.c.
func pySetOrder(xs []int) []int {
	const minSize, linearProbes, perturbShift = 8, 9, 5
	table := make([]int, minSize)
	for i := range table {
		table[i] = -1
	}
	fill := 0
	insert := func(tab []int, key int) bool { // reports whether key was new
		mask := uint64(len(tab) - 1)
		h := uint64(key)
		i := h & mask
		perturb := h
		for {
			probes := 0
			if i+linearProbes <= mask {
				probes = linearProbes
			}
			for j := i; ; j++ {
				switch tab[j] {
				case -1:
					tab[j] = key
					return true
				case key:
					return false
				}
				if probes == 0 {
					break
				}
				probes--
			}
			perturb >>= perturbShift
			i = (i*5 + 1 + perturb) & mask
		}
	}
	for _, x := range xs {
		if !insert(table, x) {
			continue
		}
		fill++
		if fill*5 < (len(table)-1)*3 {
			continue
		}
		used := fill
		minUsed := used * 4
		if used > 50000 {
			minUsed = used * 2
		}
		size := minSize
		for size <= minUsed {
			size <<= 1
		}
		next := make([]int, size)
		for i := range next {
			next[i] = -1
		}
		for _, k := range table {
			if k >= 0 {
				insert(next, k)
			}
		}
		table = next
	}
	out := make([]int, 0, fill)
	for _, k := range table {
		if k >= 0 {
			out = append(out, k)
		}
	}
	return out
}
