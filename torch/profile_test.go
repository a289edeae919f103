package torch

import (
	"os"
	"path/filepath"
	"testing"
)

// TestProfile records a matmul and a tanh and checks the summary: both are
// there, matmul's time includes that of the mm it calls, and no self time
// is negative.
func TestProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	err := Profile(path, func() error {
		a := FromFloat32([]float32{1, 2, 3, 4}, 2, 2)
		defer a.Close()
		b := a.MatMul(a)
		defer b.Close()
		c := b.Tanh()
		c.Close()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary trace left behind: %v", err)
	}
	entries, err := ReadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ProfileEntry{}
	for _, e := range entries {
		got[e.Name] = e
		if e.Self < -1e-6 || e.Self > e.Total+1e-6 {
			t.Errorf("%s: self %g outside [0, total %g]", e.Name, e.Self, e.Total)
		}
	}
	for _, name := range []string{"aten::matmul", "aten::mm", "aten::tanh"} {
		if got[name].Calls != 1 {
			t.Errorf("%s recorded %d times, want 1 (entries %v)", name, got[name].Calls, entries)
		}
	}
	if mm, matmul := got["aten::mm"], got["aten::matmul"]; matmul.Self > matmul.Total-mm.Total+1e-6 {
		t.Errorf("matmul self %g not net of mm %g (total %g)", matmul.Self, mm.Total, matmul.Total)
	}
}

func TestProfileErrors(t *testing.T) {
	if err := Profile(filepath.Join(t.TempDir(), "missing", "trace.json"), func() error { return nil }); err == nil {
		t.Error("profile into a missing directory: no error")
	}
	inner := filepath.Join(t.TempDir(), "inner.json")
	outer := filepath.Join(t.TempDir(), "outer.json")
	err := Profile(outer, func() error { return Profile(inner, func() error { return nil }) })
	if err == nil {
		t.Error("nested profile: no error")
	}
	if _, err := ReadProfile(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("missing trace: no error")
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte("[{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadProfile(bad); err == nil {
		t.Error("truncated trace: no error")
	}
}

// TestSelfTimes checks the nesting rule on a hand-made trace: an outer event
// holding two inner ones, one of which holds a third, and an event on
// another thread that overlaps in time but is not nested.
func TestSelfTimes(t *testing.T) {
	events := []traceEvent{
		{Name: "outer", Ph: "X", Ts: 0, Dur: 100, Tid: 1},
		{Name: "a", Ph: "X", Ts: 10, Dur: 30, Tid: 1},
		{Name: "a.inner", Ph: "X", Ts: 15, Dur: 5, Tid: 1},
		{Name: "b", Ph: "X", Ts: 50, Dur: 20, Tid: 1},
		{Name: "other", Ph: "X", Ts: 20, Dur: 40, Tid: 2},
		{Name: "after", Ph: "X", Ts: 120, Dur: 7, Tid: 1},
		{Name: "meta", Ph: "M", Ts: 0, Dur: 0, Tid: 1},
	}
	want := map[string]float64{"outer": 50, "a": 25, "a.inner": 5, "b": 20, "other": 40, "after": 7}
	got := selfTimes(events)
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d: %v", len(got), len(want), got)
	}
	for _, e := range got {
		if e.Self != want[e.Name] {
			t.Errorf("%s: self %g, want %g", e.Name, e.Self, want[e.Name])
		}
	}
}
