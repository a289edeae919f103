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
//
// Training molecules are featurised once (trees, graphs and assembly
// candidates, about 23 ms a molecule) into a cache on disk that train,
// optimize and analyze read (CachedExamples): by default next to the data
// set, DIR/molecules.examples/KEY/ for DIR/molecules.npz, so that every run
// over one data set shares it; --cache-dir puts it elsewhere, --cache-dir
// none turns it off. KEY digests the data set file, the vocabulary, the
// shard size and FeaturiserVersion, so a changed input makes a new cache
// (old ones can be deleted). The cache is made in parallel (--workers) in
// shards of 256 molecules, each written whole (temporary file, fsync,
// rename) when done: an interrupted build keeps its finished shards and the
// next run resumes. Shards are gob behind a SHA-256 checksum and hold their
// molecules' SMILES: a corrupt shard, or one of other molecules, is named on
// stderr and rebuilt. All examples are read at once (the trainer takes them
// as a slice); molecules that cannot be featurised over the vocabulary are
// left out of the data set, and counted on stderr.
//
// A cluster is labelled by the vocabulary entry with its kekulé SMILES, else
// by the one entry with its canonical SMILES. This departs from the authors'
// exact lookup on purpose: their vocabulary was written by an older RDKit,
// which spelled kekulé ring NH as [NH] and placed some rings' double bonds
// elsewhere, so the exact lookup under RDKit 2022.09 fails on a fifth of
// ZINC that their RDKit featurised.
package molecule
