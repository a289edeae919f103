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
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tlbo-native/tlbo-native/internal/bo"
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

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("headless", true), chromedp.WindowSize(1200, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

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
