package molecule

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/openblas"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
)

// Parallel decoding. One Decode call runs in two phases on the decoder's
// workers: the tree decoder on contiguous chunks of the rows, one chunk per
// worker and all of a chunk's molecules stepping together (batched network
// calls), with the assembly scorers of the chunk's trees (one batched pass
// of the tree encoder); then the assembly of each molecule, the workers
// taking molecules one at a time (a long molecule does not hold up the
// others). Each worker holds its own native state: libtorch scopes of its
// chunk and of each candidate group it scores (the network's parameters are
// only read, under NoGrad), and RDKit molecules made and closed by the
// molecule's own assembly. The state shared is the vocabulary's chemistry:
// read-only but for its caches of answers (can_assemble, round trips, the
// attachment memo) under mutexes, and its cluster templates, each copied
// under its own mutex. Each worker runs on one locked OS thread, so that
// glibc, where it is the allocator (a build with the tag notcmalloc: see
// internal/malloc), serves its native allocations from one malloc arena (as
// torch.OnOneThread). A molecule depends on its own row only: greedy
// decoding has no state across rows (the caches hold what RDKit answers,
// whoever asked first), and a sampled one draws row i from its own stream
// (rowStream), so the molecules are the same for any number of workers
// (TestDecodeWorkers).

// decodeCall is the state of one Decode call.
type decodeCall struct {
	d       *Decoder
	workers int
	budget  []time.Duration // time left to each molecule (TimeLimit > 0)
	rngs    []*rand.Rand    // each molecule's stream; nil: greedy
	stats   []DecodeStats   // per worker

	scorers   []*jtvae.AssemblyScorer // each molecule's, for trees to assemble
	scorerErr []error                 // why a tree to assemble has none
	groups    []*jtvae.AssemblyScorers
	mu        sync.Mutex // guards groups
}

// newCall prepares the decoding of n rows.
func (d *Decoder) newCall(n int) *decodeCall {
	c := &decodeCall{d: d, workers: workerCount(d.Workers, n), budget: make([]time.Duration, n)}
	for i := range c.budget {
		c.budget[i] = d.TimeLimit
	}
	if d.Sampled {
		c.rngs = make([]*rand.Rand, n)
		for i := range c.rngs {
			c.rngs[i] = rowStream(d.Seed, i)
		}
	}
	c.stats = make([]DecodeStats, c.workers)
	c.scorers, c.scorerErr = make([]*jtvae.AssemblyScorer, n), make([]error, n)
	return c
}

// close releases the call's assembly scorers.
func (c *decodeCall) close() {
	for _, g := range c.groups {
		g.Close()
	}
}

// rowStream is the random stream of row i of a sampled decoding from seed:
// ChaCha8 keyed by both, so that distinct rows' streams are independent.
func rowStream(seed uint64, i int) *rand.Rand {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[0:], seed)
	binary.LittleEndian.PutUint64(key[8:], uint64(i))
	copy(key[16:], "jtvae-decode-row")
	return rand.New(rand.NewChaCha8(key))
}

// rng is molecule mol's stream, nil when greedy.
func (c *decodeCall) rng(mol int) *rand.Rand {
	if c.rngs == nil {
		return nil
	}
	return c.rngs[mol]
}

// decodeTrees runs the tree decoder on the rows of z, one chunk of rows per
// worker, and prepares the assembly scorers of each chunk's trees together.
func (c *decodeCall) decodeTrees(z []float32) ([]jtvae.Decoded, error) {
	lat := c.d.m.LatentDim()
	n := len(z) / lat
	trees := make([]jtvae.Decoded, n)
	chunks := splitRows(n, c.workers)
	errs := make([]error, len(chunks))
	runWorkers(c.workers, len(chunks), func(w, k int) {
		lo, hi := chunks[k][0], chunks[k][1]
		var rngs []*rand.Rand
		if c.rngs != nil {
			rngs = c.rngs[lo:hi]
		}
		t := time.Now()
		out, err := c.d.m.DecodeTrees(z[lo*lat:hi*lat], chunkChemistry{c: c, lo: lo}, 0, rngs)
		c.stats[w].Tree += time.Since(t)
		if errs[k] = err; err != nil {
			return
		}
		copy(trees[lo:hi], out)
		t = time.Now()
		c.prepareScorers(lo, out, z)
		c.stats[w].Assembly += time.Since(t)
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return trees, nil
}

// prepareScorers makes the assembly scorers of the trees from row lo that
// are to be assembled (valid, more than one node), in one batch.
func (c *decodeCall) prepareScorers(lo int, trees []jtvae.Decoded, z []float32) {
	lat, lt := c.d.m.LatentDim(), c.d.m.Config().LatentTree
	var sel []jtvae.Tree
	var rows []int
	var zg []float32
	for k, tr := range trees {
		if i := lo + k; tr.Err == nil && len(tr.Labels) > 1 {
			sel, rows, zg = append(sel, tr.Tree), append(rows, i), append(zg, z[i*lat+lt:(i+1)*lat]...)
		}
	}
	if len(sel) == 0 {
		return
	}
	g, err := c.d.m.NewAssemblyScorers(sel, zg)
	if err != nil { // the network failed on these trees: their molecules alone are invalid
		for _, i := range rows {
			c.scorerErr[i] = err
		}
		return
	}
	c.mu.Lock()
	c.groups = append(c.groups, g)
	c.mu.Unlock()
	for j, i := range rows {
		c.scorers[i], c.scorerErr[i] = g.Scorer(j)
	}
}

// assembleAll assembles each decoded tree.
func (c *decodeCall) assembleAll(trees []jtvae.Decoded) ([]string, []error) {
	smiles, errs := make([]string, len(trees)), make([]error, len(trees))
	runWorkers(c.workers, len(trees), func(w, i int) {
		st := &c.stats[w]
		t := time.Now()
		if errs[i] = trees[i].Err; errs[i] == nil {
			smiles[i], errs[i] = c.assemble(i, trees[i], st)
		}
		if errors.Is(errs[i], errTimeUp) {
			st.Timeouts++
		}
		st.Assembly += time.Since(t)
	})
	return smiles, errs
}

// splitRows splits n rows into k contiguous chunks [lo, hi) whose sizes
// differ by at most one.
func splitRows(n, k int) [][2]int {
	out := make([][2]int, 0, k)
	lo := 0
	for j := range k {
		hi := lo + n/k
		if j < n%k {
			hi++
		}
		out = append(out, [2]int{lo, hi})
		lo = hi
	}
	return out
}

// runWorkers calls f(w, i) for i in [0, n) on workers goroutines (w the
// worker, 0 <= w < workers), the workers taking the next i as they finish,
// each on its own locked OS thread; one worker runs on the caller's. With
// several workers OpenBLAS (libtorch's matrix products) runs one thread a
// call: its default of one per core made two workers 20-30% slower on a
// loaded 2-core machine (BenchmarkDecodePrior).
func runWorkers(workers, n int, f func(w, i int)) {
	run := func(w int, next *atomic.Int64) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
			f(w, int(i))
		}
	}
	var next atomic.Int64
	if workers <= 1 {
		run(0, &next)
		return
	}
	defer openblas.OneThread()()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(w, &next)
		}()
	}
	wg.Wait()
}

// chunkChemistry is the jtvae.TreeChemistry of the chunk of rows from lo:
// its molecule k is the call's molecule lo + k.
type chunkChemistry struct {
	c  *decodeCall
	lo int
}

// Slots implements jtvae.TreeChemistry.
func (ch chunkChemistry) Slots(label int64) []jtvae.Slot {
	return slices.Clone(ch.c.d.chem.slots[label])
}

// CanAssemble implements jtvae.TreeChemistry within the molecule's time.
func (ch chunkChemistry) CanAssemble(mol int, center int64, nbrs []int64, leaf []bool) (bool, error) {
	c, mol := ch.c, ch.lo+mol
	ctx, cancel, start := c.molContext(mol)
	defer cancel()
	ok, err := c.d.chem.canAssemble(ctx, center, nbrs, leaf)
	if c.d.TimeLimit > 0 {
		c.budget[mol] -= time.Since(start)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return false, errTimeUp
	case err != nil: // RDKit failed on this molecule's clusters: it alone is invalid
		return false, fmt.Errorf("can_assemble: %v: %w", err, jtvae.ErrGiveUp)
	}
	return ok, nil
}

// molContext is a context ending when molecule mol's time is up, and the
// time now.
func (c *decodeCall) molContext(mol int) (context.Context, context.CancelFunc, time.Time) {
	now := time.Now()
	if c.d.TimeLimit <= 0 {
		return context.Background(), func() {}, now
	}
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(c.budget[mol]))
	return ctx, cancel, now
}
