// Package bo implements Algorithm 1 of T-LBO (Grosnit et al., AISTATS 2022):
// Bayesian optimisation in the latent space of a VAE that is retrained every
// r queries on rank-weighted data (Tripp et al. 2020), with a metric loss
// when the model's ELBO has one.
//
// The loop is generic over a Task (the black-box objective and the identity
// of its objects) and a Model (encoder, decoder, retraining and weights
// files); it imports neither torch nor the model packages. One run:
//
//	for version v = 0, 1, ...:                     (outer loop)
//	    retrain the model on the data with rank weights, save model-v<v>
//	    encode the N_best best and N_rand random points with the encoder mean
//	    for up to r queries:                       (inner loop)
//	        fit the GP (from scratch on the first query of a version,
//	        warm-started after), maximise EI or log-EI in the latent box,
//	        decode, perturb until the object is new, evaluate, append
//	        to the journal, the data and the GP's training set
//	    (an inner loop stops early when the maximal EI falls below tau)
//
// Random search replaces the GP step by a draw from the prior N(0, I).
//
// Runs are resumable: every query is appended to DIR/journal.jsonl and
// flushed to disk before the next one starts, each model version is saved
// beside it, and every random choice is derived from (seed, query index) or
// (seed, version) rather than drawn from a long-lived stream, so a run
// killed at any moment continues with Resume exactly as if it had never
// stopped. The GP state within a version is rebuilt by replaying its fits
// on the journaled points, without evaluating anything again.
//
// The GP always maximises: scores of a task where lower is better are
// negated into utilities before they reach the GP or the rank weights.
//
// Choices where the reference differs or is silent: an invalid decode is
// evaluated as the task's failure score (the reference redoes the step);
// the novelty check perturbs up to PerturbTries times with a growing sigma
// and then evaluates the duplicate, and it applies to random search too;
// only a query's final z joins the GP's points (the reference also adds
// the perturbation trials); the GP subset is drawn once per version; invalid
// queries stay out of the retraining data. Random search retrains the
// model every r queries like the other strategies, as the reference's
// does. In results.npz, opt_points are the task's keys ("" for invalid
// decodes) and the prior samples are flat arrays with one version per
// sample.
package bo
