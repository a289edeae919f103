package dashboard

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/bo/botest"
)

// toyConfig is a small toy run: 12 evaluations, retrained every 6.
func toyConfig(seed uint64) bo.Config {
	c := bo.DefaultConfig()
	c.Budget, c.RetrainEvery = 12, 6
	c.RankK, c.InitialRetrainEpochs, c.RetrainEpochs = 1e-3, 1, 1
	c.NBest, c.NRand, c.Inducing = 40, 40, 30
	c.RawSamples, c.Restarts = 128, 2
	c.Seed = seed
	c.Extra = map[string]string{"task": "toy"}
	return c
}

// toyRuns caches finished toy runs by seed, made once per test binary.
var toyRuns = map[uint64]string{}

// toyRun returns a finished toy run of the seed (do not modify it: copy it).
func toyRun(t *testing.T, seed uint64) string {
	t.Helper()
	if dir, ok := toyRuns[seed]; ok {
		return dir
	}
	p, err := botest.New(3, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "dashboard-toy-")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bo.Run[[]float64](toyConfig(seed), p.Task(), p.Model(), p.Data(200, 2), bo.Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	toyRuns[seed] = dir
	return dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range toyRuns {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// copyRun copies the run's files (not its model versions) into dst.
func copyRun(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{bo.ConfigFile, bo.JournalFile, bo.ResultsFile} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newRoot returns a root with toy runs "a" (seed 1) and "b/c" (seed 2).
func newRoot(t *testing.T) (string, *Server) {
	t.Helper()
	root := t.TempDir()
	copyRun(t, toyRun(t, 1), filepath.Join(root, "a"))
	copyRun(t, toyRun(t, 2), filepath.Join(root, "b", "c"))
	s, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, s
}

// get requests target (a raw request URI) and returns the status and body.
func get(t *testing.T, s http.Handler, target string) (int, string) {
	t.Helper()
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	return w.Code, w.Body.String()
}

func getView(t *testing.T, s http.Handler, target string) View {
	t.Helper()
	code, body := get(t, s, target)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", target, code, body)
	}
	var v View
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	return v
}

// curveOf returns the run's curve in a view: one float per point.
func curveOf(t *testing.T, v View, id string) []float64 {
	t.Helper()
	for _, g := range v.Groups {
		for _, r := range g.Runs {
			if r.ID == id {
				out := make([]float64, len(r.Best))
				for i, x := range r.Best {
					out[i] = float64(x)
				}
				return out
			}
		}
	}
	t.Fatalf("run %s not in the view's groups", id)
	return nil
}

func TestIndexListsRuns(t *testing.T) {
	_, s := newRoot(t)
	code, body := get(t, s, "/")
	if code != http.StatusOK || !strings.Contains(body, `data-run="a"`) || !strings.Contains(body, `data-run="b/c"`) {
		t.Fatalf("index: %d, runs a and b/c listed: %v %v", code, strings.Contains(body, `data-run="a"`), strings.Contains(body, `data-run="b/c"`))
	}
	code, body = get(t, s, "/api/runs")
	var got struct{ Runs []listed }
	if err := json.Unmarshal([]byte(body), &got); code != http.StatusOK || err != nil {
		t.Fatalf("/api/runs: %d %v", code, err)
	}
	if len(got.Runs) != 2 || got.Runs[0].ID != "a" || got.Runs[1].ID != "b/c" {
		t.Fatalf("/api/runs lists %+v, want a and b/c", got.Runs)
	}
	for _, r := range got.Runs {
		if r.Error != "" || r.Task != "toy" || r.Budget != 12 || r.Done != 12 || r.Seconds <= 0 || r.Left != 0 {
			t.Errorf("run %s: %+v, want a finished toy run of 12 evaluations", r.ID, *r.Run)
		}
	}
}

// TestViewMatchesResults checks the journal's curve against the one plot
// reads from results.npz: the same points, one per distinct evaluation
// after the labelled start.
func TestViewMatchesResults(t *testing.T) {
	root, s := newRoot(t)
	v := getView(t, s, "/api/view?run=a&run=b/c")
	if v.Error != "" || len(v.Groups) != 1 || v.Groups[0].Count != "2 seeds" {
		t.Fatalf("view of two seeds: error %q, %d groups (%+v)", v.Error, len(v.Groups), v.Groups)
	}
	for _, id := range []string{"a", "b/c"} {
		want, err := bo.ReadCurve(filepath.Join(root, filepath.FromSlash(id)))
		if err != nil {
			t.Fatal(err)
		}
		got := curveOf(t, v, id)
		if len(got) != want.Distinct()+1 {
			t.Fatalf("run %s: %d points, want %d (the labelled start and %d distinct evaluations)", id, len(got), want.Distinct()+1, want.Distinct())
		}
		for i := range got {
			if got[i] != want.Best[i] {
				t.Fatalf("run %s: point %d is %v, results.npz's curve %v", id, i, got[i], want.Best[i])
			}
		}
	}
	d := v.Detail
	if d == nil || d.ID != "a" || len(d.Best) == 0 || len(d.GP) == 0 || len(d.Map) == 0 {
		t.Fatalf("detail of run a: %+v", d)
	}
	for i := 1; i < len(d.Best); i++ {
		if d.Best[i].Score < d.Best[i-1].Score { // the toy task minimises
			t.Errorf("best objects out of order: %v before %v", d.Best[i-1].Score, d.Best[i].Score)
		}
	}
	if v := getView(t, s, "/api/view?run=a&run=b/c&focus=b/c"); v.Detail.ID != "b/c" {
		t.Errorf("focus=b/c details %s", v.Detail.ID)
	}
}

func TestRunPage(t *testing.T) {
	_, s := newRoot(t)
	code, body := get(t, s, "/run?run=a&run=b/c")
	if code != http.StatusOK || !strings.Contains(body, "<li>a</li>") || !strings.Contains(body, "<li>b/c</li>") {
		t.Fatalf("run page: %d\n%s", code, body)
	}
	if code, _ := get(t, s, "/static/app.js"); code != http.StatusOK {
		t.Errorf("/static/app.js: %d", code)
	}
}

// TestRefusals checks that nothing outside the root is served: names with
// "..", encoded or not, absolute names, and symlinks out of the root.
func TestRefusals(t *testing.T) {
	root, s := newRoot(t)
	outside := t.TempDir()
	copyRun(t, toyRun(t, 1), filepath.Join(outside, "secret"))
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	// A run inside whose journal is a link to one outside.
	copyRun(t, toyRun(t, 1), filepath.Join(root, "j"))
	os.Remove(filepath.Join(root, "j", bo.JournalFile))
	if err := os.Symlink(filepath.Join(outside, "secret", bo.JournalFile), filepath.Join(root, "j", bo.JournalFile)); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(root, filepath.Join(outside, "secret"))
	if err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(outside, "secret")
	for _, name := range []string{"../" + filepath.Base(outside) + "/secret", "%2e%2e/" + filepath.Base(outside) + "/secret",
		"a/%2E%2E/..", filepath.ToSlash(rel), abs, "link", "j", "a/./", "."} {
		for _, path := range []string{"/api/view?run=", "/run?run=", "/picture?query=0&run="} {
			code, body := get(t, s, path+name)
			if code != http.StatusForbidden {
				t.Errorf("GET %s%s: %d, want 403 (%s)", path, name, code, strings.TrimSpace(body))
			}
		}
	}
	_, body := get(t, s, "/api/runs")
	if strings.Contains(body, "secret") || strings.Contains(body, `"link"`) {
		t.Errorf("/api/runs lists a run outside the root: %s", body)
	}
	if code, _ := get(t, s, "/static/../../../../etc/passwd"); code == http.StatusOK {
		t.Errorf("/static/../ traversal served")
	}
}

// TestTornLine checks that a journal whose last line is being written is
// read without error, the line skipped, and read again once complete.
func TestTornLine(t *testing.T) {
	root, s := newRoot(t)
	journal := filepath.Join(root, "a", bo.JournalFile)
	b, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	k := firstCompleteLine(t, lines) // the line that adds the last distinct evaluation
	before := bytes.Join(lines[:k], nil)
	last := lines[k]
	full := len(getCurve(t, s))
	if err := os.WriteFile(journal, append(append([]byte{}, before...), last[:len(last)/2]...), 0o644); err != nil {
		t.Fatal(err)
	}
	v := getView(t, s, "/api/view?run=a")
	if got := len(curveOf(t, v, "a")); got != full-1 || !strings.Contains(v.Detail.Torn, "torn") {
		t.Fatalf("with a torn line: %d points (want %d), torn note %q", got, full-1, v.Detail.Torn)
	}
	if err := os.WriteFile(journal, append(append([]byte{}, before...), last...), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := len(getCurve(t, s)); got != full {
		t.Fatalf("the line completed: %d points, want %d", got, full)
	}
}

func getCurve(t *testing.T, s http.Handler) []float64 {
	return curveOf(t, getView(t, s, "/api/view?run=a"), "a")
}

// firstCompleteLine returns k such that the journal's first k lines hold one
// distinct evaluation fewer than the first k+1.
func firstCompleteLine(t *testing.T, lines [][]byte) int {
	t.Helper()
	n := func(k int) int {
		st, err := parseJournal("journal", bytes.Join(lines[:k], nil))
		if err != nil {
			t.Fatal(err)
		}
		r := &Run{state: st}
		r.summarise(0)
		return r.Distinct
	}
	all := n(len(lines))
	for k := len(lines) - 1; k >= 0; k-- {
		if n(k) < all {
			return k
		}
	}
	t.Fatal("no line adds a distinct evaluation")
	return 0
}

// TestGzipJournal reads a committed run's gzipped journal.
func TestGzipJournal(t *testing.T) {
	root, s := newRoot(t)
	want := getCurve(t, s)
	path := filepath.Join(root, "a", bo.JournalFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	if err := os.WriteFile(path+".gz", buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	if got := getCurve(t, s); len(got) != len(want) || got[len(got)-1] != want[len(want)-1] {
		t.Fatalf("gzipped journal: curve %v, want %v", got, want)
	}
}

// TestNeverWrites checks that serving every page leaves the runs' files as
// they were.
func TestNeverWrites(t *testing.T) {
	root, s := newRoot(t)
	before := snapshot(t, root)
	time.Sleep(10 * time.Millisecond)
	for _, target := range []string{"/", "/api/runs", "/run?run=a", "/api/view?run=a&run=b/c", "/picture?run=a&query=0"} {
		get(t, s, target)
	}
	if after := snapshot(t, root); after != before {
		t.Fatalf("the tree changed:\n%s\nbecame\n%s", before, after)
	}
}

func snapshot(t *testing.T, root string) string {
	var b strings.Builder
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		info, err := d.Info()
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(p + " " + info.ModTime().String() + " " + info.Mode().String() + " " + strings.Repeat("+", int(info.Size()%7)) + "\n")
		return nil
	})
	return b.String()
}

// TestServeAddress checks that the loopback default says nothing of the
// network and another address warns that the runs are visible.
func TestServeAddress(t *testing.T) {
	root, _ := newRoot(t)
	for _, c := range []struct {
		addr string
		warn bool
	}{{"127.0.0.1:0", false}, {"0.0.0.0:0", true}} {
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() { done <- Serve(ctx, root, c.addr, pw); pw.Close() }()
		var out strings.Builder
		buf := make([]byte, 4096)
		for !strings.Contains(out.String(), "serving") {
			n, err := pr.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				t.Fatalf("%s: %v (%s)", c.addr, err, out.String())
			}
		}
		cancel()
		go io.Copy(io.Discard, pr)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), "visible to the network"); got != c.warn {
			t.Errorf("%s: warned %v, want %v: %q", c.addr, got, c.warn, out.String())
		}
	}
}
