package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/manual"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/task/topology"
)

// manualSetup returns the arguments of optimize --objective manual for a
// small expression run in run: six evaluations, retrained after three.
func manualSetup(data, vae, run string, extra ...string) []string {
	return append([]string{"optimize", "--vae", vae, "--data-dir", data, "--objective", "manual", "--failure-score", "10",
		"--budget", "6", "--retrain-every", "3", "--retrain-epochs", "0.2", "--initial-retrain-epochs", "0", "--n-best", "30",
		"--n-rand", "10", "--inducing", "0", "--raw-samples", "64", "--restarts", "2", "--decode-attempts", "2", "--seed", "2",
		"--run-dir", run}, extra...)
}

// readRows reads ask's CSV: the rows below the header by id.
func readRows(t *testing.T, path string) map[int][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], manual.AskHeader) {
		t.Fatalf("%s: header %v, want %v", path, recs, manual.AskHeader)
	}
	rows := map[int][]string{}
	for _, r := range recs[1:] {
		id, err := strconv.Atoi(r[0])
		if err != nil {
			t.Fatalf("%s: id %q", path, r[0])
		}
		rows[id] = r
	}
	return rows
}

// measure writes a tell file scoring each row of rows by its object's
// length (a person's measurement), and returns its path.
func measure(t *testing.T, path string, rows map[int][]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("id,object,score\n")
	for _, id := range slices.Sorted(mapKeys(rows)) {
		fmt.Fprintf(&b, "%d,\"%s\",%d\n", id, rows[id][1], len(rows[id][1]))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func mapKeys[V any](m map[int]V) func(func(int) bool) {
	return func(yield func(int) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestAskTell runs the cycle as a person would on the expression task: a
// manual run set up with a start of 4 to measure, asks that hand out the
// start then proposals, tells with scores and an error, refused tell files
// that change nothing, the lock, and the run to the end of its budget, its
// model retrained after r evaluations. No object is handed out twice.
func TestAskTell(t *testing.T) {
	data, dir, vae := tinyExpressionVAE(t)
	run := filepath.Join(dir, "run")
	if err := runCLI(manualSetup(data, vae, run, "--initial", "4")...); err != nil {
		t.Fatal(err)
	}
	file := func(name string) string { return filepath.Join(dir, name) }
	if err := runCLI("ask", "--run-dir", run, "-n", "3", "--out", file("b1.csv")); err != nil {
		t.Fatal(err)
	}
	b1 := readRows(t, file("b1.csv"))
	if !slices.Equal(slices.Sorted(mapKeys(b1)), []int{1, 2, 3}) || b1[1][2] != "" {
		t.Fatalf("first ask: %v, want the start's ids 1 to 3 without a prediction", b1)
	}
	st, err := manual.Status(run)
	if err != nil || len(st.Pending) != 4 || !st.Pending[3].Handed.IsZero() || st.Version != -1 {
		t.Fatalf("status: %+v, %v: want 4 pending, the 4th not handed out, no model version", st, err)
	}
	// No config.json yet: the set-up kept what names the run, defaults included.
	if _, err := os.Stat(filepath.Join(run, bo.ConfigFile)); err == nil || st.Task != "expression" || st.Strategy != "bo" ||
		st.ELBO == "" || st.Seed != "2" || st.Budget != 6 {
		t.Errorf("status during the start (config.json: %v): task %q, strategy %q, elbo %q, seed %q, budget %d; want "+
			"expression, bo, the default ELBO, 2 and 6", err, st.Task, st.Strategy, st.ELBO, st.Seed, st.Budget)
	}
	if err := runCLI("ask", "--run-dir", run, "-n", "3", "--out", file("b2.csv")); err != nil {
		t.Fatal(err)
	}
	if b2 := readRows(t, file("b2.csv")); len(b2) != 1 || b2[4] == nil {
		t.Fatalf("second ask during the start: %v, want id 4 only", b2)
	}
	tell := func(name, text string) error {
		if err := os.WriteFile(file(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return runCLI("tell", "--run-dir", run, file(name))
	}
	if err := tell("t1.csv", "id,score,error\n2,1.5,\n1,2.5,\n3,,the vial broke\n"); err != nil {
		t.Fatal(err)
	}
	told := readFile(t, filepath.Join(run, manual.ToldFile))
	for _, c := range []struct{ text, want string }{
		{"id,score\n4,1\n2,1.6\n", "t.csv:3: id 2 was told score 1.5 before, now score 1.6"},
		{"id,score\n4,1\n99,3\n", "t.csv:3: unknown id 99"},
		{"id,score\n4,inf\n", `t.csv:2: id 4: score "inf" is not a finite number`},
		{"id,score\nfour,1\n", `t.csv:2: id "four"`},
		{"id,score,error\n4,,\n", "t.csv:2: id 4 has neither a score nor an error"},
		{"id,score,error\n4,1,broke\n", "t.csv:2: id 4 has a score (1) and an error (broke)"},
		{"object,score\nx,1\n", "t.csv:1: the header row"},
		{"id,score\n4,1\n4,2\n", "t.csv:3: id 4 has score 2 here and score 1 on line 2"},
	} {
		err := tell("t.csv", c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "nothing was recorded") {
			t.Errorf("tell %q: %v, want an error with %q", c.text, err, c.want)
		}
		if got := readFile(t, filepath.Join(run, manual.ToldFile)); got != told {
			t.Errorf("tell %q was refused but changed %s", c.text, manual.ToldFile)
		}
	}
	if err := tell("t1.csv", "id,score,error\n3,,the vial broke\n1,2.5,\n"); err != nil || readFile(t, filepath.Join(run, manual.ToldFile)) != told {
		t.Errorf("telling the same again: %v; want a no-op", err)
	}
	lock, err := bo.LockDir(run)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"tell", "--run-dir", run, file("t1.csv")}, {"ask", "--run-dir", run}} {
		if err := runCLI(args...); !errors.Is(err, bo.ErrRunDirInUse) {
			t.Errorf("%s while the run directory is locked: %v, want %v", args[0], err, bo.ErrRunDirInUse)
		}
	}
	lock.Unlock()
	if err := tell("t2.csv", "id,score\n4,0.5\n"); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range b1 {
		seen[r[1]] = r0(r)
	}
	for k := 0; ; k++ {
		out := file(fmt.Sprintf("batch%d.csv", k))
		if err := runCLI("ask", "--run-dir", run, "-n", "2", "--out", out); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(out); err != nil {
			break // nothing handed out: the run is complete
		}
		rows := readRows(t, out)
		for id, r := range rows {
			if prev, ok := seen[r[1]]; ok {
				t.Errorf("id %d hands out %s again (id %d)", id, r[1], prev)
			}
			seen[r[1]] = id
			if sd, err := strconv.ParseFloat(r[3], 64); err != nil || sd <= 0 {
				t.Errorf("id %d: sd %q, want a positive number", id, r[3])
			}
		}
		if err := runCLI("tell", "--run-dir", run, measure(t, file(fmt.Sprintf("told%d.csv", k)), rows)); err != nil {
			t.Fatal(err)
		}
		if k > 10 {
			t.Fatal("the run does not end")
		}
	}
	c, err := bo.ReadCurve(run)
	if err != nil {
		t.Fatal(err)
	}
	v, err := bo.ReadJournalView(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Initial) != 4 || len(c.Evaluations) != 6 || v.Versions != 2 || len(v.Pending) != 0 {
		t.Errorf("the finished run: %d start calls, %d evaluations, %d versions, %d pending; want 4, 6, 2 (retrained after 3), 0",
			len(c.Initial), len(c.Evaluations), v.Versions, len(v.Pending))
	}
	if !strings.Contains(readFile(t, filepath.Join(run, "initial.jsonl")), "the vial broke") {
		t.Error("the error told for id 3 is not its failure's reason")
	}
	st, err = manual.Status(run)
	if err != nil || st.Journaled != 6 || len(st.Pending) != 0 || st.Version != 1 {
		t.Errorf("status of the finished run: %+v, %v", st, err)
	}
}

// r0 returns the id of an ask row.
func r0(r []string) int { id, _ := strconv.Atoi(r[0]); return id }

// killed runs args in a child process killed (SIGKILL) at point: a
// manual.KillEnv name, or "journal:N", once the run's journal has N
// lines. It fails the test unless the child was killed.
func killed(t *testing.T, run, point string, args ...string) {
	t.Helper()
	lines, byJournal := strings.CutPrefix(point, "journal:")
	var env []string
	if !byJournal {
		env = []string{manual.KillEnv + "=" + point}
	}
	var out bytes.Buffer
	cmd := cliChild(t, &out, env, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if byJournal {
		n, _ := strconv.Atoi(lines)
	wait:
		for {
			select {
			case err := <-done:
				t.Fatalf("%s: the child ended by itself (%v) before journal line %d", point, err, n)
			case <-time.After(2 * time.Millisecond):
				if journalLines(run) >= n {
					cmd.Process.Kill()
					break wait
				}
			}
		}
	}
	err := <-done
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != -1 {
		t.Fatalf("%s: the child was not killed: %v", point, err)
	}
}

// toldResults returns the results told in run, without the times they
// were told.
func toldResults(t *testing.T, run string) string {
	t.Helper()
	var told []manual.Told
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(run, manual.ToldFile))), &told); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range told {
		fmt.Fprintf(&b, "%d: %s\n", r.ID, r)
	}
	return b.String()
}

// child runs args in a child process, as a person runs the command: the
// uninterrupted calls of TestAskTellKill start from a fresh process, as
// those killed do.
func child(t *testing.T, args ...string) {
	t.Helper()
	var out bytes.Buffer
	if err := cliChild(t, &out, nil, args...).Run(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out.String())
	}
}

// journalLines counts the complete lines of the journal of run.
func journalLines(run string) int {
	b, _ := os.ReadFile(filepath.Join(run, bo.JournalFile))
	return strings.Count(string(b), "\n")
}

// copyDir copies the run directory from to to.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
}

// TestAskTellKill kills ask and tell (kill -9) at each of their steps: the
// evaluations told journaled one by one, the retraining's version, the
// proposals' round, the CSV written and renamed, the hand-out recorded; a
// tell's file written and renamed. Each killed call leaves the run as
// before it or as after it: the next ask hands out what an uninterrupted
// ask did, the same objects under the same ids (those a killed ask
// proposed but never handed out first), and a killed tell leaves its
// results all recorded or none.
func TestAskTellKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	data, dir, vae := tinyExpressionVAE(t)
	s0 := filepath.Join(dir, "s0")
	if err := runCLI(manualSetup(data, vae, s0, "--initial", "3", "--q", "2")...); err != nil {
		t.Fatal(err)
	}
	var toldFile string
	for k := range 2 { // the start, then the first 3 proposals (rounds of 2 and 1)
		out := filepath.Join(dir, fmt.Sprint("first", k, ".csv"))
		if err := runCLI("ask", "--run-dir", s0, "-n", "3", "--out", out); err != nil {
			t.Fatal(err)
		}
		toldFile = measure(t, filepath.Join(dir, fmt.Sprint("told", k, ".csv")), readRows(t, out))
		if k == 0 {
			if err := runCLI("tell", "--run-dir", s0, toldFile); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The tell, uninterrupted, and killed at its steps.
	after := filepath.Join(dir, "after-tell")
	copyDir(t, s0, after)
	if err := runCLI("tell", "--run-dir", after, toldFile); err != nil {
		t.Fatal(err)
	}
	before, want := toldResults(t, s0), toldResults(t, after)
	if before == want {
		t.Fatal("the tell changed nothing")
	}
	for _, point := range []string{manual.ToldFile + "-written", manual.ToldFile + "-renamed"} {
		run := filepath.Join(dir, "tell-"+point)
		copyDir(t, s0, run)
		killed(t, run, point, "tell", "--run-dir", run, toldFile)
		if got := toldResults(t, run); got != map[bool]string{false: before, true: want}[strings.HasSuffix(point, "renamed")] {
			t.Errorf("tell killed at %s: %s holds %q; want it as before the tell until the rename, as after it then", point,
				manual.ToldFile, got)
		}
	}
	// The ask after the tell: 3 evaluations journaled, model v1, a round
	// of 2 proposals.
	ref := filepath.Join(dir, "ref")
	copyDir(t, after, ref)
	lines := journalLines(ref)
	refOut := filepath.Join(ref, "out.csv")
	child(t, "ask", "--run-dir", ref, "-n", "2", "--out", refOut)
	wantRows := readRows(t, refOut)
	if added := journalLines(ref) - lines; added != 5 {
		t.Fatalf("the ask journaled %d lines, want 3 evaluations, a version and a round", added)
	}
	points := []string{"out.csv-written", "out.csv-renamed", manual.StateFile + "-written", manual.StateFile + "-renamed"}
	for k := 1; k <= 5; k++ {
		points = append(points, fmt.Sprintf("journal:%d", lines+k))
	}
	for i, point := range points {
		t.Run(strings.ReplaceAll(point, ":", "-"), func(t *testing.T) {
			run := filepath.Join(dir, fmt.Sprint("ask", i))
			copyDir(t, after, run)
			out := filepath.Join(run, "out.csv")
			killed(t, run, point, "ask", "--run-dir", run, "-n", "2", "--out", out)
			if _, err := os.Stat(out); err == nil && i == 0 {
				t.Errorf("killed before its rename, the CSV is there")
			}
			got := map[int][]string{}
			if _, err := os.Stat(out); err == nil {
				got = readRows(t, out)
			}
			again := filepath.Join(run, "again.csv")
			child(t, "ask", "--run-dir", run, "-n", "2", "--out", again)
			for id, r := range readRows(t, again) {
				if g, ok := got[id]; ok && !slices.Equal(g, r) {
					t.Errorf("id %d handed out as %v, then as %v", id, g, r)
				}
				if _, ok := got[id]; !ok {
					got[id] = r
				}
			}
			for id, r := range wantRows {
				if !slices.Equal(got[id], r) {
					t.Errorf("id %d: %v, want %v (the uninterrupted ask's)", id, got[id], r)
				}
			}
			v, err := bo.ReadJournalView(run)
			if err != nil || v.Versions != 2 {
				t.Errorf("after the kill and an ask: %d versions (%v), want 2", v.Versions, err)
			}
		})
	}
}

// askTellCycle sets a manual run up with setup (a start of 3 to measure),
// hands out the start and tells its results, then hands out 2 proposals
// and tells theirs, as a person would; it returns the proposals' rows and
// the files ask wrote beside their CSV.
func askTellCycle(t *testing.T, dir string, setup ...string) (map[int][]string, []string) {
	t.Helper()
	run := filepath.Join(dir, "run")
	if err := runCLI(append(setup, "--objective", "manual", "--initial", "3", "--failure-score", "-1", "--budget", "2",
		"--retrain-every", "2", "--initial-retrain-epochs", "0", "--inducing", "0", "--raw-samples", "32", "--restarts", "2",
		"--seed", "2", "--run-dir", run)...); err != nil {
		t.Fatal(err)
	}
	// The tasks of this cycle maximise by default: status knows it during
	// the start, before config.json, without --maximize given.
	if st, err := manual.Status(run); err != nil || !st.Maximize {
		t.Errorf("status during the start: %+v, %v; want the task's direction, maximise", st, err)
	}
	var rows map[int][]string
	for k, n := range []string{"3", "2"} {
		out := filepath.Join(dir, fmt.Sprint("batch", k, ".csv"))
		if err := runCLI("ask", "--run-dir", run, "-n", n, "--out", out); err != nil {
			t.Fatal(err)
		}
		rows = readRows(t, out)
		// An untrained network may find a single novel object.
		if len(rows) < 1 || len(rows) > map[int]int{0: 3, 1: 2}[k] || (k == 0 && len(rows) != 3) {
			t.Fatalf("ask %d handed out %v", k, rows)
		}
		if err := runCLI("tell", "--run-dir", run, measure(t, filepath.Join(dir, fmt.Sprint("told", k, ".csv")), rows)); err != nil {
			t.Fatal(err)
		}
	}
	st, err := manual.Status(run)
	if err != nil || st.Told != 3+len(rows) || len(st.Pending) != len(rows) || !st.Pending[0].Told {
		t.Fatalf("status: %+v, %v; want the start and the proposals told, the proposals waiting for the next ask", st, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "batch1.*"))
	return rows, files
}

// TestAskTellTopology: a topology design is handed out as the path of its
// .npy file in the run directory, and the ask draws the designs.
func TestAskTellTopology(t *testing.T) {
	dir := t.TempDir()
	designs := make([]uint8, 40*topology.Pixels)
	for i := range designs {
		designs[i] = uint8((i/7 + i/40/3) % 2)
	}
	if err := os.MkdirAll(filepath.Join(dir, "data", "topology"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := numpy.WriteNPZ(filepath.Join(dir, "data", "topology", "topology.npz"),
		[]numpy.Array{{Name: "designs", Shape: []int{40, 40, 40}, Data: designs}}); err != nil {
		t.Fatal(err)
	}
	vae := filepath.Join(dir, "conv.pt")
	writeTinyConvVAE(t, vae, 3)
	rows, files := askTellCycle(t, dir, "optimize", "--vae", vae, "--data-dir", filepath.Join(dir, "data"), "--n-best", "20", "--n-rand", "0")
	for id, r := range rows {
		a, err := numpy.ReadNPY(r[1])
		if err != nil || !strings.HasPrefix(r[1], filepath.Join(dir, "run", "objects")) || len(a.Shape) != 2 || a.Shape[0]*a.Shape[1] != topology.Pixels {
			t.Errorf("id %d: object %q (%v, %v): want a 40x40 .npy in the run's objects/", id, r[1], a.Shape, err)
		}
	}
	if !slices.Contains(files, filepath.Join(dir, "batch1.png")) {
		t.Errorf("ask wrote %v, want the designs drawn too", files)
	}
}

// TestAskTellMolecule: molecules are handed out as SMILES, and drawn.
func TestAskTellMolecule(t *testing.T) {
	dir := t.TempDir()
	vae := filepath.Join(dir, "jtvae.pt")
	if err := runCLI("train", "--task", "molecule", "--synthetic-data", "--data-dir", dir, "--hidden", "16", "--epochs", "1",
		"--batch-size", "8", "--prior-samples", "0", "--cache-dir", "none", "--out", vae); err != nil {
		t.Fatal(err)
	}
	rows, files := askTellCycle(t, dir, "optimize", "--vae", vae, "--synthetic-data", "--data-dir", dir, "--cache-dir", "none",
		"--retrain-epochs", "0.1", "--n-best", "10", "--n-rand", "0")
	for id, r := range rows {
		m, err := chem.Smiles(r[1])
		if err != nil {
			t.Errorf("id %d: object %q is no SMILES: %v", id, r[1], err)
			continue
		}
		m.Close()
	}
	if !slices.Contains(files, filepath.Join(dir, "batch1.png")) {
		t.Errorf("ask wrote %v, want the molecules drawn too", files)
	}
	// The SDF beside the CSV: a record per row, in id order, with its id and SMILES.
	sdf, err := os.ReadFile(filepath.Join(dir, "batch1.sdf"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, rec := range strings.Split(strings.TrimSuffix(string(sdf), "$$$$\n"), "$$$$\n") {
		_, idText, _ := strings.Cut(rec, "> <id>\n")
		_, smiles, _ := strings.Cut(rec, "> <smiles>\n")
		idText, _, _ = strings.Cut(idText, "\n")
		smiles, _, _ = strings.Cut(smiles, "\n")
		id, _ := strconv.Atoi(idText)
		if r, ok := rows[id]; !ok || r[1] != smiles || !strings.HasPrefix(rec, "id "+idText+"\n") {
			t.Errorf("SDF record of id %q, SMILES %q: not a row of the CSV %v", idText, smiles, rows)
		}
		ids = append(ids, id)
	}
	if len(ids) != len(rows) || !slices.IsSorted(ids) {
		t.Errorf("SDF records of ids %v, want the CSV's %d in order", ids, len(rows))
	}
}

// TestPrintStatus checks what status prints of pending ids: a proposal's
// predicted score with its standard deviation, none for the start's objects,
// and whether each was handed out or told.
func TestPrintStatus(t *testing.T) {
	mean, sd := 1.5, 0.25
	r := manual.Report{
		Version: 0, Journaled: 3, Budget: 10, Best: 2, BestID: 2, BestObject: "x*2",
		Pending: []manual.Pending{
			{ID: 1, Object: "x+1", Handed: time.Now().Add(-time.Hour)},
			{ID: 5, Object: "sin(x)", Handed: time.Now(), Mean: &mean, SD: &sd, Told: true},
			{ID: 6, Object: "exp(x)", Mean: &mean, SD: &sd},
		},
	}
	var b strings.Builder
	printStatus(&b, r)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{"model version v0; evaluations journaled 3 of a budget of 10", "best 2: id 2, x*2", "pending 3",
		"  id 1  handed out 1h0m0s ago  x+1",
		"  id 5  handed out 0s ago, told (the next ask journals it), predicted 1.5 ± 0.25  sin(x)",
		"  id 6  not handed out yet (the next ask hands it out first), predicted 1.5 ± 0.25  exp(x)"}
	if len(lines) != len(want) {
		t.Fatalf("status printed %d lines, want %d:\n%s", len(lines), len(want), b.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want it to start with %q", i, lines[i], w)
		}
	}
}

// TestAskElsewhere: a run set up with relative paths (--vae, --data-dir)
// hands out its start to an ask run in another directory: the set-up keeps
// them as absolute paths.
func TestAskElsewhere(t *testing.T) {
	data, dir, vae := tinyExpressionVAE(t)
	relData, err := filepath.Rel(dir, data)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if err := runCLI(manualSetup(relData, filepath.Base(vae), "run", "--initial", "2")...); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	out := filepath.Join(dir, "b.csv")
	if err := runCLI("ask", "--run-dir", filepath.Join(dir, "run"), "-n", "2", "--out", out); err != nil {
		t.Fatalf("ask in another directory than the set-up's: %v", err)
	}
	if rows := readRows(t, out); len(rows) != 2 {
		t.Errorf("ask: %v, want the start's 2 objects", rows)
	}
}
