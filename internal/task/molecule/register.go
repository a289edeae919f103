package molecule

import (
	"strings"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/manual"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
)

// TaskName is the molecule task's name in the registry.
const TaskName = "molecule"

// The molecule task's options.
const (
	optVocab     = "vocab"
	optMolecules = "molecules"
	optHidden    = "hidden"
	optCands     = "candidates"
	optWorkers   = "workers"
	optLimit     = "n"
	optRDKitLog  = "rdkit-log"
	optCacheDir  = "cache-dir"
	optObjective = task.ObjectiveOption
	optInitial   = task.InitialOption
	optSmiles    = "smiles"
	optFeaturise = "featurise"
)

// Defaults are the molecule task's hyperparameters (docs/design.md: the
// paper's appendix, the authors' molecule scripts and icml18-jtnn): the
// JT-VAE (latent 56) with the KL weight fixed at 1e-3, pretrained (or
// fine-tuned) at the authors' batch of 32 with clipping at 20, Adam 1e-3
// without a plateau schedule, decayed by 0.9 every 40,000 steps as
// icml18-jtnn's fast_molvae (a fine-tuning of a few epochs never reaches the
// first decay), beta_metric 1,
// retraining 0.1 epoch at batch 128 with clipping at 20 and the KL weight
// 1e-3 whatever the network was pretrained at (the authors' robust_opt_chem
// retrains at beta_final 0.001 a JT-VAE trained at 0.005; ours was
// pretrained on fast_molvae's annealing, 0.026 at its end), budget 500, r 50,
// k 1e-3, a GP over the 2000 best + 8000 random points with 500 inducing
// points. The authors fit their molecule GP on raw latent points and raw
// scores; here, as for every task, the GP's inputs are normalised to the
// unit box and its targets standardised (docs/design.md says why).
var Defaults = task.Defaults{
	Epochs: 1, BatchSize: 32, LR: 1e-3, K: 1e-3, Beta: models.FixedBeta(1e-3), GradClip: models.DefaultGradClip,
	PlateauFactor: 0.2, PlateauPatience: 20, PlateauFloor: 1, DecayFactor: 0.9, DecayEvery: 40000,
	MetricWeight: 1, Eta: models.DefaultEta, PredWeight: 1,
	RetrainBeta: 1e-3, InitialRetrainEpochs: 0.1, RetrainEpochs: 0.1, RetrainBatchSize: 128, RetrainGradClip: models.DefaultGradClip,
	Budget: 500, RetrainEvery: 50, RankK: 1e-3, NBest: 2000, NRand: 8000, Inducing: 500,
}

func init() {
	task.Register(task.Define(TaskSpec()))
	task.RegisterCommand("", moleculeCommand)
	task.RegisterCommand("bench", benchJTVAEStepCommand)
	task.RegisterCommand("bench", benchVocabCoverageCommand)
	task.RegisterCommand("bench", benchCacheMeasureCommand)
}

// TaskSpec describes the molecule task for the registry: objects are SMILES
// strings, network examples their JT-VAE featurisation over the vocabulary
// bound from the task's options. Each call has its own binding (the
// vocabulary, featurisation and decode workers a verb binds), which its
// hooks share.
func TaskSpec() task.Spec[string, jtvae.Example] { return (&binding{}).spec() }

// spec is TaskSpec over the binding b.
func (b *binding) spec() task.Spec[string, jtvae.Example] {
	return task.Spec[string, jtvae.Example]{
		Name:     TaskName,
		Usage:    "molecules (SMILES) scored by --objective: penalised logP (the paper's), QED or a PMO task (JT-VAE; higher is better)",
		Defaults: Defaults,
		Options: append([]task.Option{
			task.FileOption(optVocab, "cluster vocabulary file (default: a checkpoint's own vocabulary; for a new network and data, "+
				ShippedVocab+" in the data directory); one that differs from the checkpoint's is refused",
				task.VerbData, task.VerbTrain, task.VerbOptimize, task.VerbEncode, task.VerbAnalyze, task.VerbImport),
			task.FileOption(optMolecules, "data set file written by the data verb (default: "+DataFileName+" in the data directory)",
				task.VerbTrain, task.VerbOptimize, task.VerbAnalyze),
			task.IntOption(optHidden, 450, 1, "hidden size of a new JT-VAE", task.VerbTrain),
			task.BoolOption(optCands, "also enumerate every node's attachment candidates (slow)", task.VerbData),
			task.IntOption(optLimit, 0, 0, "only the first N molecules of the training split, no validation or test split (0: all)", task.VerbData),
			task.IntOption(optWorkers, 0, 0, "goroutines featurising and decoding molecules (0: all CPUs)",
				task.VerbData, task.VerbTrain, task.VerbOptimize, task.VerbAnalyze),
			task.StringOption(optCacheDir, "", "cache of the featurised training molecules and of their scores under an --objective other than plogp "+
				"(default: next to the data set, DIR/molecules.examples and DIR/molecules.scores; none: off)",
				task.VerbTrain, task.VerbOptimize, task.VerbAnalyze),
			task.StringOption(optFeaturise, FeaturiseOnDemand, "featurise the training split's molecules "+FeaturiseOnDemand+
				" (each the first time a retraining mini-batch needs it, into the cache of --"+optCacheDir+
				", the next mini-batches' while a step runs; the GP's points only as far as the encoder reads them, not cached; "+
				"needs a data file of this release's data molecule) or "+FeaturiseFull+" (all of them first, as train does); "+
				"the run's queries are the same either way", task.VerbOptimize),
			task.StringOption(optObjective, DefaultObjective, "objective, maximised: plogp (penalised logP, the paper's; the data file's scores), "+
				"qed (RDKit's QED) or a PMO task ("+strings.Join(pmoNames(), ", ")+"); other than plogp, the training "+
				"molecules are scored once and cached (--cache-dir); optimize also takes "+task.CommandPrefix+"\"CMD ARGS\", your program "+
				"(docs/objectives.md), or "+manual.Objective+": people measure the molecules, handed out by ask and told back by tell "+
				"(docs/ask-tell.md)",
				task.VerbScore, task.VerbOptimize, task.VerbAnalyze),
			task.IntOption(optInitial, 0, 0, "the PMO protocol: start from N molecules drawn at random (--seed) from the training split "+
				"and scored with --objective (a program included), the run's first N oracle calls (recorded in RUN_DIR/"+bo.InitialFile+
				" for analyze pmo; --budget counts the loop's calls after them); 0: the whole training split with its scores, no calls",
				task.VerbOptimize),
			task.BoolOption(optRDKitLog, "let RDKit print its own log lines on stderr",
				task.VerbData, task.VerbScore, task.VerbTrain, task.VerbOptimize, task.VerbEncode, task.VerbDecode, task.VerbAnalyze),
			task.FileOption(optSmiles, "data: your own library instead of ZINC250K, one SMILES per line, optionally a score "+
				"(whitespace-separated; every line or none), all of it the training split", task.VerbData),
		}, task.ProgramOptions(optObjective, optInitial)...),
		Networks:           []string{jtvae.NetworkKind},
		Objective:          b.objective,
		Dataset:            b.dataset,
		InitialCalls:       func(env *task.Env) bool { return env.Opts.Int(optInitial) > 0 },
		Diversity:          Diversity,
		BuildData:          buildData,
		Score:              scoreArgs,
		Example:            b.example,
		Materialise:        b.materialise,
		MaterialiseEncoder: b.materialiseEncoder,
		Prefetch:           b.prefetch,
		Flush:              b.flush,
		FeaturiseCPU:       b.featuriseCPU,
		Bind:               b.bind,
		NewNetwork:         newNetwork,
		Decode:             b.decode,
		DecodeWidth:        b.decodeWidth,
		Report:             b.report,
		ReadObjects:        ReadSmiles,
		WriteObjects:       task.WriteLines,
		Import:             importCheckpoint,
		Plots:              plots,
		Handout:            writeHandoutSDF,
	}
}

// objective is the objective of --objective, whose keys of the data set's
// molecules are those the binding made when it read the data set.
func (b *binding) objective(env *task.Env) (task.Objective[string], error) {
	o, err := ParseObjective(env.Opts.String(optObjective))
	if err != nil {
		return nil, err
	}
	o.keys = &b.keys
	return o, nil
}
