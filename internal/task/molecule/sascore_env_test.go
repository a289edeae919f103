package molecule

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFragmentScoresEnv checks that $TLBO_SA_FRAGMENTS replaces Debian's path
// (the same table read from a copy gives the same scores) and that a bad one
// is an error naming the variable and the file.
func TestFragmentScoresEnv(t *testing.T) {
	want, err := ReadFragmentScores(FragmentScoresPath)
	if err != nil {
		t.Skipf("Debian's fragment table: %v", err)
	}
	data, err := os.ReadFile(FragmentScoresPath)
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "fpscores.pkl.gz")
	if err := os.WriteFile(copyPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(FragmentScoresEnv, copyPath)
	got, err := readDefaultFragmentScores()
	if err != nil || len(got) != len(want) {
		t.Fatalf("from $%s: %d fragments, %v; want %d", FragmentScoresEnv, len(got), err, len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("fragment %d: %v, want %v", k, got[k], v)
		}
	}
	missing := filepath.Join(t.TempDir(), "none.pkl.gz")
	t.Setenv(FragmentScoresEnv, missing)
	if _, err := readDefaultFragmentScores(); err == nil || !strings.Contains(err.Error(), FragmentScoresEnv) ||
		!strings.Contains(err.Error(), missing) {
		t.Fatalf("a missing $%s: %v, want an error naming the variable and the file", FragmentScoresEnv, err)
	}
}
