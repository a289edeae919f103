package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/openblas"
	"github.com/tlbo-native/tlbo-native/internal/simp"
)

// topologyCommand groups the SIMP topology optimisation verbs.
func topologyCommand() *cli.Command {
	return &cli.Command{
		Name:        "topology",
		Usage:       "SIMP compliance minimisation on a Q4 mesh",
		Subcommands: []*cli.Command{topologySolveCommand()},
	}
}

func topologySolveCommand() *cli.Command {
	return &cli.Command{
		Name:  "solve",
		Usage: "solve one problem; the last two lines are compliance_first C0 and compliance C",
		Description: "SPEC.json: {\"nelx\", \"nely\", \"volfrac\", \"penal\" (3), \"rmin\" (1.5), \"nu\" (1/3), \"xmin\" (0.001),\n" +
			"\"iterations\" (100), \"move\" (0.2), \"damping\" (0.5), \"fixed\": [[node, \"x\"|\"y\"], ...],\n" +
			"\"loads\": [[node, \"x\"|\"y\", value], ...]}; node = ix*(nely+1) + iy, iy = 0 at the top.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "spec", Usage: "problem spec (JSON)", Required: true},
			&cli.StringFlag{Name: "out", Usage: "write the final densities here (.npy, float64 (nely, nelx), row 0 at the top)"},
		},
		Action: func(c *cli.Context) error {
			p, err := simp.ReadSpec(c.String("spec"))
			if err != nil {
				return err
			}
			openblas.SetThreads(1) // a band solve of this size gains nothing from more threads
			start, cpu0 := time.Now(), cpuSeconds()
			res, err := simp.Solve(c.Context, p, simp.Options{})
			if err != nil {
				return fmt.Errorf("%s: %w", c.String("spec"), err)
			}
			if out := c.String("out"); out != "" {
				a := numpy.Array{Name: "x", Shape: []int{p.NelY, p.NelX}, Data: res.Densities}
				if err := numpy.WriteNPY(out, a); err != nil {
					return err
				}
			}
			vol := 0.0
			for _, v := range res.Densities {
				vol += v
			}
			fmt.Printf("mesh %dx%d iterations %d volume %.6f\n", p.NelX, p.NelY, p.Iterations, vol/float64(len(res.Densities)))
			fmt.Printf("seconds %.3f\n", time.Since(start).Seconds())
			fmt.Printf("cpu_seconds %.3f\n", cpuSeconds()-cpu0)
			fmt.Printf("compliance_first %.10g\n", res.ComplianceFirst)
			fmt.Printf("compliance %.10g\n", res.Compliance)
			return nil
		},
	}
}
