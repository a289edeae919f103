// Package topology is the topology task (paper Fig. 3 left; docs/design.md
// section 7): 40x40 binary designs of SIMP compliance minimisation
// (internal/simp), one held out as the target; the objective is the cosine
// similarity of a design with the target, maximised (an empty design
// scores 0). The network is the authors' conv VAE (models/topology).
//
// The data set is DIR/topology.npz written by `data topology` (its array
// designs); the target is the design at an index drawn from the option
// target-seed, or a design file given with the option target. Every exact
// copy of the target is dropped from the training data: the authors drew
// their data set with replacement, which can leave copies of the target in
// it (docs/design.md section 11).
//
// The registered task is also a task.TargetTask, for the domain-recovery
// analysis (recovery.go): the target of a BO run is read back from its
// configuration (field target-key), and a stochastic decoding draws every
// pixel from the decoder's Bernoulli probabilities.
//
// Where this package follows the paper or docs/design.md rather than the
// authors' code: augmentation rotates by multiples of 90 degrees and flips
// vertically (their torchvision pipeline rotates by random angles within 45,
// 90 and 180 degrees with nearest-neighbour resampling, then flips); it acts
// on every mini-batch the trainer draws, pretraining included (their
// pretraining augments only with --augment_dataset). The target-prediction
// weight is 10, as in their topology training script, and their predictor's
// final ReLU is not used (models.TargetPredictor predicts normalised labels).
package topology
