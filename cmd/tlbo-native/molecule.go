package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/task/molecule"
)

// The molecule tools (molecule tree); score and data molecule come from the
// task registry. They only wire flags to internal/task/molecule.

func moleculeCommand() *cli.Command {
	return &cli.Command{
		Name:  "molecule",
		Usage: "molecule tools",
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
				rdkitLogFlag,
			},
			Action: func(c *cli.Context) error {
				chem.SetLogging(c.Bool("rdkit-log"))
				in := c.Args().Slice()
				if len(in) == 0 {
					var err error
					if in, err = inputLines(os.Stdin, "stdin"); err != nil {
						return err
					}
				}
				return writeTrees(os.Stdout, in, c.Bool("candidates"), c.Int("workers"))
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
// object per line, in order; a failure as a treeError. It returns an error
// after writing every line when any failed.
func writeTrees(out io.Writer, in []string, candidates bool, workers int) error {
	var todo []string
	for _, s := range in {
		if s != "" {
			todo = append(todo, s)
		}
	}
	trees, errs := molecule.Trees(todo, candidates, workers, nil)
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	failed, k := 0, 0
	for _, s := range in {
		var v any = treeError{Smiles: s, Error: "empty line"}
		if s != "" {
			if v = trees[k]; errs[k] != nil {
				v = treeError{Smiles: s, Error: errs[k].Error()}
			}
			k++
		}
		if _, bad := v.(treeError); bad {
			failed++
		}
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("molecule tree: %d of %d molecules failed (their lines: {\"smiles\": ..., \"error\": ...})", failed, len(in))
	}
	return nil
}

var rdkitLogFlag = &cli.BoolFlag{Name: "rdkit-log", Usage: "let RDKit print its own log lines on stderr"}

// inputLines reads every line of r, spaces trimmed, blank ones kept ("").
func inputLines(r io.Reader, name string) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		out = append(out, strings.TrimSpace(sc.Text()))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return out, nil
}
