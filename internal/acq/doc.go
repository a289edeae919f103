// Package acq implements the acquisition side of T-LBO's BO step: expected
// improvement, log expected improvement (numerically stable far in the
// tail, Ament et al. 2023) and the upper confidence bound, each with
// analytic gradients, and Maximize, which maximises any acquisition over a
// box with scrambled-Halton raw samples and projected L-BFGS restarts.
//
// The restarts are picked from the raw samples as BoTorch's optimize_acqf does
// (initialize_q_batch, the authors' setting: 100 of 1,000): drawn without
// replacement with probability proportional to exp(eta z), z the
// standardised acquisition value, eta 1, with the best raw sample always
// among them. This spreads the restarts over the good regions instead of
// refining near-duplicates of the best few; SelectBest keeps the older
// "best few" choice.
//
// Convention: acquisition functions are MAXIMISED and the model's posterior
// is of the objective to be maximised (the BO loop negates scores where
// lower is better).
//
// Typical use with a fitted *gp.Model on the unit box:
//
//	bestF := acq.QuantileBest(yStd, 0.9)            // the reference's incumbent
//	f := acq.NewLogEI(model, bestF)                  // or acq.NewEI
//	res, err := acq.Maximize(f, lower, upper, acq.Options{Seed: seed}) // 1000 raw samples, 100 Boltzmann restarts
//	// res.X is the next query (in [0,1]^d), res.Value its log-EI,
//	// res.Evaluations the acquisition evaluations spent.
//	mean, variance := model.Predict(res.X)
//	ei, _, _ := acq.EI(mean, variance, bestF)      // compare with the stopping threshold τ
//
// Any function can be maximised through Func (a closure returning the value
// and writing the gradient); implementing BatchFunction as well lets the raw
// samples be evaluated with matrix products, and GradBatchFunction the
// restarts too: Maximize then refines them in lockstep, in chunks of up to
// 50, each step one batch of every unfinished restart's next point in the
// chunk, each restart taking the steps it would take alone. An Acquisition
// of a *gp.Model is one: a step costs a few matrix products (the M x M one,
// k C, dominates) instead of a matrix-vector product per restart, and its
// values differ from Eval's by the rounding of the reordered sums
// (Options.Sequential keeps the one-by-one path). Options.Workers
// goroutines (SetWorkers; --threads on the command line) score the raw
// samples' chunks and refine the restarts' chunks at once; the result is
// the same bit for bit on any number of them.
package acq
