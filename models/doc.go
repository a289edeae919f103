// Package models holds the machinery shared by the VAEs of T-LBO (docs/design.md
// sections 3 and 4): the KL term and its beta schedule, rank weights and the
// weighted sampler, the deep-metric-learning losses, the target-prediction head,
// the ELBO variants, an ELBO-agnostic training loop and checkpoint files.
//
// A network (the grammar VAE of models/expression, later the topology and
// molecule VAEs) plugs in through the VAE interface: it encodes a batch to the
// parameters of q(z|x) and scores a reconstruction; everything else lives here.
//
// All losses are built from torch ops, run on the tensors' device and are
// differentiated by libtorch's autograd. They work in float32 or float64.
//
// # The authors' code and the paper
//
// Where the authors' code (T-LBO's metrics.py and models, weighted
// retraining's data modules) and the paper differ, this package follows the
// paper, unless the code's behaviour is what produced the paper's numbers and
// the paper is silent (docs/design.md section 11):
//   - metric-loss positives are the pairs with dy <= eta and negatives those
//     with dy > eta, as metrics.py splits them (the paper writes dy < eta; the
//     two differ only for exact ties, which min-max normalised scores of a
//     finite data set do produce);
//   - the soft contrastive loss of negatives is weighted by 2 - min(eta,
//     dz)/eta as the paper writes, not by the code's (2 - min(eta, dz))/eta,
//     an operator-precedence slip (ContrastiveLoss);
//   - the learning rate follows PyTorch's ReduceLROnPlateau on the
//     validation loss, as T-LBO's Lightning models configure it (Plateau,
//     TorchPlateau; the settings are the tasks' defaults), not weighted
//     retraining's Keras schedule (KerasPlateau), which T-LBO does not use;
//   - validation examples are drawn with replacement in proportion to the
//     rank weights, as the authors' validation loader (a WeightedRandomSampler
//     over the validation set) does, when the validation data carries weights
//     (Fit); the paper says nothing of validation;
//   - one deviation of ours: the plateau schedule and the best-epoch tracking
//     start once the KL weight has reached its final value (Fit), since
//     during annealing the validation loss rises with the weight.
//
// # Resuming
//
// A checkpoint keeps, besides the weights and Adam's state, the step and
// epoch counters, the schedules' state and the sampler generator's state
// (TrainingState). With Trainer.SeedSteps, libtorch's generator (the
// reparameterisation noise) is seeded from the seed and the step number
// before every step, and from the seed and the epoch before every validation
// pass, whose draw depends on them alone; so on one thread a training resumed
// from any checkpoint equals the uninterrupted one, bit for bit.
package models
