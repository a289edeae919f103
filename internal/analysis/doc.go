// Package analysis computes the paper's analyses of a VAE's latent space
// (docs/design.md section 10) from encoded data: the GP predictive
// log-likelihood of Table 1 (GPLogLik) and the pairwise latent distances of
// Fig. 2 (LatentDistances), and writes each as a text table, an .npz file
// and a PNG. It works on latent points and scores only, so it serves every
// task; the encoding is the caller's (cmd/tlbo-native's analyze verb
// encodes through the task registry).
//
// The appendix's domain-recovery experiment (DomainRecovery) measures, for
// each model version l of a BO run on a task whose objective is the
// similarity to a target (topology), p(l): the fraction of 100 decodings of
// a latent point whose similarity to the target exceeds 0.8. It sees a
// model version through RecoveryModel (the task's encoder distribution of
// the target and its stochastic decodings, task.TargetModel) and
// TabulateRecovery/WriteRecovery group runs by method.
//
// The authors' code (huawei-noah/HEBO, folder T-LBO, every commit) holds
// no domain-recovery experiment: neither their topology scripts nor any
// other file computes p(l). So this follows the paper's text (docs/design.md
// sections 10 and 11), and fixes what the text leaves open:
//
//   - "a decoding" of a latent point is a draw from the decoder's
//     distribution (for topology every pixel from Bernoulli(sigmoid(logit)),
//     of which the task's rounded decode is the mode): with the
//     deterministic decode, 100 decodings of one point would all agree and
//     p could only be 0 or 1; that reading is offered too (Mode, `analyze
//     domain-recovery --decoding mode`): p(l) of a run is then whether some
//     point near the target decodes, as BO would decode it, above the
//     threshold, and its mean over runs the share of runs that do;
//   - the point p is of starts as the encoder mean of the target at the
//     first version and is carried from version to version (re-estimated
//     under each new model); "sample candidates from the encoder's
//     distribution of the target until one raises p" draws from the current
//     version's q(z | target), at most Candidates (default 100) per version,
//     and "raises" compares with the p reached so far, max(p(l-1), p_l of
//     the carried point); a candidate whose p is 1 also stops the search.
//     When no candidate raises p, the best of the carried point and the
//     candidates drawn is kept, so p(l) can fall when a retraining loses the
//     target;
//   - l counts retrainings: a run's model-v<v> is l = v+1 (the initial
//     retraining before the first query included) and the pretrained VAE,
//     when given, is l = 0; with the paper's budget 500 and r 50 a run has
//     l = 0..10 as in the paper's figure;
//   - each estimate of p uses fresh draws (seeded by version and purpose),
//     so the candidate chosen as the first to exceed a bar is biased upward
//     by its own noise, as in any "sample until better" search: the table
//     also records p of the carried point (carried) and of the encoder mean
//     (p_mean_point) at each version.
package analysis
