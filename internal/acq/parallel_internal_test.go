package acq

import (
	"sync"
	"testing"
)

// TestChunks: chunks and evenChunks cover [0, n) once, in order, with
// ranges of at most size rows; evenChunks' sizes differ by at most one
// and there are as few as size allows.
func TestChunks(t *testing.T) {
	for _, n := range []int{0, 1, 7, 99, 100, 101, 1000} {
		for _, size := range []int{1, 8, 50, 128, 2000} {
			for name, split := range map[string]func(int, int) [][2]int{"chunks": chunks, "evenChunks": evenChunks} {
				parts := split(n, size)
				lo, small, large := 0, n, 0
				for _, c := range parts {
					if c[0] != lo || c[1] <= c[0] || c[1]-c[0] > size {
						t.Fatalf("%s(%d, %d) = %v: bad range %v", name, n, size, parts, c)
					}
					lo = c[1]
					small, large = min(small, c[1]-c[0]), max(large, c[1]-c[0])
				}
				if lo != n || len(parts) != (n+size-1)/size {
					t.Fatalf("%s(%d, %d) = %v: want %d ranges covering [0, %d)", name, n, size, parts, (n+size-1)/size, n)
				}
				if name == "evenChunks" && n > 0 && large-small > 1 {
					t.Errorf("evenChunks(%d, %d) = %v: uneven", n, size, parts)
				}
			}
		}
	}
}

// TestForEach: every index runs exactly once on any number of workers.
func TestForEach(t *testing.T) {
	for _, workers := range []int{1, 2, 5} {
		for _, n := range []int{0, 1, 3, 40} {
			var mu sync.Mutex
			seen := make([]int, n)
			forEach(workers, n, func(i int) {
				mu.Lock()
				seen[i]++
				mu.Unlock()
			})
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("forEach(%d, %d): index %d ran %d times", workers, n, i, c)
				}
			}
		}
	}
}
