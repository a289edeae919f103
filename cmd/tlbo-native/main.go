// Command tlbo-native runs high-dimensional Bayesian optimisation in the latent
// space of a variational autoencoder shaped by deep metric learning (T-LBO).
//
// This package only wires flags to the library packages; no algorithm lives
// here, and no task is named: the verbs every task has (data, score, train,
// optimize, encode, decode, checkpoint import, analyze) take the task's own
// options from the task registry (internal/task), and the tasks' own
// commands (topology solve, molecule tree, plot latent-map, bench
// jtvae-step, ...) come from the tasks (task.RegisterCommand).
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/cliutil"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// exitInUse is the exit status of a run refused because another process holds
// its run directory: sysexits' EX_TEMPFAIL, so that a script running a queue
// of runs can tell "another copy runs it, try later" from a failure.
const exitInUse = 75

func main() {
	if err := newApp().Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "tlbo-native:", err)
		os.Exit(exitStatus(err))
	}
}

// exitStatus is the process's exit status after the error err.
func exitStatus(err error) int {
	if errors.Is(err, bo.ErrRunDirInUse) {
		return exitInUse
	}
	var sig *signalStop
	if errors.As(err, &sig) {
		return sig.status()
	}
	return 1
}

// newApp returns the command line with every verb and the tasks' commands.
func newApp() *cli.App {
	app := &cli.App{
		Name:   "tlbo-native",
		Usage:  "Bayesian optimisation in a metric-learned VAE latent space (T-LBO)",
		Before: func(*cli.Context) error { return cliutil.DenormalsFromEnv() },
		Commands: []*cli.Command{
			versionCommand(),
			checkpointCommand(),
			benchCommand(),
			gpCommand(),
			dataCommand(),
			scoreCommand(),
			optimizeCommand(),
			askCommand(),
			tellCommand(),
			statusCommand(),
			plotCommand(),
			summarizeCommand(),
			serveCommand(),
			trainCommand(),
			analyzeCommand(),
			encodeCommand(),
			decodeCommand(),
			docsCommand(),
		},
	}
	app.Commands = withTaskCommands(app.Commands)
	cliutil.WithRanges(app.Commands, os.Stderr)
	return app
}

// withTaskCommands adds the tasks' own commands: under the verb they name
// (plot, bench), or at the top level, where a command of the same name
// gains their subcommands.
func withTaskCommands(cmds []*cli.Command) []*cli.Command {
	find := func(name string) *cli.Command {
		for _, c := range cmds {
			if c.Name == name {
				return c
			}
		}
		return nil
	}
	for _, tc := range task.Commands() {
		c := tc.Build()
		if tc.Parent == "" {
			if have := find(c.Name); have != nil {
				have.Subcommands = append(have.Subcommands, c.Subcommands...)
			} else {
				cmds = append(cmds, c)
			}
			continue
		}
		parent := find(tc.Parent)
		if parent == nil {
			panic("task command " + c.Name + " under unknown verb " + tc.Parent)
		}
		parent.Subcommands = append(parent.Subcommands, c)
	}
	return cmds
}

// benchCommand groups the micro-benchmarks, each of which prints
// "<name>_ms <median>" as its last line, and the measurements of runs and
// data structures. The tasks add theirs (gvae-step, jtvae-step, ...).
func benchCommand() *cli.Command {
	return &cli.Command{
		Name:        "bench",
		Usage:       "time a hot path and print its median milliseconds, or measure a task's data structures",
		Subcommands: []*cli.Command{benchSGPREvalCommand(), benchBOStepCommand(), benchEvaluatorsCommand(), benchLoopCommand()},
	}
}
