package dashboard

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/manual"
)

// chromium returns Debian's chromium, skipping the test when it is missing
// unless TLBO_REQUIRE_BROWSER is set.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("TLBO_REQUIRE_BROWSER") != "" {
		t.Fatal("no chromium on PATH and TLBO_REQUIRE_BROWSER is set: install Debian's chromium (./build.sh test does)")
	}
	t.Skip("no chromium on PATH: the headless browser test is skipped (install Debian's chromium, or set TLBO_REQUIRE_BROWSER to make this a failure)")
	return ""
}

// headless starts headless Chromium (exe) for the test, stopped at its
// end, and returns its context, which times out after a minute.
func headless(t *testing.T, exe string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("headless", true), chromedp.WindowSize(1200, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancel(); cancelCtx(); cancelAlloc() })
	return ctx
}

// TestBrowserAsks: the page of a manual run lists the ids awaiting their
// results, and one told leaves the list without a reload.
func TestBrowserAsks(t *testing.T) {
	exe := chromium(t)
	root := t.TempDir()
	dir := filepath.Join(root, "lab")
	writeFlags(t, dir, map[string]string{"objective": manual.Objective, "budget": "4"})
	st, err := manual.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st.State.Start = []string{"CCO", "c1ccccc1"}
	if err := st.Hand([]int{1, 2}, float64(time.Now().Unix())); err != nil {
		t.Fatal(err)
	}
	s, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	ctx := headless(t, exe)
	rows := func(what, want string) {
		t.Helper()
		js := `[...document.querySelectorAll('#asks tbody tr')].map(r => r.dataset.id + ' ' + r.cells[1].textContent).join(', ')`
		wait, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if _, err := chromedp.Run(wait, chromedp.Poll[bool](js+` === '`+want+`'`)); err != nil {
			got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](js))
			t.Fatalf("%s: the pending asks read %q (%v), want %q", what, got, err, want)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/run?run=lab")); err != nil {
		t.Fatal(err)
	}
	rows("handed out", "1 CCO, 2 c1ccccc1")
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.notReloaded = "yes"`)); err != nil {
		t.Fatal(err)
	}
	if msg, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("status").textContent`)); err != nil ||
		!strings.HasPrefix(msg, "updated") {
		t.Errorf("the page's status reads %q (%v), want an update without failure", msg, err)
	}
	tell(t, dir, 1, 0.5)
	rows("after telling id 1", "2 c1ccccc1")
	if v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.notReloaded`)); err != nil || v != "yes" {
		t.Errorf("the page reloaded (%q, %v)", v, err)
	}
}

// TestBrowser loads a run page in headless Chromium, checks the curve's
// points, appends the journal line of the run's last distinct evaluation
// and checks that the page shows it without a reload.
func TestBrowser(t *testing.T) {
	exe := chromium(t)
	root := t.TempDir()
	copyRun(t, toyRun(t, 1), filepath.Join(root, "a"))
	journal := filepath.Join(root, "a", bo.JournalFile)
	b, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	k := firstCompleteLine(t, lines)
	if err := os.WriteFile(journal, bytes.Join(lines[:k], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	want, err := bo.ReadCurve(filepath.Join(root, "a")) // results.npz: the finished run
	if err != nil {
		t.Fatal(err)
	}

	ctx := headless(t, exe)

	// points returns the number of points of the run's curve on the page
	// once the page has drawn it.
	points := func(what string, n int) {
		t.Helper()
		sel := fmt.Sprintf(`polyline.run[data-run="a"][data-n="%d"]`, n)
		wait, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if _, err := chromedp.Run(wait, chromedp.Poll[bool](fmt.Sprintf(`document.querySelector('%s') !== null`, sel))); err != nil {
			got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector('polyline.run')||{}).outerHTML+' '+document.getElementById('status').textContent`))
			t.Fatalf("%s: no curve of %d points: %v (page: %s)", what, n, err, got)
		}
		js := fmt.Sprintf(`document.querySelector('%s').getAttribute('points').trim().split(/\s+/).length`, sel)
		if pts, err := chromedp.Run(ctx, chromedp.Evaluate[int](js)); err != nil || pts != n {
			t.Fatalf("%s: the polyline draws %d points (%v), want %d", what, pts, err, n)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/run?run=a")); err != nil {
		t.Fatal(err)
	}
	points("before the last evaluation", want.Distinct())
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.notReloaded = "yes"`)); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(journal, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(bytes.Join(lines[k:], nil)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	points("after the last evaluation", want.Distinct()+1)
	distinct, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.notReloaded + " " + document.getElementById("status").dataset.distinct`))
	if err != nil {
		t.Fatal(err)
	}
	if distinct != "yes "+strconv.Itoa(want.Distinct()) {
		t.Fatalf("page state %q, want %q: reloaded, or the status disagrees", distinct, "yes "+strconv.Itoa(want.Distinct()))
	}
}
