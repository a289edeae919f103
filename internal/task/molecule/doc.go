// Package molecule is the molecule task of T-LBO: penalised logP of a SMILES
// string (Score), the ZINC250K data set (Build) and the JT-VAE cluster
// vocabulary (BuildVocab, ReadVocab).
//
// Objectives. The option --objective (score, optimize, analyze; ParseObjective,
// the one place that reads it) picks the black box: plogp, penalised logP,
// the paper's and the default; qed; or one of the 19 PMO (GuacaMol
// goal-directed) tasks of the objectives package. All are maximised. A
// molecule that cannot be scored gets the objective's failure score:
// FailureScore (-4, the authors') for plogp, 0 for QED and the PMO tasks,
// the score TDC's oracles, which the PMO benchmark calls, give an invalid
// molecule. A run records the objective's name (Describe; plogp keeps the
// description of runs made before the option, which names penalised logP),
// so a resume under another is refused. The data set is labelled by the
// objective: plogp keeps the data file's scores; another objective scores
// the training split once, in parallel (--workers), into a cache next to the
// data set, DIR/molecules.scores/NAME-KEY/shard-*.npz (CachedScores; KEY
// digests the objective, the data file, the shard size and the cache's
// version; each shard of 2,048 molecules written atomically when scored, so
// an interrupted scoring resumes; --cache-dir elsewhere, none off).
//
// The PMO protocol (optimize --initial N). PMO counts oracle calls and
// charges the scoring of a method's starting molecules to its budget, so a
// run cannot start from the whole labelled ZINC split. With --initial N the
// data set is N distinct molecules drawn from the training split in the
// order of a permutation seeded by --seed (those the checkpoint's vocabulary
// cannot featurise skipped, as the loop retrains on them), scored with the
// objective (plogp: the file's scores); the task tells the generic flow
// (task.Spec.InitialCalls) that they are the run's first N oracle calls,
// which it records in the run directory (bo.InitialFile: keys and scores in
// order; the configuration's initial-calls) and analyze pmo and plot
// --metric top10 count before the loop's distinct evaluations. The loop's
// --budget stays its own count of distinct evaluations: a PMO budget B is
// --initial N --budget B-N (docs/experiment/pmo.sh). This is the simplest
// design that keeps the loop, results.npz and resume unchanged: the initial
// molecules are the labelled start as any data set is, and only their cost
// is new. The VAE pretrains on unlabelled ZINC, which makes no oracle call.
//
// Diversity (analyze pmo's diversity_top10) is TDC's internal diversity:
// one minus the mean pairwise Tanimoto similarity of the distinct molecules'
// Morgan bit fingerprints (radius 2, 2048 bits), checked against RDKit's
// Python (testdata/pmo/make_diversity_fixture.py).
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
// enumerated once per molecule, what RDKit made of an attachment or a
// partial molecule remembered (chem.AttachMemo: the same answers again),
// and errors of RDKit (which would raise in theirs) make the molecule
// invalid. A batch of points decodes on --workers goroutines
// (decode_parallel.go), to the same molecules on any number.
//
// Training molecules are featurised once (trees, graphs and assembly
// candidates; the cost a molecule is in docs/performance.md, "Molecule
// data in memory and on disk") into a cache on disk that train,
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
