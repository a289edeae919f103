package main

import (
	"bufio"
	"encoding/json"
	"fmt"
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
