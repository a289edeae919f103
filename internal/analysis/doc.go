// Package analysis computes the paper's analyses of a VAE's latent space
// (DESIGN.md section 10) from encoded data: the GP predictive
// log-likelihood of Table 1 (GPLogLik) and the pairwise latent distances of
// Fig. 2 (LatentDistances), and writes each as a text table, an .npz file
// and a PNG. It works on latent points and scores only, so it serves every
// task; the encoding is the caller's (cmd/tlbo-native's analyze verb
// encodes through the task registry).
package analysis
