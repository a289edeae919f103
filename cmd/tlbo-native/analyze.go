package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/analysis"
	"github.com/tlbo-native/tlbo-native/internal/gp"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
)

// analyzeCommand groups the paper's analyses of latent spaces (DESIGN.md
// section 10).
func analyzeCommand() *cli.Command {
	return &cli.Command{
		Name:  "analyze",
		Usage: "the paper's analyses of VAE latent spaces, each as a table (.txt, .npz) and a PNG",
		Subcommands: []*cli.Command{
			{
				Name:  "gp-loglik",
				Usage: "Table 1: GP predictive log-likelihood of the encoded labelled data over random train/test splits",
				Description: "Encodes the task's labelled data with each --vae (encoder means), or reads --latents/--scores,\n" +
					"and for each of --splits random splits fits an SGPR with --inducing inducing points on the\n" +
					"training part and reports the mean predictive log-likelihood per held-out point (mean ± std\n" +
					"over splits). Writes OUT/gp_loglik.txt, .npz and .png.",
				Flags: append(analyzeFlags(),
					&cli.IntFlag{Name: "splits", Value: 5, Usage: "random train/test splits"},
					&cli.Float64Flag{Name: "test-fraction", Value: 0.2, Usage: "share of the points held out per split"},
					&cli.IntFlag{Name: "inducing", Value: 500, Usage: "inducing points (0: an exact GP)"},
					&cli.StringFlag{Name: "kernel", Value: "rbf", Usage: "rbf or matern52"},
					&cli.StringFlag{Name: "gp-objective", Value: string(gp.DefaultApproximation), Usage: "sparse GP training objective: titsias or fitc"},
					&cli.IntFlag{Name: "max-iter", Usage: "L-BFGS iterations per fit (0: the default, 200)"},
				),
				Action: gpLogLikAction,
			},
			{
				Name:  "latent-distances",
				Usage: "Fig. 2: histograms of high-high, low-low and high-low latent distances, split at the median score",
				Description: "Encodes the task's labelled data with each --vae (or reads --latents/--scores), splits it at the\n" +
					"median score and writes the normalised histograms of the pairwise latent distances, one panel\n" +
					"per VAE; a group with more than --max-pairs pairs is represented by that many sampled pairs\n" +
					"(the table says which). Writes OUT/latent_distances.txt, .npz and .png.",
				Flags: append(analyzeFlags(),
					&cli.IntFlag{Name: "max-pairs", Value: 1_000_000, Usage: "pairs per group beyond which pairs are sampled"},
					&cli.IntFlag{Name: "bins", Value: 50, Usage: "histogram bins"},
				),
				Action: distancesAction,
			},
		},
	}
}

// analyzeFlags are the inputs and outputs shared by the analyses.
func analyzeFlags() []cli.Flag {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "task", Usage: "task whose labelled data --vae encodes: " + strings.Join(task.Names(), ", ")},
		&cli.StringSliceFlag{Name: "vae", Usage: "VAE checkpoint (.pt); repeat for several"},
		&cli.StringSliceFlag{Name: "latents", Usage: "latent points (N x d .npy) instead of --vae; repeat for several"},
		&cli.StringSliceFlag{Name: "scores", Usage: "scores (N .npy) of the --latents, one per --latents"},
		&cli.StringSliceFlag{Name: "name", Usage: "label of each input, in order (default: the file name)"},
		&cli.IntFlag{Name: "max-points", Usage: "analyse a random subset of this many labelled points (0: all)"},
		&cli.Uint64Flag{Name: "seed", Usage: "seed of the splits, subsets and sampled pairs"},
		&cli.StringFlag{Name: "out", Required: true, Usage: "output directory"},
		deviceFlag, threadsFlag,
	}
	return append(append(flags, dataFlags()...), taskOptionFlags()...)
}

// latentSet is one input of an analysis.
type latentSet struct {
	name string
	z    *mat.Dense
	y    []float64
}

func gpLogLikAction(c *cli.Context) error {
	kern, err := gp.ParseKernel(c.String("kernel"))
	if err != nil {
		return fmt.Errorf("--kernel: %w", err)
	}
	approx, err := gp.ParseApproximation(c.String("gp-objective"))
	if err != nil {
		return fmt.Errorf("--gp-objective: %w", err)
	}
	if c.Int("inducing") < 0 || c.Int("splits") < 1 {
		return fmt.Errorf("--inducing %d and --splits %d: want >= 0 and >= 1", c.Int("inducing"), c.Int("splits"))
	}
	sets, notes, err := analyzeInputs(c)
	if err != nil {
		return err
	}
	o := analysis.GPOptions{Splits: c.Int("splits"), TestFraction: c.Float64("test-fraction"), Inducing: c.Int("inducing"),
		Kernel: kern, Approximation: approx, MaxIter: c.Int("max-iter"), Seed: c.Uint64("seed")}
	notes = append(notes, fmt.Sprintf("%d random splits, %.0f%% held out; GP: %d inducing points (0: exact), kernel %s, objective %s, seed %d",
		o.Splits, 100*o.TestFraction, o.Inducing, kern, approx, o.Seed))
	var results []analysis.GPResult
	for _, s := range sets {
		start := time.Now()
		o.Progress = func(split int, ll, rmse float64) {
			fmt.Fprintf(os.Stderr, "%s: split %d/%d loglik %.4f rmse %.4g (%.0f s)\n", s.name, split, o.Splits, ll, rmse, time.Since(start).Seconds())
		}
		r, err := analysis.GPLogLik(s.z, s.y, o)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Printf("%s: loglik %.4f ± %.4f over %d splits (%d train / %d test points)\n", s.name, r.Mean, r.Std, len(r.LogLik), r.Train, r.Test)
		results = append(results, r)
	}
	files, err := analysis.WriteGPLogLik(c.String("out"), analysis.Report{Names: names(sets), Notes: notes}, results)
	return printFiles(files, err)
}

func distancesAction(c *cli.Context) error {
	if c.Int("max-pairs") < 1 || c.Int("bins") < 1 {
		return fmt.Errorf("--max-pairs %d and --bins %d: want >= 1", c.Int("max-pairs"), c.Int("bins"))
	}
	sets, notes, err := analyzeInputs(c)
	if err != nil {
		return err
	}
	o := analysis.DistanceOptions{MaxPairs: c.Int("max-pairs"), Bins: c.Int("bins"), Seed: c.Uint64("seed")}
	notes = append(notes, fmt.Sprintf("split at the median score; Euclidean distances of encoder means; at most %d pairs per group (sampled beyond); %d bins",
		o.MaxPairs, o.Bins))
	var results []analysis.DistanceResult
	for _, s := range sets {
		r, err := analysis.LatentDistances(s.z, s.y, o)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Printf("%s: mean distance high-high %.3f, low-low %.3f, high-low %.3f\n", s.name, r.Mean[analysis.HighHigh], r.Mean[analysis.LowLow], r.Mean[analysis.HighLow])
		results = append(results, r)
	}
	files, err := analysis.WriteDistances(c.String("out"), analysis.Report{Names: names(sets), Notes: notes}, results)
	return printFiles(files, err)
}

func names(sets []latentSet) []string {
	out := make([]string, len(sets))
	for i, s := range sets {
		out[i] = s.name
	}
	return out
}

func printFiles(files []string, err error) error {
	if err != nil {
		return err
	}
	fmt.Println(strings.Join(files, "\n"))
	return nil
}

// analyzeInputs reads the latent sets of --vae (encoding the task's
// labelled data) or of --latents/--scores, subsampled to --max-points,
// with notes describing them; it creates --out.
func analyzeInputs(c *cli.Context) ([]latentSet, []string, error) {
	vaes, lats, scores := c.StringSlice("vae"), c.StringSlice("latents"), c.StringSlice("scores")
	switch {
	case len(vaes) == 0 && len(lats) == 0:
		return nil, nil, fmt.Errorf("no input: give --vae (with --task) or --latents with --scores")
	case len(vaes) > 0 && len(lats) > 0:
		return nil, nil, fmt.Errorf("give either --vae or --latents, not both")
	case len(lats) != len(scores):
		return nil, nil, fmt.Errorf("%d --latents but %d --scores, want one --scores per --latents", len(lats), len(scores))
	case c.Int("max-points") < 0:
		return nil, nil, fmt.Errorf("--max-points %d: want >= 0", c.Int("max-points"))
	}
	if err := os.MkdirAll(c.String("out"), 0o755); err != nil {
		return nil, nil, fmt.Errorf("--out: %w", err)
	}
	var sets []latentSet
	var notes []string
	var err error
	if len(vaes) > 0 {
		sets, notes, err = encodeSets(c, vaes)
	} else {
		sets, notes, err = readSets(lats, scores)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := labelSets(c, sets); err != nil {
		return nil, nil, err
	}
	if m := c.Int("max-points"); m > 0 {
		for i := range sets {
			if n := len(sets[i].y); n > m {
				sets[i].z, sets[i].y = subsample(sets[i].z, sets[i].y, m, c.Uint64("seed"))
				notes = append(notes, fmt.Sprintf("%s: a random subset of %d of the %d points", sets[i].name, m, n))
			}
		}
	}
	return sets, notes, nil
}

// labelSets names the sets by --name, else by their files' names.
func labelSets(c *cli.Context, sets []latentSet) error {
	given := c.StringSlice("name")
	if len(given) > 0 && len(given) != len(sets) {
		return fmt.Errorf("%d --name for %d inputs, want one per input", len(given), len(sets))
	}
	for i := range sets {
		if len(given) > 0 {
			sets[i].name = given[i]
		}
	}
	return nil
}

// encodeSets encodes the task's labelled data with each VAE.
func encodeSets(c *cli.Context, vaes []string) ([]latentSet, []string, error) {
	t, err := lookupTask(c)
	if err != nil {
		return nil, nil, err
	}
	dev, err := setupTorch(c)
	if err != nil {
		return nil, nil, err
	}
	env, err := taskEnv(c, t)
	if err != nil {
		return nil, nil, err
	}
	env.Device = dev
	ds, err := t.Dataset(env)
	if err != nil {
		return nil, nil, err
	}
	td := t.Defaults()
	elbo, err := models.ParseELBO("lbo") // encoding only: the objective is not used
	if err != nil {
		return nil, nil, err
	}
	notes := []string{fmt.Sprintf("task %s: %d labelled points from %s, encoder means", t.Name(), len(ds.Objects), ds.Source)}
	var sets []latentSet
	for _, path := range vaes {
		m, err := t.OpenModel(env, task.ModelRequest{Path: path, ELBO: elbo, LR: td.LR, BatchSize: max(1, td.RetrainBatchSize)})
		if err != nil {
			return nil, nil, fmt.Errorf("--vae %s: %w", path, err)
		}
		mu, err := m.Encode(ds.Objects)
		d := m.LatentDim()
		m.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("--vae %s: encode: %w", path, err)
		}
		sets = append(sets, latentSet{name: stem(path), z: mat.NewDense(len(ds.Objects), d, mu), y: ds.Scores})
	}
	return sets, notes, nil
}

// readSets reads --latents and --scores pairs.
func readSets(lats, scores []string) ([]latentSet, []string, error) {
	var sets []latentSet
	for i := range lats {
		z, err := readMatrix(lats[i])
		if err != nil {
			return nil, nil, fmt.Errorf("--latents: %w", err)
		}
		y, err := readVector(scores[i])
		if err != nil {
			return nil, nil, fmt.Errorf("--scores: %w", err)
		}
		if n, _ := z.Dims(); n != len(y) {
			return nil, nil, fmt.Errorf("%s has %d points but %s has %d scores", lats[i], n, scores[i], len(y))
		}
		sets = append(sets, latentSet{name: stem(lats[i]), z: z, y: y})
	}
	return sets, []string{"latent points and scores read from .npy files"}, nil
}

// subsample returns m random rows of z and their scores.
func subsample(z *mat.Dense, y []float64, m int, seed uint64) (*mat.Dense, []float64) {
	_, d := z.Dims()
	idx := rand.New(rand.NewPCG(seed, 0x5ab)).Perm(len(y))[:m]
	zs, ys := mat.NewDense(m, d, nil), make([]float64, m)
	for i, j := range idx {
		zs.SetRow(i, z.RawRowView(j))
		ys[i] = y[j]
	}
	return zs, ys
}

// stem is a file's name without directory and extension.
func stem(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}
