// Package gp implements the Gaussian-process surrogate of T-LBO in float64
// on gonum (with OpenBLAS underneath, see internal/openblas): exact GP
// regression and the sparse GP trained with the Titsias collapsed bound
// (SGPR) or the FITC marginal likelihood (Options.Approximation; FITC is
// what the authors' pinned GPyTorch 1.3.0 optimised, see fitc.go), ARD
// RBF and Matérn-5/2 kernels with an output scale, a constant mean, Gaussian
// noise, optional Kumaraswamy input warping (W-LBO), the reference's priors
// (Gamma(3, 6) on length-scales, Gamma(2, 0.15) on the output scale; MAP
// fit) and L-BFGS fitting with analytic gradients, from scratch or warm.
//
// Conventions: inputs are normalised to [0,1]^d (Normalizer) and targets
// standardised (Standardizer); the GP models the objective to be maximised.
//
// Targets of any finite magnitude: a user's program may return -1e308 for
// "failed", and plain standardisation then overflows (the squares) or
// flattens (a standard deviation of about 1e308/√N makes every other
// target the same), so the GP sees nothing. NewStandardizer therefore
//
//   - winsorises: targets farther than FenceSDs = 50 robust standard
//     deviations σ_r from their median are clamped to that distance, σ_r =
//     1.4826 MAD (the standard deviation, for normal data), or 1.2533 x the
//     mean absolute deviation from the median when more than half of the
//     targets tie there (MAD 0); constant targets keep Std 1 and get the
//     fence FenceSDs from their value. The median and MAD place the fence
//     because a single outlier moves the mean and standard deviation as far
//     as it likes. 50 σ_r leaves ordinary data alone: the farthest score of
//     the shipped tasks' data, the lowest penalised logP of ZINC250K (-62.2
//     in every fifth molecule, median 0.43, MAD 1.15), lies 37 σ_r below the
//     median, and the expression task's scores are capped at 7. A clamped
//     target still ranks where it did (worst or best), and one at the fence
//     adds at most FenceSDs²/N σ_r² to the variance of N targets (0.8 for
//     the expression task's 3000), so the rest keep their spread. The BO
//     loop journals how many targets a fit clamped (package bo, GPFit);
//     Transform clamps later targets (the kriging believer's observations)
//     to the same fence.
//   - scales by a power of two: the mean and standard deviation are those
//     of the targets divided by 2^e > max|y|, so that no sum, difference or
//     square overflows, and Transform and Inverse scale the same way. A
//     power of two scales exactly, so wherever the plain formulas do not
//     overflow the results are theirs, bit for bit: runs whose targets need
//     no clamp are standardised as they always were.
//
// This is winsorisation rather than a transform of every target (BoTorch's
// Power or Bilog outcome transforms, HEBO's power transform) because it
// leaves the reference's standardisation of ordinary data unchanged.
// Positive parameters are optimised through their logarithm (the noise as
// NoiseFloor + exp(u)); the inducing points live in the input space and are
// warped like the data.
//
// Typical use in a BO step:
//
//	nz, _ := gp.NewNormalizer(zTrain, zBest)         // latent box bounds
//	st, _ := gp.NewStandardizer(scores)
//	x, y := nz.Transform(zTrain), st.Transform(scores)
//	model, err := gp.Fit(x, y, gp.Options{Inducing: 500, Kernel: gp.RBF, Seed: seed, Init: previous.WarmStart()})
//	if err != nil { ... }
//	mean, variance := model.Predict(u)                // u in [0,1]^d
//	mean, variance = model.PredictGrad(u, dmean, dvar) // with input gradients
//
// and then acq.Maximize over [0,1]^d (see package acq), mapping the result
// back with nz.InverseVec. With Inducing 0, or at least N, the GP is exact.
// New observations join a model without a refit through Condition, which
// keeps the hyperparameters and inducing points and updates the posterior's
// factors exactly (rank-one updates, O(M²) a point):
//
//	model, err = model.Condition(uNew, st.Transform(scoresNew)) // the fit's scales
//
// The SGPR bound and its gradient are evaluated through Ψ₂ = K_uf K_fu
// (one dsyrk on the N x M cross-covariance) and a handful of M x M
// factorisations and triangular solves; the gradient with respect to every
// length-scale and inducing point comes from two N x M x d matrix products,
// so an evaluation is dominated by BLAS-3 calls.
package gp

import (
	// Route gonum's BLAS and LAPACK through OpenBLAS in every user of gp.
	_ "github.com/tlbo-native/tlbo-native/internal/openblas"
)
