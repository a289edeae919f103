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
