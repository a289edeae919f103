package bo_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// removeVersions deletes the model-v<v> directories of dir for the given
// versions, as a run directory carried without its weights.
func removeVersions(t *testing.T, dir string, versions ...int) {
	t.Helper()
	for _, v := range versions {
		if err := os.RemoveAll(filepath.Join(dir, fmt.Sprintf("model-v%d", v))); err != nil {
			t.Fatal(err)
		}
	}
}

// TestResumeWithoutModelVersions: a run crashed in its second version
// resumes to the queries of an uninterrupted run when its model versions'
// weights are gone, all of them or only the latest: they are rebuilt from
// the journal's retrainings and saved again.
func TestResumeWithoutModelVersions(t *testing.T) {
	want := reference(t)
	for name, gone := range map[string][]int{"all": {0, 1}, "latest": {1}} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			runUntilPanic(t, dir, 5+10+5+3)
			removeVersions(t, dir, gone...)
			var mu sync.Mutex
			var log strings.Builder
			logf := func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				fmt.Fprintf(&log, format+"\n", args...)
			}
			got, err := runToy(t, toyConfig(), dir, true, nil, logf)
			if err != nil {
				t.Fatal(err)
			}
			sameQueries(t, got.Queries, want.Queries)
			for _, v := range gone {
				if !strings.Contains(log.String(), fmt.Sprintf("version %d: weights gone", v)) {
					t.Errorf("the log does not say version %d was rebuilt:\n%s", v, log.String())
				}
				if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("model-v%d", v), "model.pt")); err != nil {
					t.Errorf("version %d not saved again: %v", v, err)
				}
			}
			if strings.Contains(log.String(), "warning") {
				t.Errorf("the rebuilt versions differ from the journal's:\n%s", log.String())
			}
		})
	}
}

// TestResumeDataMoved: a run resumes when its data and target are read from
// another place (their location fields differ, their digests agree), and
// is refused when a digest differs.
func TestResumeDataMoved(t *testing.T) {
	cfg := toyConfig()
	cfg.Budget = 12
	cfg.Extra["data-source"] = "file /old/machine/data.npz"
	cfg.Extra["target"] = "design 3 of file /old/machine/data.npz"
	cfg.Extra["target-key"] = "abc"
	dir := t.TempDir()
	first, err := runToy(t, cfg, dir, false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Budget = 14
	cfg.Extra["data-source"] = "file /new/place/data.npz"
	cfg.Extra["target"] = "design 3 of file /new/place/data.npz"
	got, err := runToy(t, cfg, dir, true, nil, nil)
	if err != nil {
		t.Fatalf("resume with the data read from elsewhere: %v", err)
	}
	if got.Resumed != len(first.Queries) {
		t.Errorf("%d queries resumed, want the first run's %d", got.Resumed, len(first.Queries))
	}
	cfg.Extra["target-key"] = "abd"
	if _, err := runToy(t, cfg, dir, true, nil, nil); err == nil || !strings.Contains(err.Error(), "target") {
		t.Errorf("resume with another target: %v, want a refusal naming it", err)
	}
}
