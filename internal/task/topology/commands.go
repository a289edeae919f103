package topology

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/cliutil"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/openblas"
	"github.com/tlbo-native/tlbo-native/internal/rusage"
	"github.com/tlbo-native/tlbo-native/internal/simp"
	conv "github.com/tlbo-native/tlbo-native/models/topology"
)

// The topology task's own commands: topology solve and plot latent-map.

// topologyCommand groups the SIMP topology optimisation verbs.
func topologyCommand() *cli.Command {
	return &cli.Command{
		Name:        "topology",
		Usage:       "SIMP compliance minimisation on a Q4 mesh (the topology task's tools)",
		Subcommands: []*cli.Command{topologySolveCommand()},
	}
}

func topologySolveCommand() *cli.Command {
	return &cli.Command{
		Name:  "solve",
		Usage: "solve one problem; the last two lines are compliance_first C0 and compliance C",
		Description: "SPEC.json: {\"nelx\", \"nely\", \"volfrac\", \"penal\" (3), \"rmin\" (1.5), \"nu\" (1/3), \"xmin\" (0.001),\n" +
			"\"iterations\" (100), \"move\" (0.2), \"damping\" (0.5), \"fixed\": [[node, \"x\"|\"y\"], ...],\n" +
			"\"loads\": [[node, \"x\"|\"y\", value], ...]}; node = ix*(nely+1) + iy, iy = 0 at the top.\n" +
			"docs/design.md describes the recipe and the reference values of the 60x20 MBB beam.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "spec", Usage: "problem spec (JSON)", Required: true, TakesFile: true},
			&cli.StringFlag{Name: "out", Usage: "write the final densities here (.npy, float64 (nely, nelx), row 0 at the top)"},
		},
		Action: func(c *cli.Context) error {
			if err := cliutil.NoArgs(c); err != nil {
				return err
			}
			p, err := simp.ReadSpec(c.String("spec"))
			if err != nil {
				return fmt.Errorf("--spec: %w", err)
			}
			openblas.SetThreads(1) // a band solve of this size gains nothing from more threads
			start, cpu0 := time.Now(), rusage.CPUSeconds()
			res, err := simp.Solve(c.Context, p, simp.Options{})
			if err != nil {
				return fmt.Errorf("%s: %w", c.String("spec"), err)
			}
			if out := c.String("out"); out != "" {
				a := numpy.Array{Name: "x", Shape: []int{p.NelY, p.NelX}, Data: res.Densities}
				if err := numpy.WriteNPY(out, a); err != nil {
					return fmt.Errorf("--out: %w", err)
				}
			}
			vol := 0.0
			for _, v := range res.Densities {
				vol += v
			}
			fmt.Printf("mesh %dx%d iterations %d volume %.6f\n", p.NelX, p.NelY, p.Iterations, vol/float64(len(res.Densities)))
			fmt.Printf("seconds %.3f\n", time.Since(start).Seconds())
			fmt.Printf("cpu_seconds %.3f\n", rusage.CPUSeconds()-cpu0)
			fmt.Printf("compliance_first %.10g\n", res.ComplianceFirst)
			fmt.Printf("compliance %.10g\n", res.Compliance)
			return nil
		},
	}
}

// latentMapCommand draws the designs decoded over the latent box of a 2-d
// topology VAE: the topology task's picture of its latent space (its
// objects are pictures).
func latentMapCommand() *cli.Command {
	return &cli.Command{
		Name:  "latent-map",
		Usage: "draw the designs decoded from a grid over the latent box of a 2-d VAE (topology task)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Value: TaskName, Usage: "task (only topology draws latent maps)"},
			&cli.StringFlag{Name: "vae", Usage: "checkpoint FILE.pt (with FILE.json) of a conv VAE with latent 2", Required: true, TakesFile: true},
			&cli.StringFlag{Name: "out", Usage: "output PNG file", Required: true},
			&cli.IntFlag{Name: "n", Value: 15, Usage: "grid points per axis"},
			&cli.Float64Flag{Name: "box", Value: 4, Usage: "half-width of the latent box [-box, box]^2 (the authors' maps: 4)"},
			cliutil.DeviceFlag(), cliutil.ThreadsFlag(),
		},
		Action: func(c *cli.Context) error {
			if err := cliutil.NoArgs(c); err != nil {
				return err
			}
			if c.String("task") != TaskName {
				return fmt.Errorf("--task %s: latent maps are drawn for the %s task only", c.String("task"), TaskName)
			}
			if c.Int("n") < 1 || !(c.Float64("box") > 0) {
				return fmt.Errorf("-n %d and --box %g: want at least 1 and a positive half-width", c.Int("n"), c.Float64("box"))
			}
			dev, err := cliutil.SetupTorch(c)
			if err != nil {
				return err
			}
			m, _, err := conv.Load(c.String("vae"), dev)
			if err != nil {
				return fmt.Errorf("--vae: %w", err)
			}
			defer m.Close()
			if err := LatentMap(m, c.String("out"), c.Int("n"), c.Float64("box")); err != nil {
				return err
			}
			fmt.Printf("latent map %s (%dx%d designs over [-%g, %g]^2)\n", c.String("out"), c.Int("n"), c.Int("n"), c.Float64("box"), c.Float64("box"))
			return nil
		},
	}
}
