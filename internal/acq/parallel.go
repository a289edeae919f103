package acq

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Parallel maximisation. The raw samples are scored in fixed chunks of
// rawChunk rows and the restarts refined in fixed chunks of at most
// lockstepChunk starts, each chunk one lockstep (one batch a step for its
// unfinished restarts); Options.Workers goroutines take the chunks one at
// a time. The chunks depend on the numbers of raw samples and starts
// alone, and OpenBLAS runs on one thread throughout (Maximize), so every
// batch, and hence the result, is the same bit for bit on any number of
// workers. Both matter: a batch row's rounding depends on the batch's size
// (OpenBLAS takes a product's last rows another way when their number is
// odd) and on OpenBLAS's thread count, never on which goroutine asks.

// lockstepChunk is the most restarts refined in one lockstep. A step
// costs a k C product (chunk x M by M x M, M the inducing points), and
// OpenBLAS packs the M x M factor at every call whatever the chunk's size,
// so smaller chunks cost more CPU time: on one worker, against one batch of
// all 100 restarts (BenchmarkMaximizeEI, M = 500), chunks of 50 cost 6%
// more, of 25 20%, of 16 35%. 100 restarts make 2 chunks, one per core of
// a 2-core machine.
const lockstepChunk = 50

// rawChunk is how many raw samples are scored in one batch: a multiple of
// 8, so that OpenBLAS rounds each row as in one batch of the default
// 1,000 (a multiple of 8 too).
const rawChunk = 128

// defaultWorkers is the number of workers when Options.Workers is 0.
var defaultWorkers atomic.Int64

func init() { defaultWorkers.Store(1) }

// SetWorkers sets the number of goroutines Maximize uses when
// Options.Workers is 0 (initially 1); n < 1 means GOMAXPROCS. The
// command line sets it from --threads (cliutil.SetupTorch).
func SetWorkers(n int) {
	if n < 1 {
		n = runtime.GOMAXPROCS(0)
	}
	defaultWorkers.Store(int64(n))
}

// Workers returns the number of goroutines Maximize uses when
// Options.Workers is 0.
func Workers() int { return int(defaultWorkers.Load()) }

// chunks splits [0, n) into consecutive [lo, hi) ranges of size rows, the
// last one shorter when size does not divide n.
func chunks(n, size int) [][2]int {
	var out [][2]int
	for lo := 0; lo < n; lo += size {
		out = append(out, [2]int{lo, min(lo+size, n)})
	}
	return out
}

// evenChunks splits [0, n) into the fewest consecutive ranges of at most
// size rows, their sizes differing by at most one (101 restarts make 34,
// 34 and 33, not 50, 50 and 1).
func evenChunks(n, size int) [][2]int {
	k := (n + size - 1) / size
	out := make([][2]int, 0, k)
	for j, lo := 0, 0; j < k; j++ {
		hi := lo + n/k
		if j < n%k {
			hi++
		}
		out = append(out, [2]int{lo, hi})
		lo = hi
	}
	return out
}

// forEach calls f(i) for every i in [0, n) on up to workers goroutines,
// each taking the next i when it is done; with one worker it runs on the
// caller's goroutine, in order.
func forEach(workers, n int, f func(i int)) {
	workers = min(workers, n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}
