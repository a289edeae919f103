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
//	        fit the GP from scratch on the first query of a version; after
//	        it, under GPRefitAuto (the default), keep the last fit and
//	        condition it on the new points until it goes stale, or refit
//	        it, warm-started, at every query (GPRefitEvery, the authors'),
//	        maximise EI or log-EI in the latent box,
//	        decode, perturb until the object is new, evaluate, append
//	        to the journal, the data and the GP's training set
//	    (an inner loop stops early when the maximal EI falls below tau)
//
// Every evaluation counts (Repeats "skip", the default): the budget counts
// distinct evaluated objects, as the PMO benchmark counts oracle calls, and
// an object whose score is known (a deterministic objective, Task.Deterministic,
// and the object in the labelled data or evaluated earlier in the run) is
// never evaluated again. The loop works in rounds of up to Q proposals:
//
//	fit the GP once (from scratch on a version's first round, warm after)
//	while some of the round's proposals are open, a pass:
//	    for each open proposal, maximise EI of the GP conditioned on the
//	        round's points so far (in the trust region, if any) and
//	        condition the GP on the posterior mean there (kriging believer)
//	    decode the pass's points as one batch (in parallel where the
//	        task's model can) and take them in order: a novel object is
//	        chosen; an invalid decode or a known object is journaled with
//	        the failure or the known score, which replaces its fantasy in
//	        the GP's data, and its proposal stays open; an object already
//	        chosen in the round keeps its fantasy and its proposal stays open
//	    a proposal open after RepeatTries steps goes to the ball fallback:
//	        batches of 20 points drawn uniformly in balls around its last
//	        point, radius doubled from 0.02 √d up to the box's diagonal
//	        (the trust region first, then the whole box), decoded as a
//	        batch; the novel decode with the best acquisition value is chosen
//	    when nothing novel is found the run ends, saying so (Result.Exhausted)
//	journal the round (its proposals before any is evaluated), evaluate the
//	chosen objects concurrently, journal each result as it finishes
//
// With Q = 1 a pass is one acquisition step and one decode, and a known
// object conditions the GP before the next step, as the loop has always
// done. With Q > 1 the pass's later points are chosen before its earlier
// ones are decoded, on their fantasies, so that a round's decodes run
// together (the molecule task decodes a batch with a worker per core); a
// known object's real score replaces its fantasy for the next pass. A
// fantasy is the posterior mean when its point was chosen.
//
// Why the kriging believer (Ginsbourger et al. 2010) for q proposals and not
// Thompson sampling as LOL-BO: it keeps the paper's acquisition (EI, whose
// incumbent and tau rule the runs compare on) and costs one posterior update
// of the sparse GP per proposal (the fit's hyperparameters and inducing
// points kept), while Thompson sampling from an SGPR posterior needs joint
// samples over a candidate set (a Cholesky factor per round of the
// candidates' covariance) or pathwise approximations; and the same
// conditioning serves the known objects, which are real observations.
// Known scores condition the GP instead of a refit for the same reason: a
// refit per skipped repeat would cost as much as a query.
//
// A run killed inside a round resumes with its unfinished evaluations only:
// the round record lists the chosen objects, each finished evaluation has
// its own record, and the data take the round's objects in index order once
// all are in, so that the state does not depend on which evaluation
// finished first. Random search and prior sampling under "skip" draw until
// a novel object (at most 10 · RandomDraws draws a proposal) and end the
// same way when none is found. A stochastic objective evaluates repeats
// again, as replicates.
//
// Trust region (TrustRegion, LOL-BO's use of TuRBO, Eriksson et al. 2019):
// the acquisition is maximised in a box of side L around the incumbent's
// latent point in the GP's normalised latent box, stretched along the ARD
// length-scales (volume L^d), L doubled after TR.Successes rounds in a row
// that improve the best score by more than 1e-3 |best| and halved after
// TR.Failures rounds that do not (LOL-BO: ceil(max(4, d) / q)), restarted
// at TR.Init below TR.Min; the state at each round's start is in its
// journal record.
//
// Repeats "authors" keeps the authors' loop for fidelity runs, below; runs
// made before the setting existed resume with it.
//
// Random search ("random", the reference's) replaces the GP step by
// uniform draws from the box of the encoder means of the current training
// data (widened like the GP's inputs, and growing with the latents of the
// version's new objects), redrawn while they decode to an invalid or
// already-seen object (at most RandomDraws times); "prior" draws from the
// prior N(0, I) with the novelty check of BO instead (what "random" meant
// before; runs made then resume as "prior"). Draws and the novelty check's
// perturbations are decoded ten at a time, since a batch costs about as
// much as one point, except for a PointwiseDecoder (the molecule task's
// greedy JT-VAE), which decodes per point and takes its width's worth; the
// objects found are the same, without paying for the rest of a batch.
//
// Runs are resumable: every query is appended to DIR/journal.jsonl and
// flushed to disk before the next one starts, each model version is saved
// beside it, and every random choice is derived from (seed, query index) or
// (seed, version) rather than drawn from a long-lived stream, so a run
// killed at any moment continues with Resume exactly as if it had never
// stopped. Each GP fit of a version is warm-started from the one before;
// the warm start after the last journaled fit is kept in DIR/gp-warm.npz
// (GPWarmFile), so a resume takes it from there and refits nothing. When
// that file is missing, unreadable or older than the journal, the chain is
// rebuilt by replaying the version's fits on the journaled points, without
// evaluating anything again. Under a GPRefit schedule other than every, the
// GP kept between fits is rebuilt from the last fit's warm start and
// conditioned on the journaled points after it, in the order the
// uninterrupted run conditioned them, so that it is the same bit for bit.
// Each journal
// line also carries the CPU seconds the process used since its previous
// line (cpu_s), so that a run's CPU time across its resumes is the sum.
// The command line's flags (Options.Flags) are kept in DIR/flags.json
// (FlagsFile) for a resume to take; the loop itself reads only the
// configuration (DIR/config.json).
//
// Scores of any finite magnitude keep the GP working: its standardiser
// clamps targets beyond 50 robust standard deviations of their median and
// scales its arithmetic so that nothing overflows (package gp), and each
// fit journals how many it clamped (GPFit.Clamped). A query whose GP fit or
// acquisition fails anyway is a uniform point of the latent box, with a
// warning, its reason in the journal (Query.RandomReason) and
// rand_point_due_bo_fail in results.npz.
//
// A run stops early, resumable, when Options.Context is done (a signal)
// or the task's Score returns a Halt (its program is broken): nothing more
// is proposed, the evaluations still running are awaited and journaled,
// and an evaluation that was not made (a program that never started, or
// was killed for the stop) is not journaled, so that a resume makes it.
// --resume on a directory that holds no run is refused (CheckRunDir).
//
// A failed evaluation (an invalid decode, an objective's failure, a
// labelled start object whose evaluation failed: Data.Failed) has the
// failure score, which the GP and the retraining learn from, but is never
// reported as the best: Result.Best, initial_best in results.npz and the
// curves skip it (opt_failed marks it), and are NaN while nothing
// succeeded.
//
// The GP always maximises: scores of a task where lower is better are
// negated into utilities before they reach the GP or the rank weights.
//
// Behaviours taken from the authors' code (docs/design.md section 11), and why:
//
//   - Novelty check (Repeats "authors"; the committed expression runs of
//     the authors' kind evaluated 63-171 distinct expressions in 500
//     queries): a decoded object already in the data is retried from
//     z + N(0, σ_t²), σ_t = 0.01 · 1.1^t, at most PerturbTries = 10 times;
//     then the acquisition step is redone, at most NoveltyRedo = 3 times,
//     and the duplicate is evaluated after that (the authors' loop; the
//     paper says only "perturb"). The redo keeps the GP (fitted once per
//     query, so the warm-start chain a resume replays is unchanged) and
//     excludes the points tried by multiplying EI by
//     Π_t (1 - exp(-|z - z_t|²/(2ρ²))) (adding its log to log-EI): the
//     authors redo the step with fresh randomness only, which often finds
//     the same maximiser; pending points with fantasised values would not
//     exclude a maximiser whose mean beats the incumbent, which is where
//     duplicates arise. ρ is σ_max √d (the length of the largest
//     perturbation, inside which objects were already seen), doubled at
//     each redo. The journal records z after (z) and before (z_proposed)
//     perturbation, the perturbations and the redos.
//   - EI's incumbent: the 0.9 quantile of the standardised targets
//     (BestQuantile; 1 is the plain best).
//   - EI maximisation: Restarts = 100 of RawSamples = 1000 raw samples,
//     picked by Boltzmann sampling (BoTorch's initialize_q_batch, which the
//     authors' optimize_acqf call uses); RestartSelection "best" takes the
//     best raw samples instead.
//   - Random search samples the encoded data's box (above), as the
//     authors' expression and topology scripts do.
//   - Objects the model does not accept (Model.Accept: a molecule whose
//     junction tree cannot be built) stay out of its retraining and the
//     GP's data, as the authors' molecule data module leaves out new
//     molecules outside its vocabulary; a query that decoded to one keeps
//     its score among the results. Each version's journal record counts
//     them (excluded).
//   - The journal records per model version the retraining's mean losses
//     as the model reports them (the task models: total, rec, kl, pred,
//     metric, beta), per query the GP fit (log marginal likelihood, noise,
//     output scale, length-scale range, points, iterations) and the
//     incumbent (the best score so far).
//   - Retraining (the model's, not the loop's): the task models keep one
//     trainer whose target-prediction head persists across retrainings
//     while Adam restarts, as the authors' loop keeps its Lightning module;
//     the head learns the raw scores and the metric losses see scores
//     min-max normalised over the training set, as in the authors' models.
//   - The sparse GP trains on the Titsias bound by default, as the paper
//     says; GPObjective "fitc" trains with the FITC marginal likelihood, as
//     the authors' pinned GPyTorch did (docs/design.md section 11). Titsias is
//     the default because it predicts held-out points better, FITC's
//     predictions being overconfident (the measurement and its command:
//     docs/performance.md, "GP: the Titsias bound against FITC").
//
// Choices where the reference differs or is silent: an invalid decode is
// evaluated as the task's failure score (the reference redoes the step);
// the novelty check applies to prior sampling too; only a query's final z
// joins the GP's points (the reference also adds
// the perturbation trials); the GP subset is drawn once per version; invalid
// queries stay out of the retraining data. Random search retrains the
// model every r queries like the other strategies, as the reference's
// does. In results.npz, opt_points are the task's keys ("" for invalid
// decodes) and the prior samples are flat arrays with one version per
// sample.
package bo
