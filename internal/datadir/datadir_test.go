package datadir

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSearchedBesideCheckout: run from a directory outside the checkout, the
// data directory beside the checkout (../shared/data of bin/tlbo-native's
// checkout) is still searched, after the working directory's.
func TestSearchedBesideCheckout(t *testing.T) {
	root := t.TempDir()
	wd := filepath.Join(root, "elsewhere", "deep")
	exe := filepath.Join(root, "work", "main", "bin", "tlbo-native")
	dirs := searched(wd, exe)
	want := filepath.Join(root, "work", "shared", "data")
	i, j := slices.Index(dirs, want), slices.Index(dirs, filepath.Join(wd, "shared", "data"))
	if i < 0 || j != 0 || i < j {
		t.Fatalf("searched(%s, %s) = %v: want %s first and %s after it", wd, exe, dirs, dirs[0], want)
	}
	seen := map[string]bool{}
	for _, d := range dirs {
		if seen[d] {
			t.Errorf("%s searched twice", d)
		}
		seen[d] = true
	}
	if got := searched(wd, ""); slices.Contains(got, want) {
		t.Errorf("searched without a binary = %v holds %s", got, want)
	}
}

// TestFindDir: a given directory is returned as it is; one that does not
// exist is an error naming the setting; a search that finds nothing names
// the marker and the places looked at.
func TestFindDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(Env, "")
	if got, err := FindDir(dir, "marker"); err != nil || got != dir {
		t.Errorf("FindDir(%s) = %q, %v", dir, got, err)
	}
	missing := filepath.Join(dir, "missing")
	if _, err := FindDir(missing, "marker"); err == nil || !strings.Contains(err.Error(), "--data-dir") {
		t.Errorf("FindDir(missing) error %v, want one naming --data-dir", err)
	}
	t.Setenv(Env, missing)
	if _, err := FindDir("", "marker"); err == nil || !strings.Contains(err.Error(), "$"+Env) {
		t.Errorf("FindDir with $%s missing: error %v, want one naming $%s", Env, err, Env)
	}
	t.Setenv(Env, "")
	t.Chdir(dir)
	if _, err := FindDir("", "no-such-marker-file"); err == nil || !strings.Contains(err.Error(), "no-such-marker-file") {
		t.Errorf("FindDir without a data directory: error %v, want one naming the marker", err)
	}
	data := filepath.Join(dir, "shared", "data")
	if err := os.MkdirAll(filepath.Join(data, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "sub", "f.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := FindDir("", filepath.Join("sub", "f.txt")); err != nil || got != data {
		t.Errorf("FindDir found %q, %v; want %s", got, err, data)
	}
	if got, err := FindFile("", "nothing.txt", filepath.Join("sub", "f.txt")); err != nil || got != filepath.Join(data, "sub", "f.txt") {
		t.Errorf("FindFile = %q, %v", got, err)
	}
}
