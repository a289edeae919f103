package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/cliutil"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

func checkpointCommand() *cli.Command {
	return &cli.Command{
		Name:  "checkpoint",
		Usage: "work with state-dict checkpoints (.pt from PyTorch or tlbo-native, .npz)",
		Subcommands: []*cli.Command{{
			Name: "inspect",
			Usage: "print the header beside FILE (network kind, configuration, training state) when there is one, " +
				"then one line per tensor: name dtype shape, in file order",
			ArgsUsage: "FILE",
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return fmt.Errorf("checkpoint inspect: want one FILE, got %d arguments", c.NArg())
				}
				path := c.Args().First()
				if _, err := os.Stat(models.HeaderPath(path)); err == nil {
					h, err := models.ReadHeader(path, "")
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "network %s\nmodel %s\n", h.Network, h.Model)
					if st := h.Training; st != nil {
						fmt.Fprintf(c.App.Writer, "training elbo=%s step=%d epoch=%d lr=%g batch=%d\n", st.ELBO.Name, st.Step, st.Epoch, st.LR, st.BatchSize)
					}
				}
				sd, err := torch.Load(path)
				if err != nil {
					return fmt.Errorf("checkpoint inspect: %w", err)
				}
				defer torch.CloseNamed(sd)
				for _, n := range sd {
					fmt.Fprintf(c.App.Writer, "%s %s %s\n", n.Name, n.Tensor.DType(), shapeString(n.Tensor.Shape()))
				}
				return nil
			},
		}, checkpointImportCommand()},
	}
}

// checkpointImportCommand converts a checkpoint of the authors' code.
func checkpointImportCommand() *cli.Command {
	return taskVerb{
		name: "import",
		usage: "convert a checkpoint written by the authors' code (a Lightning .ckpt or a bare state dict) " +
			"into ours: FILE.pt and its header FILE.json",
		description: "Tensor names are mapped onto ours, unused tensors dropped with a note; a missing or mis-shaped\n" +
			"tensor is refused, and nothing is written.",
		verb: task.VerbImport,
		flags: func(t task.Task) []cli.Flag {
			return []cli.Flag{taskFlag(t, false),
				&cli.StringFlag{Name: "from", Usage: "the authors' checkpoint", Required: true, TakesFile: true},
				&cli.StringFlag{Name: "out", Usage: "our checkpoint FILE.pt", Required: true},
			}
		},
		action: func(c *cli.Context, t task.Task) error {
			if err := cliutil.NoArgs(c); err != nil {
				return err
			}
			if err := cliutil.CheckOutFile("out", c.String("out")); err != nil {
				return err
			}
			env, err := taskEnv(c, t, task.VerbImport)
			if err != nil {
				return err
			}
			return t.Import(env, task.ImportRequest{From: c.String("from"), Out: c.String("out")})
		},
	}.command()
}

// shapeString formats a shape as PyTorch prints it: [2, 3] (scalars: []).
func shapeString(shape []int64) string {
	parts := make([]string, len(shape))
	for i, s := range shape {
		parts[i] = fmt.Sprint(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
