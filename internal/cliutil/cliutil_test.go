package cliutil

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/openblas"
	"github.com/tlbo-native/tlbo-native/torch"
)

// runFlags runs SetupTorch under the device and thread flags given as args,
// their ranges checked first (as every command does, WithRanges).
func runFlags(t *testing.T, args ...string) (torch.Device, error) {
	t.Helper()
	var dev torch.Device
	var setupErr error
	cmd := &cli.Command{Name: "run", Flags: []cli.Flag{DeviceFlag(), ThreadsFlag()}, Action: func(c *cli.Context) error {
		dev, setupErr = SetupTorch(c)
		return nil
	}}
	WithRanges([]*cli.Command{cmd}, io.Discard)
	app := &cli.App{Commands: []*cli.Command{cmd}}
	if err := app.Run(append([]string{"test", "run"}, args...)); err != nil {
		return dev, err
	}
	return dev, setupErr
}

// TestThreadsBoundBoth checks that --threads sets libtorch's and OpenBLAS's
// thread counts, that 0 leaves them, and that a negative count is refused.
func TestThreadsBoundBoth(t *testing.T) {
	torchBefore, blasBefore := torch.NumThreads(), openblas.Threads()
	defer func() {
		_ = torch.SetNumThreads(torchBefore)
		openblas.SetThreads(blasBefore)
	}()
	openblas.SetThreads(3)
	if _, err := runFlags(t, "--device", "cpu", "--threads", "0"); err != nil {
		t.Fatal(err)
	}
	if got := openblas.Threads(); got != 3 {
		t.Fatalf("--threads 0 changed OpenBLAS's threads to %d", got)
	}
	dev, err := runFlags(t, "--device", "cpu", "--threads", "2")
	if err != nil || dev != torch.CPU {
		t.Fatalf("--threads 2: device %v, %v", dev, err)
	}
	if torch.NumThreads() != 2 || openblas.Threads() != 2 {
		t.Fatalf("--threads 2: libtorch %d, OpenBLAS %d threads", torch.NumThreads(), openblas.Threads())
	}
	if _, err := runFlags(t, "--threads", "-1"); err == nil || !strings.Contains(err.Error(), "--threads -1") {
		t.Fatalf("--threads -1: %v", err)
	}
}

// TestFlagRanges: a numeric flag out of its range is refused naming the
// flag, its value and the range; --threads above the cores is taken with a
// warning, above 4 x the cores refused; a value in range passes.
func TestFlagRanges(t *testing.T) {
	n := runtime.NumCPU()
	flags := []cli.Flag{ThreadsFlag(), &cli.IntFlag{Name: "latent"}, &cli.IntFlag{Name: "top"}, &cli.IntFlag{Name: "checkpoint-every"},
		&cli.Float64Flag{Name: "lr"}, &cli.Float64Flag{Name: "val-fraction"}, &cli.DurationFlag{Name: "min"},
		&cli.Float64Flag{Name: "best-quantile"}}
	run := func(args ...string) (string, error) {
		var warn strings.Builder
		cmd := &cli.Command{Name: "run", Flags: flags, Action: func(*cli.Context) error { return nil }}
		WithRanges([]*cli.Command{cmd}, &warn)
		app := &cli.App{Commands: []*cli.Command{cmd}}
		err := app.Run(append([]string{"test", "run"}, args...))
		return warn.String(), err
	}
	for _, c := range []struct {
		args []string
		want string // "": accepted
	}{
		{[]string{"--threads", "-3"}, fmt.Sprintf("--threads -3: want 0 to %d (at most 4 x the %d cores", 4*n, n)},
		{[]string{"--threads", fmt.Sprint(4*n + 1)}, fmt.Sprintf("--threads %d: want 0 to %d", 4*n+1, 4*n)},
		{[]string{"--threads", "1000"}, "--threads 1000: want 0 to"},
		{[]string{"--threads", fmt.Sprint(4 * n)}, ""},
		{[]string{"--latent", "-1"}, "--latent -1: want at least 0 (0: the task's)"},
		{[]string{"--top", "-1"}, "--top -1: want at least 0"},
		{[]string{"--checkpoint-every", "-1"}, "--checkpoint-every -1: want at least 0 (0: after each epoch only)"},
		{[]string{"--lr", "0"}, "--lr 0: want > 0"},
		{[]string{"--lr", "inf"}, "--lr +Inf: want > 0"},
		{[]string{"--lr", "NaN"}, "--lr NaN: want > 0"},
		{[]string{"--val-fraction", "1"}, "--val-fraction 1: want in [0, 1)"},
		{[]string{"--best-quantile", "1.5"}, "--best-quantile 1.5: want 0 to 1"},
		{[]string{"--min", "-5s"}, "--min -5s: want > 0"},
		{[]string{"--latent", "0", "--top", "3", "--lr", "1e-3", "--val-fraction", "0", "--min", "2s"}, ""},
	} {
		_, err := run(c.args...)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v, want accepted", c.args, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v, want an error with %q", c.args, err, c.want)
		}
	}
	warn, err := run("--threads", fmt.Sprint(n+1))
	if err != nil || !strings.Contains(warn, fmt.Sprintf("warning: --threads %d is more than the %d cores", n+1, n)) {
		t.Errorf("--threads %d (cores + 1): %v, warned %q; want a warning", n+1, err, warn)
	}
	if warn, _ := run("--threads", fmt.Sprint(n)); warn != "" {
		t.Errorf("--threads %d (the cores): warned %q", n, warn)
	}
}
