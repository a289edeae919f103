package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/tlbo-native/tlbo-native/internal/cliutil"
	"github.com/tlbo-native/tlbo-native/internal/rusage"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

// trainCommand (pre)trains a task's VAE with a chosen ELBO.
func trainCommand() *cli.Command {
	return taskVerb{
		name:  "train",
		usage: "train a task's VAE with a chosen ELBO and write a checkpoint",
		description: "Writes --out (a state dict that Python's torch.load reads), its configuration FILE.json\n" +
			"(network kind and configuration, ELBO, training state) and Adam's state FILE.adam.pt whenever the\n" +
			"validation loss is the best so far, and the latest epoch to FILE.last.pt (+ .json, .adam.pt) after\n" +
			"every epoch; --resume continues from it, exactly as an uninterrupted training on one thread (the\n" +
			"checkpoints keep the sampler's random state), with the settings its header records: the ELBO,\n" +
			"schedules, rate, batches, seed and data split; a flag that asks for another value is refused.\n" +
			"An existing checkpoint at --out is refused without --resume or --force, and the directory of\n" +
			"--out is checked before any work. Flags left unset take the task's defaults (docs/design.md\n" +
			"lists them and where they come from). Mini-batches are drawn\n" +
			"with replacement in proportion to rank weights with --k, validation examples likewise (as the\n" +
			"authors' validation loader).",
		verb:   task.VerbTrain,
		flags:  trainFlags,
		action: trainAction,
	}.command()
}

// trainFlags are train's own flags, defaults shown for task t (nil: per
// task).
func trainFlags(t task.Task) []cli.Flag {
	def := taskDefault(t)
	flags := []cli.Flag{taskFlag(t, false)}
	flags = append(flags, elboFlags(t, trainELBO)...)
	flags = append(flags,
		def(&cli.StringFlag{Name: "k", Usage: "rank-weight k, inf for uniform sampling"}, func(d task.Defaults) string { return fmtFloat(d.K) }),
		def(&cli.IntFlag{Name: "epochs", Usage: "epochs in total, resumed ones included"}, func(d task.Defaults) string { return fmt.Sprint(d.Epochs) }),
		def(&cli.IntFlag{Name: "batch-size", Usage: "mini-batch size"}, func(d task.Defaults) string { return fmt.Sprint(d.BatchSize) }),
		def(&cli.Float64Flag{Name: "lr", Usage: "Adam learning rate"}, func(d task.Defaults) string { return fmtFloat(d.LR) }),
		def(&cli.Float64Flag{Name: "beta-init", Usage: "KL weight at the start"}, func(d task.Defaults) string { return fmtFloat(d.Beta.Init) }),
		def(&cli.Float64Flag{Name: "beta-final", Usage: "KL weight at the end of annealing"}, func(d task.Defaults) string { return fmtFloat(d.Beta.Final) }),
		def(&cli.IntFlag{Name: "beta-warmup", Usage: "steps before beta starts growing"}, func(d task.Defaults) string { return fmt.Sprint(d.Beta.Warmup) }),
		def(&cli.IntFlag{Name: "beta-every", Usage: "steps between two increases of beta"}, func(d task.Defaults) string { return fmt.Sprint(d.Beta.Every) }),
		def(&cli.Float64Flag{Name: "beta-step", Usage: "linear annealing: beta grows by this every --beta-every steps, as icml18-jtnn's " +
			"fast_molvae (0.002 every 2000 after 39999 from 0 to 1); 0: geometric, by --beta-factor"}, func(d task.Defaults) string { return fmtFloat(d.Beta.Step) }),
		def(&cli.Float64Flag{Name: "beta-factor", Usage: "geometric annealing: beta is multiplied by this every --beta-every steps"}, func(d task.Defaults) string { return fmtFloat(d.Beta.Factor) }),
		def(&cli.Float64Flag{Name: "grad-clip", Usage: "gradient-norm clipping, 0 for none"}, func(d task.Defaults) string { return fmtFloat(d.GradClip) }),
		&cli.IntFlag{Name: "latent", Usage: "latent dimension of a new network (0: the task's)"},
		&cli.BoolFlag{Name: "lr-plateau", Value: true, Usage: "lower the learning rate when the validation loss stalls (PyTorch's " +
			"ReduceLROnPlateau: --lr-factor after more than --lr-patience epochs without a better loss, down to --min-lr); " +
			"--lr-plateau=false keeps it constant"},
		def(&cli.Float64Flag{Name: "lr-factor", Usage: "plateau: factor of the learning rate"}, func(d task.Defaults) string { return fmtFloat(d.PlateauFactor) }),
		def(&cli.IntFlag{Name: "lr-patience", Usage: "plateau: epochs without a better validation loss before lowering"}, func(d task.Defaults) string { return fmt.Sprint(d.PlateauPatience) }),
		def(&cli.Float64Flag{Name: "min-lr", Usage: "plateau: floor of the learning rate"}, func(d task.Defaults) string {
			if d.PlateauFloor == 1 {
				return "lr (never lowered)"
			}
			return fmtFloat(d.PlateauFloor) + " x lr"
		}),
		def(&cli.Float64Flag{Name: "lr-decay", Usage: "multiply the learning rate by this every --lr-decay-every steps"}, func(d task.Defaults) string { return fmtFloat(d.DecayFactor) }),
		def(&cli.IntFlag{Name: "lr-decay-every", Usage: "steps between two --lr-decay, 0 for none"}, func(d task.Defaults) string { return fmt.Sprint(d.DecayEvery) }),
		def(&cli.BoolFlag{Name: "augment", Usage: "augment pretraining mini-batches with the task's transformations, e.g. topology's " +
			"rotations and flips, which keep the labels (retraining in optimize always augments)"},
			func(d task.Defaults) string { return fmt.Sprint(d.PretrainAugment) }),
		&cli.Float64Flag{Name: "labelled-fraction", Value: 1, Usage: "semi-supervised: share of training points keeping their label"},
		&cli.Float64Flag{Name: "val-fraction", Value: 0.05, Usage: "share of the data held out for validation"},
		&cli.IntFlag{Name: "decode-attempts", Usage: "stochastic decodings per point in the final report (0: the network's default)"},
		&cli.IntFlag{Name: "prior-samples", Value: 1000, Usage: "prior samples decoded for the final validity (0: skip)"},
		&cli.Uint64Flag{Name: "seed", Usage: "seeds libtorch, the sampler and the labelled subset"},
		cliutil.DeviceFlag(), cliutil.ThreadsFlag(),
		&cli.IntFlag{Name: "blas-threads", Value: 1, Usage: "OpenBLAS threads under libtorch's products (0: TLBO_BLAS_THREADS, else the core count); " +
			"1 keeps them from competing with libtorch's own threads"},
		&cli.StringFlag{Name: "out", Usage: "checkpoint FILE.pt", Required: true},
		&cli.StringFlag{Name: "init", Usage: "start from the network of this checkpoint FILE.pt (a fine-tuning: its kind, configuration, " +
			"weights and, for molecules, vocabulary; the optimiser, schedules and counters start afresh, and the new checkpoint's header " +
			"names it with its digest), e.g. the soft-triplet JT-VAE fine-tuned from the plain one"},
		&cli.BoolFlag{Name: "resume", Usage: "continue the training saved in --out (an existing --out is refused without --resume or --force)"},
		&cli.BoolFlag{Name: "fresh-optimizer", Usage: "with --resume: continue a saved training whose optimiser state (FILE.last.adam.pt) " +
			"is missing, e.g. a checkpoint committed without it, with new Adam moments; counters, schedules, rate and sampler come from " +
			"its header, which records the step"},
		&cli.BoolFlag{Name: "force", Usage: "overwrite the checkpoint at --out (its .pt, .json, .adam.pt and .last.* files are removed first)"},
		&cli.IntFlag{Name: "checkpoint-every", Usage: "also save the latest state every N steps within an epoch (0: after each epoch only)"},
	)
	return append(flags, dataFlags()...)
}

// trainRequest reads the ELBO, schedule and optimiser flags, unset ones
// from the task's defaults.
func trainRequest(c *cli.Context, t task.Task, dev torch.Device) (task.TrainRequest, error) {
	d := t.Defaults()
	e, err := elboFromFlags(c, t, c.String("elbo"))
	if err != nil {
		return task.TrainRequest{}, err
	}
	k, err := parseK(c, "k", d.K)
	if err != nil {
		return task.TrainRequest{}, err
	}
	beta := d.Beta
	beta.Init, beta.Final, beta.Warmup = floatOr(c, "beta-init", beta.Init), floatOr(c, "beta-final", beta.Final), intOr(c, "beta-warmup", beta.Warmup)
	beta.Every, beta.Step, beta.Factor = intOr(c, "beta-every", beta.Every), floatOr(c, "beta-step", beta.Step), floatOr(c, "beta-factor", beta.Factor)
	if err := beta.Validate(); err != nil {
		return task.TrainRequest{}, fmt.Errorf("--beta-*: %w", err)
	}
	req := task.TrainRequest{
		Opts: models.TrainOptions{ELBO: e, Beta: beta, LR: floatOr(c, "lr", d.LR), BatchSize: intOr(c, "batch-size", d.BatchSize),
			GradClip: floatOr(c, "grad-clip", d.GradClip), Device: dev, Seed: c.Uint64("seed")},
		K: k, Epochs: intOr(c, "epochs", d.Epochs), ValFraction: c.Float64("val-fraction"),
		LabelledFraction: c.Float64("labelled-fraction"), Latent: c.Int("latent"), Out: c.String("out"), Resume: c.Bool("resume"),
		FreshOptimizer: c.Bool("fresh-optimizer"), CheckpointEvery: c.Int("checkpoint-every"), Init: c.String("init"),
		Report: task.ReportOptions{Decode: task.DecodeOptions{Attempts: c.Int("decode-attempts")}, PriorSamples: c.Int("prior-samples")},
	}
	req.Force, req.Augment, req.Given = c.Bool("force"), d.PretrainAugment, c.IsSet
	if c.IsSet("augment") {
		req.Augment = c.Bool("augment")
	}
	if c.Bool("lr-plateau") {
		p := d.Plateau(req.Opts.LR)
		p.Factor, p.Patience, p.MinLR = floatOr(c, "lr-factor", p.Factor), intOr(c, "lr-patience", p.Patience), floatOr(c, "min-lr", p.MinLR)
		if err := p.Validate(); err != nil {
			return req, fmt.Errorf("--lr-factor, --lr-patience, --min-lr: %w", err)
		}
		req.Plateau = p
	} else if c.IsSet("lr-factor") || c.IsSet("lr-patience") || c.IsSet("min-lr") {
		return req, fmt.Errorf("--lr-factor, --lr-patience and --min-lr configure the plateau schedule, which --lr-plateau=false turns off")
	}
	if every := intOr(c, "lr-decay-every", d.DecayEvery); every > 0 {
		req.Decay = &models.StepDecay{Factor: floatOr(c, "lr-decay", d.DecayFactor), Every: every}
		if err := req.Decay.Validate(); err != nil {
			return req, fmt.Errorf("--lr-decay, --lr-decay-every: %w", err)
		}
	} else if every < 0 {
		return req, fmt.Errorf("--lr-decay-every %d: want >= 0", every)
	} else if c.IsSet("lr-decay") {
		return req, fmt.Errorf("--lr-decay: give --lr-decay-every too (task %s decays no learning rate)", t.Name())
	}
	if err := req.Opts.Validate(); err != nil {
		return req, err
	}
	if req.Epochs < 1 {
		return req, fmt.Errorf("--epochs %d: want >= 1", req.Epochs)
	}
	return req, nil
}

func trainAction(c *cli.Context, t task.Task) error {
	if err := cliutil.NoArgs(c); err != nil {
		return err
	}
	dev, err := cliutil.SetupTorch(c)
	if err != nil {
		return err
	}
	req, err := trainRequest(c, t, dev)
	if err != nil {
		return err
	}
	env, err := taskEnv(c, t, task.VerbTrain)
	if err != nil {
		return err
	}
	blas := setupBLAS(c)
	env.Device, env.Progress = dev, newProgress()
	fmt.Fprintf(os.Stderr, "BLAS: %s\n", blas)
	cpu0 := rusage.CPUSeconds()
	if err := t.Train(env, req); err != nil {
		return err
	}
	fmt.Printf("cpu_seconds %.1f (user+system)\n", rusage.CPUSeconds()-cpu0)
	fmt.Printf("peak_rss_mb %.0f\n", rusage.PeakRSSMB())
	return nil
}

// progress draws long work for the user: a bar per training epoch with the
// running mean of every loss component, and a bar of items for data-set
// building. When stderr is not a terminal (a run under nohup, a log file)
// it writes a line with the running means and the time per step every
// logEvery instead of the bar, and a line per epoch.
type progress struct {
	w        io.Writer
	tty      bool
	logEvery time.Duration
	bar      *progressbar.ProgressBar
	sum      models.Losses
	first    int       // items or steps already done when the bar started
	start    time.Time // when the bar started
	logged   time.Time // the last line written without a terminal
}

func newProgress() *progress {
	return &progress{w: os.Stderr, tty: term.IsTerminal(int(os.Stderr.Fd())), logEvery: time.Minute}
}

// Step advances the epoch's bar. The first step seen starts it, which in an
// epoch resumed from a checkpoint written within it is not step 1.
func (p *progress) Step(epoch, epochs, i, n int, l models.Losses) {
	if p.start.IsZero() {
		p.first, p.start, p.logged, p.sum = i-1, time.Now(), time.Now(), models.Losses{}
		if p.tty {
			p.bar = progressbar.NewOptions(n, progressbar.OptionSetWriter(p.w), progressbar.OptionShowCount(),
				progressbar.OptionSetWidth(20), progressbar.OptionSetPredictTime(true), progressbar.OptionShowDescriptionAtLineEnd())
		}
	}
	p.sum.Add(l, 1)
	desc := fmt.Sprintf("epoch %d/%d %s", epoch, epochs, p.sum.Scaled(1/float64(i-p.first)))
	if p.first > 0 {
		desc += fmt.Sprintf(" (resumed at step %d)", p.first)
	}
	if p.bar != nil {
		p.bar.Describe(desc)
		_ = p.bar.Set(i)
		return
	}
	if now := time.Now(); !p.tty && now.Sub(p.logged) >= p.logEvery && i < n {
		p.logged = now
		perStep := now.Sub(p.start).Seconds() / float64(i-p.first)
		fmt.Fprintf(p.w, "%s step %d/%d %.2fs/step, left: epoch %s, training %s\n", desc, i, n, perStep,
			stepsLeft(perStep, n-i), stepsLeft(perStep, n-i+(epochs-epoch)*n))
	}
}

// stepsLeft is the time that steps more take at perStep seconds each
// (validation passes not counted), rounded for a person.
func stepsLeft(perStep float64, steps int) time.Duration {
	d := time.Duration(perStep * float64(steps) * float64(time.Second))
	if d >= time.Hour {
		return d.Round(time.Minute)
	}
	return d.Round(time.Second)
}

// Epoch prints the epoch's training and validation losses.
func (p *progress) Epoch(r models.EpochReport, epochs int) {
	if p.bar != nil {
		_ = p.bar.Finish()
		fmt.Fprintln(p.w)
		p.bar = nil
	}
	p.start = time.Time{}
	line := fmt.Sprintf("epoch %d/%d %.1fs train %s", r.Epoch, epochs, r.Duration.Seconds(), r.Train)
	if r.Val != nil {
		line += " | val " + r.Val.String()
	}
	fmt.Fprintln(p.w, line)
}

// Count draws a bar of the items done in this run (count, rate, time left);
// items found done from an earlier run are named in its description.
// Without a terminal it writes a line every logEvery and one at the end.
func (p *progress) Count(what string, i, n int) {
	if p.bar == nil && p.start.IsZero() {
		p.first, p.start, p.logged = i, time.Now(), time.Now()
		desc := what
		if i > 0 {
			desc = fmt.Sprintf("%s (%d of %d done earlier)", what, i, n)
		}
		if p.tty {
			p.bar = progressbar.NewOptions(n-i, progressbar.OptionSetWriter(p.w), progressbar.OptionShowCount(),
				progressbar.OptionShowIts(), progressbar.OptionSetItsString(what), progressbar.OptionSetPredictTime(true),
				progressbar.OptionSetWidth(20), progressbar.OptionSetDescription(desc))
		}
	}
	if p.bar != nil {
		_ = p.bar.Set(i - p.first)
	} else if now := time.Now(); now.Sub(p.logged) >= p.logEvery || i == n {
		p.logged = now
		rate := float64(i-p.first) / max(now.Sub(p.start).Seconds(), 1e-9)
		fmt.Fprintf(p.w, "%s %d/%d (%.1f/s)\n", what, i, n, rate)
	}
	if i == n {
		if p.bar != nil {
			_ = p.bar.Finish()
			fmt.Fprintln(p.w)
		}
		p.bar, p.start = nil, time.Time{}
	}
}
