package acq

import (
	"iter"

	"gonum.org/v1/gonum/mat"
)

// refine runs the projected L-BFGS method from each start and returns the
// points reached and f's values there, in the order of the starts: when f
// is a GradBatchFunction (unless sequential), in lockstep, chunks of
// lockstepChunk starts on up to workers goroutines; else one restart after
// another.
func (p *projected) refine(starts [][]float64, sequential bool, workers int) ([][]float64, []float64) {
	xs, vals := make([][]float64, len(starts)), make([]float64, len(starts))
	if bf, ok := p.f.(GradBatchFunction); ok && !sequential {
		parts := evenChunks(len(starts), lockstepChunk)
		evals := make([]int, len(parts))
		forEach(workers, len(parts), func(c int) {
			lo, hi := parts[c][0], parts[c][1]
			evals[c] = p.lockstep(bf, starts[lo:hi], xs[lo:hi], vals[lo:hi])
		})
		for _, e := range evals {
			p.evals += e
		}
		return xs, vals
	}
	for i, x0 := range starts {
		xs[i], vals[i] = p.run(x0)
	}
	return xs, vals
}

// evalRequest is a restart's request for f and its gradient at x, and the
// answer.
type evalRequest struct {
	x, grad []float64
	v       float64
}

// stopLockstep unwinds a restart whose driver stopped early.
type stopLockstep struct{}

// lockstep runs every start's restart as run does, each in a coroutine
// that suspends where run evaluates f, and answers the suspended restarts'
// requests with one call of f.EvalGradBatch per step; it writes the points
// reached and f's values there into xs and vals and returns the
// evaluations. A restart's iterates depend on nothing but f's values and
// gradients at its own points, so a restart ends where run would whenever
// the batch's rows equal f.Eval's; the coroutines run one at a time, in the
// starts' order, so the result is deterministic. It changes nothing in p,
// so that chunks of restarts can run at once.
func (p *projected) lockstep(f GradBatchFunction, starts, xs [][]float64, vals []float64) int {
	n, d := len(starts), len(p.lower)
	reqs := make([]evalRequest, n)
	evals := make([]int, n)
	nexts := make([]func() (*evalRequest, bool), n)
	for i := range starts {
		next, stop := iter.Pull(p.restart(starts[i], &reqs[i], &xs[i], &vals[i], &evals[i]))
		defer stop()
		nexts[i] = next
	}
	live := make([]int, 0, n) // the restarts suspended on a request
	for i, next := range nexts {
		if _, ok := next(); ok {
			live = append(live, i)
		}
	}
	xbuf, gbuf, vbuf := make([]float64, n*d), make([]float64, n*d), make([]float64, n)
	for len(live) > 0 {
		q := len(live)
		x, g := mat.NewDense(q, d, xbuf[:q*d]), mat.NewDense(q, d, gbuf[:q*d])
		for k, i := range live {
			copy(x.RawRowView(k), reqs[i].x)
		}
		f.EvalGradBatch(x, vbuf[:q], g)
		still := live[:0]
		for k, i := range live {
			reqs[i].v = vbuf[k]
			copy(reqs[i].grad, g.RawRowView(k))
			if _, ok := nexts[i](); ok {
				still = append(still, i)
			}
		}
		live = still
	}
	total := 0
	for _, e := range evals {
		total += e
	}
	return total
}

// restart returns the sequence of a restart from x0 run as p.run, which
// yields req at each evaluation of f and reads the answer from it; the
// point reached, f's value there and the evaluations are written to x, v
// and evals when it ends.
func (p *projected) restart(x0 []float64, req *evalRequest, x *[]float64, v *float64, evals *int) iter.Seq[*evalRequest] {
	return func(yield func(*evalRequest) bool) {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(stopLockstep); !ok {
					panic(r)
				}
			}
		}()
		sub := &projected{lower: p.lower, upper: p.upper, maxIter: p.maxIter, tol: p.tol, mem: p.mem}
		sub.f = Func(func(pt, grad []float64) float64 {
			req.x, req.grad = pt, grad
			if !yield(req) {
				panic(stopLockstep{})
			}
			return req.v
		})
		*x, *v = sub.run(x0)
		*evals = sub.evals
	}
}
