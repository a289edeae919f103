package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/torch"
)

func checkpointCommand() *cli.Command {
	return &cli.Command{
		Name:  "checkpoint",
		Usage: "work with state-dict checkpoints (.pt from PyTorch or tlbo-native, .npz)",
		Subcommands: []*cli.Command{{
			Name:      "inspect",
			Usage:     "print one line per tensor: name dtype shape, in file order",
			ArgsUsage: "FILE",
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return fmt.Errorf("checkpoint inspect: want one FILE, got %d arguments", c.NArg())
				}
				sd, err := torch.Load(c.Args().First())
				if err != nil {
					return fmt.Errorf("checkpoint inspect: %w", err)
				}
				defer torch.CloseNamed(sd)
				for _, n := range sd {
					fmt.Printf("%s %s %s\n", n.Name, n.Tensor.DType(), shapeString(n.Tensor.Shape()))
				}
				return nil
			},
		}},
	}
}

// shapeString formats a shape as PyTorch prints it: [2, 3] (scalars: []).
func shapeString(shape []int64) string {
	parts := make([]string, len(shape))
	for i, s := range shape {
		parts[i] = fmt.Sprint(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
