package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/task/molecule"
)

// The molecule verbs: score molecule, data molecule and molecule tree. They
// only wire flags to internal/task/molecule.

func scoreMoleculeCommand() *cli.Command {
	return &cli.Command{
		Name:      "molecule",
		Usage:     "print penalised logP of each SMILES (the failure score, with the reason on stderr, when it cannot be scored)",
		ArgsUsage: "SMILES... (none: one per line on stdin)",
		Flags:     []cli.Flag{rdkitLogFlag},
		Action: func(c *cli.Context) error {
			chem.SetLogging(c.Bool("rdkit-log"))
			in, err := argsOrStdin(c)
			if err != nil {
				return err
			}
			w := bufio.NewWriter(os.Stdout)
			defer w.Flush()
			for _, s := range in {
				v, err := molecule.Score(s)
				if err != nil {
					fmt.Fprintf(os.Stderr, "%s: %v\n", s, err)
				}
				fmt.Fprintf(w, "%s %s\n", s, strconv.FormatFloat(v, 'g', -1, 64))
			}
			return nil
		},
	}
}

func dataMoleculeCommand() *cli.Command {
	return &cli.Command{
		Name:  "molecule",
		Usage: "ZINC250K: canonical SMILES, penalised logP, splits and junction trees into --out (molecules.npz, vocab.txt, report.txt)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "output directory", Required: true},
			&cli.StringFlag{Name: "data-dir", Usage: "data directory holding " + molecule.ZincFile + " (default: $TLBO_DATA, then shared/data above the working directory)"},
			&cli.StringFlag{Name: "vocab", Usage: "use this vocabulary file instead of the one built from the training split"},
			&cli.BoolFlag{Name: "candidates", Usage: "also enumerate the attachment candidates of every node (slow)"},
			&cli.IntFlag{Name: "workers", Usage: "goroutines (0: all CPUs)"},
			rdkitLogFlag,
		},
		Action: func(c *cli.Context) error {
			chem.SetLogging(c.Bool("rdkit-log"))
			dir, err := molecule.FindDataDir(c.String("data-dir"))
			if err != nil {
				return err
			}
			var bar *progressbar.ProgressBar
			rep, err := molecule.Build(molecule.BuildOptions{
				DataDir: dir, OutDir: c.String("out"), Vocab: c.String("vocab"),
				Candidates: c.Bool("candidates"), Workers: c.Int("workers"),
				Progress: func(done, total int) {
					if bar == nil {
						bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(os.Stderr), progressbar.OptionShowCount(),
							progressbar.OptionSetWidth(20), progressbar.OptionSetPredictTime(true), progressbar.OptionShowIts())
					}
					_ = bar.Set(done)
				},
			})
			if bar != nil {
				fmt.Fprintln(os.Stderr)
			}
			if err != nil {
				return err
			}
			fmt.Printf("molecules %d, failed %d, vocabulary %d (not in the shipped one %d, shipped but not made %d); see %s\n",
				rep.Total, len(rep.Failures), len(rep.Vocab), len(rep.OnlyOurs), len(rep.OnlyShipped), molecule.ReportFileName)
			return nil
		},
	}
}

func moleculeCommand() *cli.Command {
	return &cli.Command{
		Name:  "molecule",
		Usage: "molecule tools",
		Subcommands: []*cli.Command{{
			Name:      "tree",
			Usage:     "print the JT-VAE junction tree of each SMILES as one JSON object per line",
			ArgsUsage: "SMILES... (none: one per line on stdin)",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "candidates", Usage: "add each cluster's attachment candidates"},
				&cli.IntFlag{Name: "workers", Usage: "goroutines, one molecule each (0: all CPUs)"},
				rdkitLogFlag,
			},
			Action: func(c *cli.Context) error {
				chem.SetLogging(c.Bool("rdkit-log"))
				in, err := argsOrStdin(c)
				if err != nil {
					return err
				}
				enc := json.NewEncoder(os.Stdout)
				failed := 0
				trees, errs := molecule.Trees(in, c.Bool("candidates"), c.Int("workers"), nil)
				for i, t := range trees {
					if errs[i] != nil {
						fmt.Fprintf(os.Stderr, "%s: %v\n", in[i], errs[i])
						failed++
						continue
					}
					if err := enc.Encode(t); err != nil {
						return err
					}
				}
				if failed > 0 {
					return fmt.Errorf("%d of %d molecules failed", failed, len(in))
				}
				return nil
			},
		}},
	}
}

var rdkitLogFlag = &cli.BoolFlag{Name: "rdkit-log", Usage: "let RDKit print its own log lines on stderr"}

// argsOrStdin returns the arguments, or the non-empty lines of stdin when there are none.
func argsOrStdin(c *cli.Context) ([]string, error) {
	if c.NArg() > 0 {
		return c.Args().Slice(), nil
	}
	var out []string
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read stdin: %w", err)
	}
	return out, nil
}
