package task

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/rusage"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/models/weighting"
	"github.com/tlbo-native/tlbo-native/torch"
)

// trainingData returns the task's data set as examples of the bound network
// (Spec.Bind), split into
// training and validation parts, with the semi-supervised label mask and
// the rank weights of the training part.
func (d *Defined[O, E]) trainingData(env *Env, req TrainRequest, maximize bool) (train, val models.Data[E], source string, err error) {
	objs, scores, source, err := d.s.Dataset(env)
	if err != nil {
		return train, val, "", err
	}
	ex, err := d.examples(objs, nil, nil)
	if err != nil {
		return train, val, "", fmt.Errorf("task %s: data set: %w", d.s.Name, err)
	}
	train, val, err = models.Data[E]{Examples: ex, Labels: scores}.Split(req.ValFraction)
	if err != nil {
		return train, val, "", fmt.Errorf("validation fraction: %w", err)
	}
	rng := rand.New(rand.NewPCG(env.Seed, 0x6c6162656c))
	if train.Labels, err = models.KeepLabels(train.Labels, req.LabelledFraction, rng); err != nil {
		return train, val, "", fmt.Errorf("labelled fraction: %w", err)
	}
	if train.Weights, err = weighting.RankWeights(train.Labels, req.K, maximize); err != nil {
		return train, val, source, err
	}
	// The authors draw validation batches with the rank weights too.
	if val.Len() > 0 {
		val.Weights, err = weighting.RankWeights(val.Labels, req.K, maximize)
	}
	return train, val, source, err
}

// LastPath is where pretraining keeps its latest epoch for resuming,
// FILE.last.pt for FILE.pt (FILE.pt holds the best-validation epoch).
func LastPath(out string) string {
	return strings.TrimSuffix(out, filepath.Ext(out)) + ".last" + filepath.Ext(out)
}

// checkpointFiles returns the files a training writes for out: the best
// epoch's checkpoint, header and optimiser state, and the same for the
// latest epoch.
func checkpointFiles(out string) []string {
	last := LastPath(out)
	return []string{out, models.HeaderPath(out), models.AdamPath(out), last, models.HeaderPath(last), models.AdamPath(last)}
}

// resumeFrom returns the checkpoint a resumed training continues: the latest
// epoch's, else req.Out (written before the best/last split).
func resumeFrom(out string) string {
	if _, err := os.Stat(models.HeaderPath(LastPath(out))); err == nil {
		return LastPath(out)
	}
	return out
}

// checkOutput checks, before any work, that the training can write its
// checkpoints: the directory of req.Out exists and takes a new file (one is
// created and removed), and req.Out holds no checkpoint unless the request
// resumes it (it must then exist) or forces a new one (the old files are
// then removed).
func checkOutput(req TrainRequest) error {
	if req.Out == "" {
		return fmt.Errorf("no checkpoint path (--out)")
	}
	dir := filepath.Dir(req.Out)
	if st, err := os.Stat(dir); err != nil {
		return fmt.Errorf("--out %s: directory %s: %w", req.Out, dir, err)
	} else if !st.IsDir() {
		return fmt.Errorf("--out %s: %s is not a directory", req.Out, dir)
	}
	probe, err := os.CreateTemp(dir, ".tlbo-native-probe-*")
	if err != nil {
		return fmt.Errorf("--out %s: directory %s is not writable: %w", req.Out, dir, err)
	}
	probe.Close()
	if err := os.Remove(probe.Name()); err != nil {
		return fmt.Errorf("--out %s: %w", req.Out, err)
	}
	if st, err := os.Stat(req.Out); err == nil && st.IsDir() {
		return fmt.Errorf("--out %s is a directory; want a checkpoint file such as %s", req.Out, filepath.Join(req.Out, "vae.pt"))
	}
	var existing []string
	for _, f := range checkpointFiles(req.Out) {
		if _, err := os.Stat(f); err == nil {
			existing = append(existing, f)
		}
	}
	switch {
	case req.Resume && req.Init != "":
		return fmt.Errorf("--resume and --init: a resumed training continues from its own checkpoint at --out; --init starts a new one")
	case req.Resume && req.Force:
		return fmt.Errorf("--resume and --force: give one (continue the checkpoint, or overwrite it)")
	case req.FreshOptimizer && !req.Resume:
		return fmt.Errorf("--fresh-optimizer without --resume: it continues a saved training whose optimiser state is missing")
	case req.Resume:
		from := resumeFrom(req.Out)
		if _, err := os.Stat(models.HeaderPath(from)); err != nil {
			return fmt.Errorf("--resume: no checkpoint to continue at %s (%s is missing)", req.Out, models.HeaderPath(from))
		}
	case len(existing) > 0 && !req.Force:
		return fmt.Errorf("--out %s: a checkpoint is there (%s); give --resume to continue it or --force to overwrite it",
			req.Out, strings.Join(existing, ", "))
	case req.Force:
		for _, f := range existing {
			if err := os.Remove(f); err != nil {
				return fmt.Errorf("--force: %w", err)
			}
		}
	}
	return nil
}

// newTrainer builds a fresh network and its trainer, or resumes the
// checkpoint of the latest epoch saved for req.Out, whose header's training
// state is saved (resumeSettings).
func (d *Defined[O, E]) newTrainer(env *Env, req TrainRequest, saved *models.TrainingState) (models.VAE[E], *models.Trainer[E], error) {
	if req.Resume {
		from := resumeFrom(req.Out)
		net, tr, err := models.LoadTrainer[E](from, env.Device, models.ResumeOptions{FreshOptimizer: req.FreshOptimizer}, d.s.Networks...)
		if errors.Is(err, models.ErrNoOptimizerState) {
			return nil, nil, fmt.Errorf("resume: %w (--fresh-optimizer continues with new Adam moments)", err)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("resume: %w", err)
		}
		if req.Given != nil && req.Given("latent") && req.Latent != net.LatentDim() {
			tr.Close()
			net.Close()
			return nil, nil, fmt.Errorf("resume: %s has latent dimension %d, not %d (--latent)", from, net.LatentDim(), req.Latent)
		}
		if req.Augment { // resumeSettings took the checkpoint's when it records one
			tr.Augment = d.s.Augment
		}
		if tr.Data == nil { // written before checkpoints kept the data settings
			tr.Data = dataSettings(env, req)
		}
		if len(tr.State().FreshOptimizer) > len(saved.FreshOptimizer) { // Resume started Adam afresh
			fmt.Fprintf(env.Stderr, "note: %s has no optimiser state: Adam starts afresh at step %d, so the training will not equal an uninterrupted one\n",
				from, tr.Step)
		}
		if !saved.ExactResume() {
			fmt.Fprintf(env.Stderr, "note: %s was written before checkpoints kept the sampler's and the noise's random state: "+
				"the resumed training continues with fresh random draws and will not equal an uninterrupted one bit for bit\n", from)
		}
		tr.SeedSteps = true
		tr.StartCost(resumedCost(env, from, saved.Cost), rusage.CPUSeconds)
		return net, tr, nil
	}
	net, origin, err := d.startNetwork(env, req)
	if err != nil {
		return nil, nil, err
	}
	tr, err := models.NewTrainer(net, req.Opts)
	if err != nil {
		net.Close()
		return nil, nil, err
	}
	tr.Init, tr.Data = origin, dataSettings(env, req)
	if req.Augment {
		tr.Augment = d.s.Augment
	}
	tr.Plateau, tr.Decay, tr.SeedSteps = req.Plateau, req.Decay, true
	tr.StartCost(models.Cost{}, rusage.CPUSeconds)
	return net, tr, nil
}

// dataSettings returns the data settings of a training on env for req, for
// its checkpoints.
func dataSettings(env *Env, req TrainRequest) *models.DataSettings {
	return &models.DataSettings{Seed: env.Seed, K: models.RankK(req.K), ValFraction: req.ValFraction, LabelledFraction: req.LabelledFraction}
}

// resumedCost returns the cost a resumed checkpoint records; one written
// before checkpoints kept it counts from this run on, marked partial.
func resumedCost(env *Env, from string, c *models.Cost) models.Cost {
	if c != nil {
		return *c
	}
	fmt.Fprintf(env.Stderr, "note: %s does not record what its earlier runs cost: the training's cost is counted from this run on\n", from)
	return models.Cost{Partial: true}
}

// startNetwork returns the network a new training starts from: a new one,
// or with req.Init the network of that checkpoint (loaded and bound as the
// other verbs load one) with where it came from.
func (d *Defined[O, E]) startNetwork(env *Env, req TrainRequest) (models.VAE[E], *models.Origin, error) {
	if req.Init == "" {
		net, err := d.s.NewNetwork(env, req.Latent)
		return net, nil, err
	}
	if req.Latent != 0 {
		return nil, nil, fmt.Errorf("--init %s with --latent %d: a fine-tuning keeps the checkpoint's network and its latent size", req.Init, req.Latent)
	}
	net, h, err := d.loadNetwork(env, req.Init)
	if err != nil {
		return nil, nil, fmt.Errorf("--init: %w", err)
	}
	digest, err := FileDigest(req.Init)
	if err != nil {
		net.Close()
		return nil, nil, fmt.Errorf("--init: %w", err)
	}
	o := &models.Origin{File: req.Init, SHA256: digest}
	if st := h.Training; st != nil {
		o.ELBO, o.Step, o.Epoch = st.ELBO.Name, st.Step, st.Epoch
	}
	return net, o, nil
}

// Train pretrains the task's VAE (or resumes it) for req.Epochs epochs in
// all. Before any work it checks that req.Out can be written and does not
// overwrite a checkpoint (checkOutput). After every epoch it saves the
// trainer to LastPath(req.Out) (to resume) and, when the validation loss is
// the best so far, to req.Out (the authors keep the best-validation model);
// then it reports the network's quality and timings on env.Stdout. The
// checkpoints keep the sampler's state and libtorch is seeded from the seed
// and the step before every step, so that on one thread a resumed training
// equals the uninterrupted one.
func (d *Defined[O, E]) Train(env *Env, req TrainRequest) error {
	if req.Epochs < 1 {
		return fmt.Errorf("epochs %d: want >= 1", req.Epochs)
	}
	if req.Augment && d.s.Augment == nil {
		return fmt.Errorf("task %s has no augmentation", d.s.Name)
	}
	if err := checkOutput(req); err != nil {
		return err
	}
	var saved *models.TrainingState
	if req.Resume {
		var err error
		if env, req, saved, err = resumeSettings(env, req); err != nil {
			return err
		}
	}
	if err := torch.ManualSeed(env.Seed); err != nil {
		return err
	}
	obj, err := d.s.Objective(env)
	if err != nil {
		return err
	}
	net, tr, err := d.newTrainer(env, req, saved)
	if err != nil {
		return err
	}
	defer net.Close()
	defer tr.Close()
	if err := d.bind(env, net); err != nil {
		return err
	}
	if req.Resume {
		if err := completeBest(env, tr, req.Out, saved); err != nil {
			return err
		}
	}
	train, val, source, err := d.trainingData(env, req, obj.Maximize())
	if err != nil {
		return err
	}
	kind, _ := net.Describe()
	fmt.Fprintf(env.Stderr, "training %s on %s (%d threads): %d train, %d validation points from %s, ELBO %s, from epoch %d%s\n",
		kind, env.Device, torch.NumThreads(), train.Len(), val.Len(), source, tr.Opts.ELBO.Name, tr.Epoch, initNote(tr.Init))
	start, startEpoch := time.Now(), tr.Epoch
	var trainTime time.Duration
	var saveErr error
	err = tr.Fit(train, val, req.Epochs-tr.Epoch, d.stepHook(env, tr, req, &saveErr), func(r models.EpochReport) error {
		if saveErr != nil {
			return saveErr
		}
		if env.Progress != nil {
			env.Progress.Epoch(r, req.Epochs)
		}
		trainTime += r.TrainTime
		if err := tr.Save(LastPath(req.Out), &r); err != nil {
			return err
		}
		if r.Best {
			return tr.Save(req.Out, &r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if done := tr.Epoch - startEpoch; done > 0 {
		fmt.Fprintf(env.Stdout, "seconds_per_epoch %.2f (training steps, without validation)\n", trainTime.Seconds()/float64(done))
	}
	// Report on the weights the checkpoint keeps: the best epoch.
	if err := tr.LoadWeights(req.Out); err != nil {
		return err
	}
	if d.s.Report != nil {
		if err := d.s.Report(env, net, val.Examples, req.Report); err != nil {
			return err
		}
	}
	fmt.Fprintf(env.Stdout, "wall_seconds %.1f\n", time.Since(start).Seconds())
	fmt.Fprintf(env.Stdout, "training_cost %s\n", tr.Cost())
	best := "the last epoch"
	if h, err := models.ReadHeader(req.Out, ""); err == nil && h.Training != nil {
		best = fmt.Sprintf("epoch %d", h.Training.Epoch)
	}
	fmt.Fprintf(env.Stdout, "checkpoint %s (best validation: %s; + %s, %s; latest epoch for --resume: %s)\n", req.Out, best,
		models.HeaderPath(req.Out), models.AdamPath(req.Out), LastPath(req.Out))
	return nil
}

// completeBest writes the best-validation checkpoint out again from the
// trainer tr, just resumed from the latest epoch's checkpoint whose state is
// st, when that epoch was the best (st.Best) and out does not hold it: the
// training was cut off (a full disk, a kill) while saving out after saving
// the latest epoch, so that out is missing, partly written or an earlier
// epoch's. Without this, a resume of a finished training found nothing to
// train and no checkpoint to report on.
func completeBest[E any](env *Env, tr *models.Trainer[E], out string, st *models.TrainingState) error {
	if st == nil || !st.Best || st.EpochStep != 0 || resumeFrom(out) == out {
		return nil
	}
	h, err := models.ReadHeader(out, "")
	complete := err == nil && h.Training != nil && h.Training.Epoch == st.Epoch && h.Training.Step == st.Step
	for _, f := range []string{out, models.AdamPath(out)} {
		if _, err := os.Stat(f); err != nil {
			complete = false
		}
	}
	if complete {
		return nil
	}
	rep := &models.EpochReport{Epoch: st.Epoch, Val: st.Val, Best: true}
	if st.Train != nil {
		rep.Train = *st.Train
	}
	if err := tr.Save(out, rep); err != nil {
		return fmt.Errorf("resume: complete %s from %s: %w", out, LastPath(out), err)
	}
	fmt.Fprintf(env.Stderr, "note: %s did not hold epoch %d, the best so far, whose save was cut off: written again from %s\n",
		out, st.Epoch, LastPath(out))
	return nil
}

// stepHook reports each step and, every req.CheckpointEvery steps within an
// epoch, saves the trainer to LastPath(req.Out); a failed save is kept in
// saveErr, which ends the training at the epoch's end.
func (d *Defined[O, E]) stepHook(env *Env, tr *models.Trainer[E], req TrainRequest, saveErr *error) models.StepFunc {
	return func(i, n int, l models.Losses) {
		if env.Progress != nil {
			env.Progress.Step(tr.Epoch+1, req.Epochs, i, n, l)
		}
		if k := req.CheckpointEvery; k > 0 && i%k == 0 && i < n && *saveErr == nil {
			if err := tr.Save(LastPath(req.Out), nil); err != nil {
				*saveErr = fmt.Errorf("checkpoint at step %d of epoch %d: %w", i, tr.Epoch+1, err)
			}
		}
	}
}

// initNote says which checkpoint a fine-tuning started from ("" for none).
func initNote(o *models.Origin) string {
	if o == nil {
		return ""
	}
	return fmt.Sprintf(", the weights of %s (sha256 %.12s, ELBO %q, step %d)", o.File, o.SHA256, o.ELBO, o.Step)
}
