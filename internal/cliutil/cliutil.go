// Package cliutil holds the command-line pieces that cmd/tlbo-native and the
// tasks' own commands (task.RegisterCommand) share: the device, thread and
// data-directory flags, the range of every numeric flag (ranges.go: one
// table, checked before any command runs), reading inputs one per line, CPU
// time and peak memory, and printing a libtorch profile. It only wires flags; no
// algorithm lives here.
package cliutil

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/acq"
	"github.com/tlbo-native/tlbo-native/internal/datadir"
	"github.com/tlbo-native/tlbo-native/internal/openblas"
	"github.com/tlbo-native/tlbo-native/torch"
)

// DeviceFlag is --device of the verbs that run networks.
func DeviceFlag() cli.Flag {
	return &cli.StringFlag{Name: "device", Value: "auto", Usage: "auto, cpu, cuda or cuda:N"}
}

// ThreadsFlag is --threads of the verbs that run networks.
func ThreadsFlag() cli.Flag {
	return &cli.IntFlag{Name: "threads", Usage: "threads of libtorch (intra-op) and of OpenBLAS (the GP's fit, and libtorch's matrix products), " +
		"and workers of the acquisition's maximiser (its raw samples and restarts in chunks: the same proposal on any number) " +
		"(0: libtorch's default, OPENBLAS_NUM_THREADS or all cores, and all cores)"}
}

// DataDirFlag is --data-dir of the verbs that read a task's data set.
func DataDirFlag() cli.Flag {
	return &cli.StringFlag{Name: "data-dir", Usage: "data directory (default: $" + datadir.Env +
		", then shared/data in the working directory or above it, then beside the binary: ../shared/data of its checkout)"}
}

// SetupTorch applies the --device and --threads flags. --threads bounds
// OpenBLAS too: its idle threads spin (sched_yield) while waiting for work,
// so on a machine shared with other jobs its default of one thread per core
// spent up to half of a single-threaded run's CPU time in the kernel. It
// is also the number of the acquisition maximiser's workers (all cores
// when 0), whose result does not depend on it.
func SetupTorch(c *cli.Context) (torch.Device, error) {
	// The range of --threads is checked with every flag's (CheckRanges).
	n := c.Int("threads")
	if n > 0 {
		if err := torch.SetNumThreads(n); err != nil {
			return torch.Device{}, err
		}
		openblas.SetThreads(n)
	}
	acq.SetWorkers(n)
	dev, err := torch.ParseDevice(c.String("device"))
	if err != nil {
		return dev, fmt.Errorf("--device: %w", err)
	}
	return dev, nil
}

// DenormalsEnv names the environment variable that chooses libtorch's
// denormal mode: "flush" (the default) or "keep" (torch.SetFlushDenormal).
const DenormalsEnv = "TLBO_DENORMALS"

// DenormalsFromEnv applies the denormal mode that $TLBO_DENORMALS asks for.
func DenormalsFromEnv() error {
	switch v := os.Getenv(DenormalsEnv); v {
	case "", "flush":
		if !torch.SetFlushDenormal(true) && v != "" {
			return fmt.Errorf("%s=flush: this CPU has no flush-to-zero mode (x86-64 only)", DenormalsEnv)
		}
	case "keep":
		torch.SetFlushDenormal(false)
	default:
		return fmt.Errorf("%s=%q: want flush (the default) or keep", DenormalsEnv, v)
	}
	return nil
}

// InputLines reads every line of r, spaces trimmed, blank ones kept ("").
func InputLines(r io.Reader, name string) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		out = append(out, strings.TrimSpace(sc.Text()))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return out, nil
}

// PrintProfile prints the top operators of a libtorch trace (torch.Profile)
// by self time, per step.
func PrintProfile(w io.Writer, path string, steps, top int) error {
	entries, err := torch.ReadProfile(path)
	if err != nil {
		return err
	}
	var all float64
	for _, e := range entries {
		all += e.Self
	}
	fmt.Fprintf(w, "profile %s: operators by self time per step (profiled steps run slower)\n", path)
	fmt.Fprintf(w, "%-44s %9s %9s %7s %6s\n", "operator", "self_ms", "total_ms", "calls", "self%")
	for _, e := range entries[:min(top, len(entries))] {
		n := float64(steps)
		fmt.Fprintf(w, "%-44s %9.2f %9.2f %7.0f %5.1f%%\n", e.Name, e.Self/1e3/n, e.Total/1e3/n, float64(e.Calls)/n, 100*e.Self/all)
	}
	return nil
}

// NoArgs returns an error when the command was given positional arguments
// it does not take (a value after a switch, as in --candidates true, is
// one: a switch takes none, or --name=false).
func NoArgs(c *cli.Context) error {
	if c.NArg() == 0 {
		return nil
	}
	name := strings.TrimPrefix(c.Command.HelpName, c.App.HelpName+" ")
	return fmt.Errorf("%s takes no arguments, got %q (a switch takes no value: --name, or --name=false)", name, c.Args().Slice())
}

// CheckOutFile checks, before any work, that a verb can write the file path
// given with --flag: its directory exists and takes a new file (one is
// created and removed), and path is not a directory.
func CheckOutFile(flag, path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("--%s %s is a directory; want a file", flag, path)
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("--%s %s: %s is not a directory", flag, path, dir)
	}
	f, err := os.CreateTemp(dir, ".tlbo-native-probe-*")
	if err != nil {
		return fmt.Errorf("--%s %s: directory %s is not writable: %w", flag, path, dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}
