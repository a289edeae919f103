package bo_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// crashedRun returns a run directory whose run crashed at evaluation at.
func crashedRun(t *testing.T, at int) string {
	t.Helper()
	dir := t.TempDir()
	runUntilPanic(t, dir, at)
	return dir
}

// TestResumeRestoresGPWarmStart checks that a resume takes the GP's warm
// start from GPWarmFile instead of refitting the version's GP fits, with the
// same queries as the uninterrupted run; that it refits when the file is
// missing, unreadable or from an earlier fit, again with the same queries;
// and that the file's values are what the next fit starts from.
func TestResumeRestoresGPWarmStart(t *testing.T) {
	want := reference(t)
	const at = 5 + 10 + 5 + 4 // in version 1, after three of its rounds
	earlier := crashedRun(t, at-2)
	stale, err := os.ReadFile(filepath.Join(earlier, bo.GPWarmFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		change func(t *testing.T, path string)
		refit  bool
	}{
		{"kept", func(*testing.T, string) {}, false},
		{"missing", func(t *testing.T, path string) { os.Remove(path) }, true},
		{"unreadable", func(t *testing.T, path string) { os.WriteFile(path, []byte("not a zip"), 0o644) }, true},
		{"stale", func(t *testing.T, path string) { os.WriteFile(path, stale, 0o644) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := crashedRun(t, at)
			path := filepath.Join(dir, bo.GPWarmFile)
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("the crashed run left no %s: %v", bo.GPWarmFile, err)
			}
			c.change(t, path)
			var logs bytes.Buffer
			got, err := runToy(t, toyConfig(), dir, true, nil, func(f string, a ...any) { fmt.Fprintf(&logs, f+"\n", a...) })
			if err != nil {
				t.Fatal(err)
			}
			if refit := got.ReplayedFits > 0; refit != c.refit {
				t.Errorf("replayed %d GP fits; want replays %v\nlogs:\n%s", got.ReplayedFits, c.refit, logs.String())
			}
			if c.name == "unreadable" && !strings.Contains(logs.String(), bo.GPWarmFile) {
				t.Errorf("no warning naming %s; logs:\n%s", bo.GPWarmFile, logs.String())
			}
			sameQueries(t, got.Queries, want.Queries)
		})
	}
	t.Run("used", func(t *testing.T) {
		dir := crashedRun(t, at)
		path := filepath.Join(dir, bo.GPWarmFile)
		arrays, err := numpy.ReadNPZ(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range arrays {
			if a.Name == "lengthscales" {
				v, _ := a.Float64s()
				for k := range v {
					v[k] *= 3
				}
				arrays[i].Data = v
			}
		}
		if err := numpy.WriteNPZ(path, arrays); err != nil {
			t.Fatal(err)
		}
		got, err := runToy(t, toyConfig(), dir, true, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.ReplayedFits != 0 {
			t.Fatalf("replayed %d GP fits with the file in place", got.ReplayedFits)
		}
		if reflect.DeepEqual(stripTiming(got.Queries), stripTiming(want.Queries)) {
			t.Error("the queries after a warm start with tripled length-scales are those of the run; the file is not used")
		}
	})
}

// TestResumeRestoresGPWarmStartAuthorsLoop checks the same under the
// authors' loop, whose GP is fitted once per query rather than per round.
func TestResumeRestoresGPWarmStartAuthorsLoop(t *testing.T) {
	cfg := toyConfig()
	cfg.Repeats = bo.RepeatsAuthors
	want, err := runToy(t, cfg, t.TempDir(), false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []bool{true, false} {
		t.Run(fmt.Sprintf("file kept %v", keep), func(t *testing.T) {
			dir := t.TempDir()
			crashRun(t, cfg, dir, 5+10+5+4)
			if !keep {
				os.Remove(filepath.Join(dir, bo.GPWarmFile))
			}
			got, err := runToy(t, cfg, dir, true, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if refit := got.ReplayedFits > 0; refit == keep {
				t.Errorf("replayed %d GP fits with the file kept %v", got.ReplayedFits, keep)
			}
			sameQueries(t, got.Queries, want.Queries)
		})
	}
}
