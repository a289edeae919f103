package cliutil

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/openblas"
	"github.com/tlbo-native/tlbo-native/torch"
)

// runFlags runs SetupTorch under the device and thread flags given as args.
func runFlags(t *testing.T, args ...string) (torch.Device, error) {
	t.Helper()
	var dev torch.Device
	var setupErr error
	app := &cli.App{Flags: []cli.Flag{DeviceFlag(), ThreadsFlag()}, Action: func(c *cli.Context) error {
		dev, setupErr = SetupTorch(c)
		return nil
	}}
	if err := app.Run(append([]string{"test"}, args...)); err != nil {
		t.Fatal(err)
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
