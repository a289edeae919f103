// Package models holds the machinery shared by the VAEs of T-LBO (DESIGN.md
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
package models
