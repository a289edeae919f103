package task

// TargetTask is implemented by a task whose objective is the similarity of
// an object to a target object (the topology task). The domain-recovery
// analysis (docs/design.md section 10) needs it: how likely a model version's
// decodings near the target's encoding are close to the target.
type TargetTask interface {
	Task
	// Recovery describes the task's side of the protocol.
	Recovery() Recovery
	// OpenTargetModel loads a checkpoint of the task's network (e.g. a BO
	// run's model version) for the target recorded in a run's configuration
	// (config.json's fields, which hold what the objective's Describe
	// returned).
	OpenTargetModel(env *Env, checkpoint string, run map[string]string) (TargetModel, error)
}

// Recovery is the task-specific part of the domain-recovery protocol.
type Recovery struct {
	// Threshold is the similarity above which a decoding counts as the
	// target (the paper's 0.8 for topology).
	Threshold float64
	// Similarity and Decoding say what the similarity is and how one
	// stochastic decoding of a latent point is drawn (for the report);
	// Mode says what the decoder's mode is.
	Similarity, Decoding, Mode string
}

// TargetModel is one model version with the target it is measured against.
type TargetModel interface {
	// LatentDim is the size of the latent points.
	LatentDim() int
	// Target describes the target (for the report).
	Target() string
	// Posterior returns the mean and standard deviation of the encoder's
	// distribution q(z | target).
	Posterior() (mu, std []float64, err error)
	// Similarities draws n decodings of each latent point of z (row-major)
	// from the decoder's distribution and returns their similarities with
	// the target (point after point, n each). The decodings of point i
	// depend only on (seed, i).
	Similarities(z []float64, n int, seed uint64) ([]float64, error)
	// ModeSimilarities returns the similarity with the target of the
	// decoder's mode at each latent point of z (the task's own decode).
	ModeSimilarities(z []float64) ([]float64, error)
	// Close releases the network.
	Close()
}
