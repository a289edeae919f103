// Command tlbo-native runs high-dimensional Bayesian optimisation in the latent
// space of a variational autoencoder shaped by deep metric learning (T-LBO).
//
// This package only wires flags to the library packages; no algorithm lives here.
package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"
)

func main() {
	app := &cli.App{
		Name:  "tlbo-native",
		Usage: "Bayesian optimisation in a metric-learned VAE latent space (T-LBO)",
		Commands: []*cli.Command{
			versionCommand(),
			checkpointCommand(),
			benchCommand(),
			gpCommand(),
			dataCommand(),
			scoreCommand(),
			optimizeCommand(),
			plotCommand(),
			trainCommand(),
			topologyCommand(),
			analyzeCommand(),
			moleculeCommand(),
		},
	}
	app.Commands = append(app.Commands, codecCommands()...)
	if err := app.Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "tlbo-native:", err)
		os.Exit(1)
	}
}

// benchCommand groups the micro-benchmarks; each prints "<name>_ms <median>" as its last line.
func benchCommand() *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "time a hot path and print its median milliseconds",
		Subcommands: []*cli.Command{
			benchGVAEStepCommand(),
			benchJTVAEStepCommand(),
			benchSGPREvalCommand(), benchBOStepCommand(),
		},
	}
}
