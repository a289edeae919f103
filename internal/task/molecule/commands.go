package molecule

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/bench"
	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/cliutil"
	"github.com/tlbo-native/tlbo-native/internal/rusage"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
	"github.com/tlbo-native/tlbo-native/torch"
)

// The molecule task's own commands: molecule tree, and the benchmarks
// bench jtvae-step, bench vocab-coverage and bench cache-measure.

// moleculeCommand groups the molecule tools.
func moleculeCommand() *cli.Command {
	return &cli.Command{
		Name:  "molecule",
		Usage: "molecule tools (the molecule task's)",
		Subcommands: []*cli.Command{{
			Name:      "tree",
			Usage:     "print the JT-VAE junction tree of each SMILES as one JSON object per line",
			ArgsUsage: "SMILES... (none: one per line on stdin)",
			Description: "One output line per input, in input order (on stdin every line is an input, a blank one\n" +
				"included). A molecule that cannot be decomposed is printed as {\"smiles\": ..., \"error\": ...};\n" +
				"the exit status is then 1, after every line has been printed.",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "candidates", Usage: "add each cluster's attachment candidates"},
				&cli.IntFlag{Name: "workers", Usage: "goroutines, one molecule each (0: all CPUs)"},
				&cli.BoolFlag{Name: "rdkit-log", Usage: "let RDKit print its own log lines on stderr"},
			},
			Action: func(c *cli.Context) error {
				if c.Int("workers") < 0 {
					return fmt.Errorf("--workers %d: want at least 0", c.Int("workers"))
				}
				chem.SetLogging(c.Bool("rdkit-log"))
				in := c.Args().Slice()
				if len(in) == 0 {
					var err error
					if in, err = cliutil.InputLines(os.Stdin, "stdin"); err != nil {
						return err
					}
				}
				// SIGTERM and SIGINT stop it between molecules, with the lines done.
				ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
				defer stop()
				return writeTrees(ctx, os.Stdout, in, c.Bool("candidates"), c.Int("workers"))
			},
		}},
	}
}

// treeError is the line of a molecule that could not be decomposed.
type treeError struct {
	Smiles string `json:"smiles"`
	Error  string `json:"error"`
}

// writeTrees writes the junction tree of each SMILES of in as one JSON
// object per line, in order; a failure as a treeError. Each line is
// written as soon as it and those before it are done. It returns an error
// after writing every line when any failed; when ctx is done (SIGTERM, say)
// it stops starting molecules, writes the lines done in order so far and
// returns an error that says how many.
func writeTrees(ctx context.Context, out io.Writer, in []string, candidates bool, workers int) error {
	lines := make([]any, len(in))
	ready := make([]bool, len(in))
	var todo []int // indices of in with a SMILES
	for i, s := range in {
		if s == "" {
			lines[i], ready[i] = treeError{Smiles: s, Error: "empty line"}, true
		} else {
			todo = append(todo, i)
		}
	}
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	next, failed := 0, 0
	var writeErr error
	flush := func() { // writes the finished lines at the front, in order
		for ; next < len(in) && ready[next] && writeErr == nil; next++ {
			if _, bad := lines[next].(treeError); bad {
				failed++
			}
			writeErr = enc.Encode(lines[next])
		}
		if writeErr == nil {
			writeErr = w.Flush()
		}
	}
	flush()
	err := parallel(ctx, len(todo), workers, func(k int) {
		ready[todo[k]] = true
		flush()
	}, func(k int) {
		i := todo[k]
		t, err := Tree(in[i], candidates)
		if lines[i] = t; err != nil {
			lines[i] = treeError{Smiles: in[i], Error: err.Error()}
		}
	})
	switch {
	case writeErr != nil:
		return writeErr
	case err != nil:
		return fmt.Errorf("molecule tree: interrupted: %d of %d lines written, in order (%d of them failed): %w", next, len(in), failed, err)
	case failed > 0:
		return fmt.Errorf("molecule tree: %d of %d molecules failed (their lines: {\"smiles\": ..., \"error\": ...})", failed, len(in))
	}
	return nil
}

// vocabFlags locate the vocabulary and the data directory of a benchmark.
func vocabFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "vocab", TakesFile: true, Usage: "cluster vocabulary (default: " + ShippedVocab + " in the data directory)"},
		cliutil.DataDirFlag(),
	}
}

// benchVocab reads --vocab, else the data directory's shipped vocabulary.
func benchVocab(c *cli.Context) (Vocab, error) {
	path := c.String("vocab")
	if path == "" {
		var err error
		if path, err = ShippedVocabPath(c.String("data-dir")); err != nil {
			return nil, fmt.Errorf("%w (or give --vocab)", err)
		}
	}
	v, err := ReadVocab(path)
	if err != nil {
		return nil, fmt.Errorf("--vocab: %w", err)
	}
	return v, nil
}

// zincMolecules returns the first n molecules of ZINC250K's training split
// order in the data directory of --data-dir.
func zincMolecules(c *cli.Context, n int) ([]string, error) {
	if n < 1 {
		return nil, fmt.Errorf("-n %d: want at least 1", n)
	}
	dir, err := FindDataDir(c.String("data-dir"))
	if err != nil {
		return nil, err
	}
	smiles, _, err := readSplits(dir)
	if err != nil {
		return nil, err
	}
	return smiles[:min(n, len(smiles))], nil
}

func benchJTVAEStepCommand() *cli.Command {
	return &cli.Command{
		Name: "jtvae-step",
		Usage: "time training steps of the JT-VAE on --batch distinct ZINC molecules (up to 128), split into its parts " +
			"(the authors' step on the same molecules: testdata/jtvae/compare.sh)",
		Description: "A new JT-VAE over the vocabulary (the shipped one: the authors' full-size network) trained on the\n" +
			"first --batch of 128 built-in ZINC molecules (distinct up to 128) with the authors' loop (word + topology + assembly + 1e-3 KL, clipping,\n" +
			"Adam). Prints the median split and jtvae_step_ms <median> last.",
		Flags: append([]cli.Flag{
			cliutil.DeviceFlag(), cliutil.ThreadsFlag(),
			&cli.IntFlag{Name: "steps", Value: 5, Usage: "timed steps (after 2 warm-up steps)"},
			&cli.IntFlag{Name: "batch", Value: 32, Usage: "mini-batch size: the first of 128 distinct built-in ZINC molecules (testdata/jtvae/bench128.npz), repeated beyond 128"},
			&cli.IntFlag{Name: "hidden", Value: 450, Usage: "hidden size"},
			&cli.Uint64Flag{Name: "seed", Value: 0},
			&cli.StringFlag{Name: "profile", Usage: "write the timed steps' operators to `FILE` (Chrome trace) and print the costliest (slows the steps)"},
			&cli.StringFlag{Name: "smiles", Usage: "train on the molecules of `FILE` (one SMILES a line; the first --batch, repeated beyond their count) " +
				"instead of the built-in ZINC ones, e.g. those a BO run found", TakesFile: true},
		}, vocabFlags()...),
		Action: func(c *cli.Context) error {
			if err := cliutil.NoArgs(c); err != nil {
				return err
			}
			if c.Int("hidden") < 1 || c.Int("batch") < 1 {
				return fmt.Errorf("--hidden %d and --batch %d: want at least 1", c.Int("hidden"), c.Int("batch"))
			}
			dev, err := cliutil.SetupTorch(c)
			if err != nil {
				return err
			}
			vocab, err := benchVocab(c)
			if err != nil {
				return fmt.Errorf("bench jtvae-step: %w", err)
			}
			var smiles []string
			if path := c.String("smiles"); path != "" {
				if smiles, err = readSmilesFile(path); err != nil {
					return fmt.Errorf("bench jtvae-step: --smiles: %w", err)
				}
			}
			steps, err := JTVAEStep(JTVAEStepOptions{Device: dev, Vocab: vocab, Hidden: c.Int("hidden"), Batch: c.Int("batch"),
				Smiles: smiles, Steps: c.Int("steps"), Seed: c.Uint64("seed"), Profile: c.String("profile")})
			if err != nil {
				return err
			}
			if path := c.String("profile"); path != "" {
				if err := cliutil.PrintProfile(os.Stdout, path, len(steps), 25); err != nil {
					return err
				}
			}
			p, total := MedianSplit(steps)
			fmt.Printf("device %s threads %d hidden %d vocabulary %d batch %d steps %d\n",
				dev, torch.NumThreads(), c.Int("hidden"), len(vocab), c.Int("batch"), len(steps))
			fmt.Printf("median ms: collate %.1f tree_encoder %.1f graph_encoder %.1f decoder %.1f assembly %.1f backward_adam %.1f\n",
				p.Collate, p.Tree, p.Graph, p.Decoder, p.Assembly, p.Backward)
			fmt.Printf("jtvae_step_ms %.1f\n", total)
			return nil
		},
	}
}

// Coverage is how much of a molecule set a vocabulary covers.
type Coverage struct {
	// Molecules is the number measured; Undecomposable the junction trees
	// that could not be built (RDKit's kekulization, mostly).
	Molecules, Undecomposable int
	// Exact counts the molecules whose clusters are all in the vocabulary
	// by kekulé SMILES; Labelled those NewFeaturiser labels (kekulé, else
	// canonical SMILES).
	Exact, Labelled int
	// Missing counts, per cluster outside the vocabulary, its molecules.
	Missing map[string]int
}

// VocabCoverage measures how many of smiles have every junction-tree
// cluster in v, by kekulé SMILES alone and as NewFeaturiser labels them.
func VocabCoverage(v Vocab, smiles []string) Coverage {
	exact := map[string]bool{}
	for _, s := range v {
		exact[s] = true
	}
	f := NewFeaturiser(v)
	c := Coverage{Molecules: len(smiles), Missing: map[string]int{}}
	for _, s := range smiles {
		tr, err := chem.Decompose(s)
		if err != nil {
			c.Undecomposable++
			continue
		}
		inExact, inLabelled := true, true
		for _, nd := range tr.Nodes {
			inExact = inExact && exact[nd.Smiles]
			if _, err := f.label(nd.Smiles); err != nil {
				inLabelled = false
				c.Missing[nd.Smiles]++
			}
		}
		tr.Close()
		if inExact {
			c.Exact++
		}
		if inLabelled {
			c.Labelled++
		}
	}
	return c
}

func benchVocabCoverageCommand() *cli.Command {
	return &cli.Command{
		Name:  "vocab-coverage",
		Usage: "count the first N ZINC molecules whose junction-tree clusters are all in the vocabulary",
		Description: "By kekulé SMILES alone (an exact lookup) and as featurisation labels clusters (kekulé, else\n" +
			"canonical SMILES), with the clusters still missing and how many molecules each costs. The shipped\n" +
			"vocabulary was written by an older RDKit; docs/performance.md quotes this count for the first 10,000.",
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "n", Value: 10000, Usage: "molecules of ZINC250K measured, in file order"},
			&cli.BoolFlag{Name: "rdkit-log", Usage: "let RDKit print its own log lines on stderr"},
		}, vocabFlags()...),
		Action: func(c *cli.Context) error {
			if err := cliutil.NoArgs(c); err != nil {
				return err
			}
			chem.SetLogging(c.Bool("rdkit-log"))
			v, err := benchVocab(c)
			if err != nil {
				return err
			}
			smiles, err := zincMolecules(c, c.Int("n"))
			if err != nil {
				return err
			}
			cv := VocabCoverage(v, smiles)
			fmt.Printf("molecules %d vocabulary %d undecomposable %d\n", cv.Molecules, len(v), cv.Undecomposable)
			fmt.Printf("covered_exact %d (all clusters by kekulé SMILES)\n", cv.Exact)
			fmt.Printf("covered %d (as featurisation labels them: kekulé, else canonical SMILES)\n", cv.Labelled)
			missing := slices.Collect(maps.Keys(cv.Missing))
			slices.SortFunc(missing, func(a, b string) int {
				if d := cv.Missing[b] - cv.Missing[a]; d != 0 {
					return d
				}
				return strings.Compare(a, b)
			})
			fmt.Printf("missing clusters %d\n", len(missing))
			for _, s := range missing {
				fmt.Printf("missing\t%s\t%d\n", s, cv.Missing[s])
			}
			return nil
		},
	}
}

// CacheMeasurement compares featurising molecules with reading them back
// from the featurisation cache.
type CacheMeasurement struct {
	Molecules, Unfeaturisable, Shards int
	// Build is the CPU time of featurising and writing; Read of reading
	// back; Unpack of unpacking every example once.
	Build, Read, Unpack time.Duration
	// Disk is the cache's size in bytes; Packed the packed examples'.
	Disk, Packed int64
	// Heap and HeapUnpacked are the bytes of Go heap the read examples
	// hold, packed and unpacked.
	Heap, HeapUnpacked float64
}

// MeasureCache featurises smiles over f into the cache at o.Dir (which
// should be new), reads them back, and measures both (CPU time, the same on
// any number of workers), the cache on disk and the heap the examples hold.
func MeasureCache(o CacheOptions, f *Featuriser, smiles []string) (CacheMeasurement, error) {
	m := CacheMeasurement{Molecules: len(smiles)}
	cpu := func(fn func()) time.Duration {
		start := rusage.CPUSeconds()
		fn()
		return time.Duration((rusage.CPUSeconds() - start) * float64(time.Second))
	}
	var err error
	if m.Build = cpu(func() { _, err = CachedExamples(o, f, smiles) }); err != nil {
		return m, err
	}
	var got []Cached
	if m.Read = cpu(func() { got, err = CachedExamples(o, f, smiles) }); err != nil {
		return m, err
	}
	for _, c := range got {
		if c.Err != nil {
			m.Unfeaturisable++
		}
		m.Packed += int64(len(c.Example.Packed))
	}
	m.Unpack = cpu(func() {
		for _, c := range got {
			_, _ = c.Example.Unpack()
		}
	})
	got = nil
	m.Heap = heldHeap(func() any { g, _ := CachedExamples(o, f, smiles); return g })
	m.HeapUnpacked = heldHeap(func() any {
		g, _ := CachedExamples(o, f, smiles)
		ex := make([]jtvae.Example, len(g))
		for i, c := range g {
			ex[i], _ = c.Example.Unpack()
		}
		return ex
	})
	shards, _ := filepath.Glob(filepath.Join(o.Dir, "*", "shard-*.gob"))
	m.Shards = len(shards)
	for _, p := range shards {
		if st, err := os.Stat(p); err == nil {
			m.Disk += st.Size()
		}
	}
	return m, nil
}

// heldHeap returns the heap bytes that build's result holds: the live heap
// with it, less the live heap once it is dropped.
func heldHeap(build func() any) float64 {
	var with, without runtime.MemStats
	v := build()
	runtime.GC()
	runtime.ReadMemStats(&with)
	runtime.KeepAlive(v)
	v = nil
	runtime.GC()
	runtime.ReadMemStats(&without)
	return float64(with.HeapAlloc) - float64(without.HeapAlloc)
}

func benchCacheMeasureCommand() *cli.Command {
	return &cli.Command{
		Name:  "cache-measure",
		Usage: "compare featurising the first N ZINC molecules with reading them back from the featurisation cache",
		Description: "Featurises the molecules into a new cache (--dir, else a temporary directory removed after), reads\n" +
			"them back, and reports the CPU time of both (the same on any number of workers), the cache's size on\n" +
			"disk, and the Go heap the read examples hold packed and unpacked (docs/performance.md quotes these for 1,000).",
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "n", Value: 1000, Usage: "molecules of ZINC250K measured, in file order"},
			&cli.IntFlag{Name: "workers", Usage: "goroutines featurising (0: all CPUs)"},
			&cli.StringFlag{Name: "dir", Usage: "cache directory, which must not exist yet (default: a temporary one, removed after)"},
			&cli.BoolFlag{Name: "rdkit-log", Usage: "let RDKit print its own log lines on stderr"},
		}, vocabFlags()...),
		Action: func(c *cli.Context) error {
			if err := cliutil.NoArgs(c); err != nil {
				return err
			}
			if c.Int("workers") < 0 {
				return fmt.Errorf("--workers %d: want at least 0", c.Int("workers"))
			}
			chem.SetLogging(c.Bool("rdkit-log"))
			v, err := benchVocab(c)
			if err != nil {
				return err
			}
			smiles, err := zincMolecules(c, c.Int("n"))
			if err != nil {
				return err
			}
			dir := c.String("dir")
			if dir == "" {
				if dir, err = os.MkdirTemp("", "tlbo-cache-measure-*"); err != nil {
					return err
				}
				defer os.RemoveAll(dir)
			} else if _, err := os.Stat(dir); err == nil {
				return fmt.Errorf("--dir %s exists: give a new directory (a filled cache would measure reading twice)", dir)
			}
			m, err := MeasureCache(CacheOptions{Dir: dir, DataDigest: "measure", Workers: c.Int("workers")}, NewFeaturiser(v), smiles)
			if err != nil {
				return err
			}
			n := float64(m.Molecules)
			mib := func(b float64) string { return strconv.FormatFloat(b/(1<<20), 'f', 1, 64) + " MiB" }
			per := func(b float64) string {
				return fmt.Sprintf("%s (%.1f KiB per molecule, %s for 10,000)", mib(b), b/1024/n, mib(b*10000/n))
			}
			fmt.Printf("molecules %d (%d not featurisable), %d shards\n", m.Molecules, m.Unfeaturisable, m.Shards)
			fmt.Printf("featurise and write %.2f CPU s (%.2f ms per molecule); read %.3f CPU s (%.3f ms per molecule); ratio %.0fx\n",
				m.Build.Seconds(), 1000*m.Build.Seconds()/n, m.Read.Seconds(), 1000*m.Read.Seconds()/n, m.Build.Seconds()/m.Read.Seconds())
			fmt.Printf("on disk %s (%.1f KiB per molecule); packed examples %s; unpacking each once %.3f CPU s (%.3f ms per molecule)\n",
				mib(float64(m.Disk)), float64(m.Disk)/1024/n, mib(float64(m.Packed)), m.Unpack.Seconds(), 1000*m.Unpack.Seconds()/n)
			fmt.Printf("heap held by the read cache %s; by the same examples unpacked %s\n", per(m.Heap), per(m.HeapUnpacked))
			return nil
		},
	}
}

// MedianSplit is the median of each part of steps, in milliseconds, with the
// median whole step.
func MedianSplit(steps []jtvae.StepTimes) (parts jtvae.StepTimes, total float64) {
	col := func(f func(jtvae.StepTimes) float64) float64 {
		ms := make([]float64, len(steps))
		for i, s := range steps {
			ms[i] = f(s)
		}
		return bench.MedianFloat(ms)
	}
	parts = jtvae.StepTimes{
		Collate:  col(func(s jtvae.StepTimes) float64 { return s.Collate }),
		Tree:     col(func(s jtvae.StepTimes) float64 { return s.Tree }),
		Graph:    col(func(s jtvae.StepTimes) float64 { return s.Graph }),
		Decoder:  col(func(s jtvae.StepTimes) float64 { return s.Decoder }),
		Assembly: col(func(s jtvae.StepTimes) float64 { return s.Assembly }),
		Backward: col(func(s jtvae.StepTimes) float64 { return s.Backward }),
	}
	return parts, col(jtvae.StepTimes.Total)
}
