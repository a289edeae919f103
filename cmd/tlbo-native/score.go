package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/task/expression"
)

// scoreCommand groups the black-box objectives, one subcommand per task.
func scoreCommand() *cli.Command {
	return &cli.Command{
		Name:  "score",
		Usage: "evaluate a task's black-box objective",
		Subcommands: []*cli.Command{
			scoreExpressionCommand(),
		},
	}
}

func scoreExpressionCommand() *cli.Command {
	return &cli.Command{
		Name:      "expression",
		Usage:     "print min(7, log(1 + MSE)) against the target for each expression (lower is better)",
		ArgsUsage: "EXPR... (none: one expression per line on stdin)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "target", Value: expression.DefaultTarget, Usage: "target expression of x ('-', decimals allowed)"},
			&cli.BoolFlag{Name: "why", Usage: "print the reason of each failure (score 7) on stderr"},
		},
		Action: func(c *cli.Context) error {
			obj, err := expression.NewObjective(c.String("target"))
			if err != nil {
				return err
			}
			exprs := c.Args().Slice()
			if len(exprs) == 0 {
				if exprs, err = readExpressionLines(os.Stdin); err != nil {
					return err
				}
			}
			w := bufio.NewWriter(os.Stdout)
			defer w.Flush()
			for _, e := range exprs {
				s, err := obj.TryScore(e)
				if err != nil && c.Bool("why") {
					fmt.Fprintln(os.Stderr, err)
				}
				fmt.Fprintln(w, strconv.FormatFloat(s, 'g', -1, 64))
			}
			return nil
		},
	}
}

// readExpressionLines reads the non-empty lines of f.
func readExpressionLines(f *os.File) ([]string, error) {
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			lines = append(lines, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	return lines, nil
}
