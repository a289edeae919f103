package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/task/topology"
	conv "github.com/tlbo-native/tlbo-native/models/topology"
)

// latentMapCommand draws the designs decoded over the latent box of a 2-d
// topology VAE. Only the topology task has pictures as objects, so the
// verb serves that task alone.
func latentMapCommand() *cli.Command {
	return &cli.Command{
		Name:  "latent-map",
		Usage: "draw the designs decoded from a grid over the latent box of a 2-d VAE (topology task)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Value: topology.TaskName, Usage: "task (only topology draws latent maps)"},
			&cli.StringFlag{Name: "vae", Usage: "checkpoint FILE.pt (with FILE.json) of a VAE with latent 2", Required: true},
			&cli.StringFlag{Name: "out", Usage: "output PNG file", Required: true},
			&cli.IntFlag{Name: "n", Value: 15, Usage: "grid points per axis"},
			&cli.Float64Flag{Name: "box", Value: 4, Usage: "half-width of the latent box [-box, box]^2 (the authors' maps: 4)"},
			deviceFlag, threadsFlag,
		},
		Action: func(c *cli.Context) error {
			if c.String("task") != topology.TaskName {
				return fmt.Errorf("--task %s: latent maps are drawn for the %s task only", c.String("task"), topology.TaskName)
			}
			dev, err := setupTorch(c)
			if err != nil {
				return err
			}
			m, _, err := conv.Load(c.String("vae"), dev)
			if err != nil {
				return err
			}
			defer m.Close()
			if err := topology.LatentMap(m, c.String("out"), c.Int("n"), c.Float64("box")); err != nil {
				return err
			}
			fmt.Printf("latent map %s (%dx%d designs over [-%g, %g]^2)\n", c.String("out"), c.Int("n"), c.Int("n"), c.Float64("box"), c.Float64("box"))
			return nil
		},
	}
}
