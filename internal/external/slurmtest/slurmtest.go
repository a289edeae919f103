// Package slurmtest gives tests the Slurm cluster that the Slurm executor's
// integration tests run against: one already answering, else the one-node
// cluster of testdata/slurm/start.sh, started on the spot (as root). Such a
// test fails when no cluster can be had, and skips only when asked to
// explicitly (TLBO_SKIP_SLURM=1), never silently.
package slurmtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// SkipEnv is the environment variable that skips the Slurm tests when it
// is 1.
const SkipEnv = "TLBO_SKIP_SLURM"

// StartScript is the script, relative to the repository root, that starts
// the test cluster.
const StartScript = "testdata/slurm/start.sh"

// Need makes sure that a Slurm cluster answers (sinfo lists a usable
// node), starting the test cluster when none does. It skips t when
// TLBO_SKIP_SLURM=1 and fails it when no cluster answers and none can be
// started (not root, or the script fails), saying how to skip.
func Need(t testing.TB) {
	t.Helper()
	if os.Getenv(SkipEnv) == "1" {
		t.Skip(SkipEnv + "=1: the Slurm integration test is skipped as asked")
	}
	if Answers() {
		return
	}
	script, err := scriptPath()
	if err != nil {
		t.Fatalf("no Slurm cluster answers, and the test cluster's script cannot be found: %v (%s=1 skips this test)", err, SkipEnv)
	}
	if os.Geteuid() != 0 {
		t.Fatalf("no Slurm cluster answers, and only root can start the test cluster (%s): run it as root, "+
			"or set %s=1 to skip this test", script, SkipEnv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, script).CombinedOutput()
	if err != nil {
		t.Fatalf("no Slurm cluster answers and %s could not start one (%v):\n%s\n"+
			"(./build.sh test installs slurm-wlm and munge; %s=1 skips this test)", script, err, out, SkipEnv)
	}
	t.Logf("started the test cluster: %s", strings.TrimSpace(string(out)))
}

// Answers reports whether sinfo lists a node that takes jobs (idle, mixed
// or allocated).
func Answers() bool {
	out, err := exec.Command("sinfo", "-h", "-t", "idle,mixed,allocated", "-o", "%n").Output()
	return err == nil && len(strings.TrimSpace(string(out))) > 0
}

// scriptPath finds StartScript in the repository around the working
// directory (a test runs in its package's directory).
func scriptPath() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, StartScript)
			if _, err := os.Stat(p); err != nil {
				return "", err
			}
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
