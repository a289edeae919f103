// Package molecule is the molecule task of T-LBO: penalised logP of a SMILES
// string (Score), the ZINC250K data set (Build) and the JT-VAE cluster
// vocabulary (BuildVocab, ReadVocab).
//
// Penalised logP is computed as the weighted-retraining / T-LBO code does:
// (logP - 2.45777691)/1.43341767 + (3.05352042 - SA)/0.83460587 +
// (0.04861121 - cycle)/0.28746695 with Crippen logP, the RDKit Contrib SA score
// (its fragment table read from rdkit-data) and cycle = max(0, L - 6) for the
// longest cycle L of networkx's fundamental cycle basis of the atom graph.
// Score parses the SMILES as given; the data set scores the canonical
// non-isomeric SMILES, as the authors' calc_penalized_logP.py does. A molecule
// that cannot be scored gets FailureScore, the authors' invalid_score default.
//
// Latent points decode to molecules as the authors' JTNNVAE.decode does
// (Decoder; decode.go says how), greedily by default as their BO does. Where
// their code and ours differ on purpose: a time cap per molecule (theirs has
// none), can_assemble answers cached by cluster labels and leaf flags and
// stopped at the first candidate (the same answers), each node's candidates
// enumerated once per molecule, and errors of RDKit (which would raise in
// theirs) make the molecule invalid.
package molecule
