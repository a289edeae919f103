package task

import (
	"sync"

	"github.com/urfave/cli/v2"
)

// Command is a command a task adds to the command line, beside the verbs
// every task has: its own tools (topology solve, molecule tree), pictures
// (plot latent-map) and benchmarks (bench jtvae-step).
type Command struct {
	// Parent is the verb the command goes under ("plot", "bench"), or ""
	// for a top-level command (e.g. "molecule", whose subcommands are the
	// task's tools).
	Parent string
	// Build returns the command; it is called once per command line.
	Build func() *cli.Command
}

var (
	cmdMu    sync.Mutex
	commands []Command
)

// RegisterCommand adds a task's command under parent ("" for the top
// level); a task package calls it in its init function.
func RegisterCommand(parent string, build func() *cli.Command) {
	cmdMu.Lock()
	defer cmdMu.Unlock()
	commands = append(commands, Command{Parent: parent, Build: build})
}

// Commands returns the commands the tasks registered, in registration order.
func Commands() []Command {
	cmdMu.Lock()
	defer cmdMu.Unlock()
	return append([]Command(nil), commands...)
}
