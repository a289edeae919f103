package dashboard

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/bo"
)

//go:embed assets
var assets embed.FS

var pages = template.Must(template.ParseFS(assets, "assets/*.html"))

// DefaultAddr is where the dashboard listens unless told otherwise: the
// loopback interface only.
const DefaultAddr = "127.0.0.1:8080"

// PollSeconds is how often the pages ask for new data.
const PollSeconds = 3

// maxDepth bounds how deep under the root runs are looked for.
const maxDepth = 6

// bestShown is how many of a run's best objects the page shows.
const bestShown = 8

// Server serves the runs under a root directory.
type Server struct {
	root     string // as given, cleaned
	rootReal string // with its symlinks resolved
	mux      *http.ServeMux

	mu      sync.Mutex
	cache   map[string]cached // by run directory
	picture map[string][]byte // by run directory and query
}

// cached is a run read at a given state of its files.
type cached struct {
	stamp string
	run   *Run
}

// New returns a server of the runs under root.
func New(root string) (*Server, error) {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("dashboard: runs directory: %w", err)
	}
	if info, err := os.Stat(real); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("dashboard: runs directory %s is not a directory", root)
	}
	s := &Server{root: filepath.Clean(root), rootReal: real, mux: http.NewServeMux(),
		cache: map[string]cached{}, picture: map[string][]byte{}}
	static, _ := fs.Sub(assets, "assets")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /{$}", s.index)
	s.mux.HandleFunc("GET /run", s.runPage)
	s.mux.HandleFunc("GET /api/runs", s.apiRuns)
	s.mux.HandleFunc("GET /api/view", s.apiView)
	s.mux.HandleFunc("GET /picture", s.pictureHandler)
	return s, nil
}

// ServeHTTP serves a request; every handler only reads.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'")
	s.mux.ServeHTTP(w, r)
}

// Serve listens on addr and serves the runs under root until ctx is done.
// It says on out where it listens, and that the runs are visible to the
// network when addr is not a loopback address.
func Serve(ctx context.Context, root, addr string, out io.Writer) error {
	s, err := New(root)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("dashboard: listen on %s: %w", addr, err)
	}
	if !isLoopback(ln.Addr()) {
		fmt.Fprintf(out, "warning: listening on %s, not a loopback address: the runs under %s are visible to the network\n",
			ln.Addr(), root)
	}
	fmt.Fprintf(out, "serving the runs under %s at http://%s/ (read only)\n", root, ln.Addr())
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(out, "serve: ", 0)}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("dashboard: %w", err)
	}
	return nil
}

// isLoopback reports whether a listener's address is a loopback one.
func isLoopback(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}

// errRefused is a run name the server does not serve.
var errRefused = errors.New("refused")

// resolve returns the directory of the run named id (a slash-separated
// path under the root), refusing absolute names, empty, "." and ".."
// elements, and a directory or run file whose symlinks lead out of the
// root.
func (s *Server) resolve(id string) (string, error) {
	if id == "" || strings.ContainsAny(id, "\\\x00") || path.IsAbs(id) || filepath.IsAbs(id) {
		return "", fmt.Errorf("run %q: %w: want a relative path under the runs directory", id, errRefused)
	}
	for _, el := range strings.Split(id, "/") {
		if el == "" || el == "." || el == ".." {
			return "", fmt.Errorf("run %q: %w: a path element is %q", id, errRefused, el)
		}
	}
	dir := filepath.Join(s.root, filepath.FromSlash(id))
	if err := s.inside(dir); err != nil {
		return "", fmt.Errorf("run %q: %w", id, err)
	}
	for _, name := range runFiles() {
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := s.inside(p); err != nil {
			return "", fmt.Errorf("run %q: %w", id, err)
		}
	}
	return dir, nil
}

// inside checks that p, its symlinks resolved, lies inside the root.
func (s *Server) inside(p string) error {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fmt.Errorf("%w: %v", errRefused, err)
	}
	rel, err := filepath.Rel(s.rootReal, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("%w: %s leads out of the runs directory", errRefused, filepath.Base(p))
	}
	return nil
}

// runFiles are the files of a run that the server reads.
func runFiles() []string {
	return append([]string{bo.ConfigFile, bo.JournalFile, bo.JournalFile + ".gz", bo.ResultsFile}, manualFiles...)
}

// isRun reports whether dir holds a run: a configuration and a journal,
// or a manual run whose start is being measured.
func isRun(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, bo.ConfigFile)); err != nil {
		return isManualSetUp(dir)
	}
	for _, name := range []string{bo.JournalFile, bo.JournalFile + ".gz"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// runIDs returns the runs under the root, sorted, found without following
// symlinks.
func (s *Server) runIDs() ([]string, error) {
	var ids []string
	err := filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == s.root {
				return err
			}
			return nil // an unreadable directory: skipped
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(s.root, p)
		if rel != "." && (strings.HasPrefix(d.Name(), ".") || strings.Count(rel, string(filepath.Separator)) >= maxDepth) {
			return filepath.SkipDir
		}
		if rel != "." && isRun(p) {
			ids = append(ids, filepath.ToSlash(rel))
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("dashboard: list runs: %w", err)
	}
	sort.Strings(ids)
	return ids, nil
}

// stamp identifies the state of a run's files: their sizes and times.
func stamp(dir string) string {
	var b strings.Builder
	for _, name := range runFiles() {
		if info, err := os.Stat(filepath.Join(dir, name)); err == nil {
			fmt.Fprintf(&b, "%s:%d:%d;", name, info.Size(), info.ModTime().UnixNano())
		}
	}
	return b.String()
}

// run returns the run named id, read again only when its files changed.
func (s *Server) run(id string) (*Run, error) {
	dir, err := s.resolve(id)
	if err != nil {
		return nil, err
	}
	st := stamp(dir)
	s.mu.Lock()
	c, ok := s.cache[dir]
	s.mu.Unlock()
	if ok && c.stamp == st {
		return c.run, nil
	}
	r, err := readRun(id, dir)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cache[dir] = cached{stamp: st, run: r}
	s.mu.Unlock()
	return r, nil
}

// listed is a run of the index, or why it could not be read.
type listed struct {
	*Run
	Error string `json:"error,omitempty"`
}

// list reads every run under the root.
func (s *Server) list() ([]listed, error) {
	ids, err := s.runIDs()
	if err != nil {
		return nil, err
	}
	out := make([]listed, len(ids))
	for i, id := range ids {
		r, err := s.run(id)
		if err != nil {
			r, out[i].Error = &Run{ID: id}, err.Error()
		}
		out[i].Run = r
	}
	return out, nil
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	runs, err := s.list()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.render(w, "index.html", map[string]any{"Root": s.root, "Runs": runs, "Poll": PollSeconds})
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	ids := r.URL.Query()["run"]
	if len(ids) == 0 {
		http.Error(w, "no run selected: /run?run=NAME[&run=NAME...]", http.StatusBadRequest)
		return
	}
	for _, id := range ids {
		if _, err := s.resolve(id); err != nil {
			refuse(w, err)
			return
		}
	}
	s.render(w, "run.html", map[string]any{"Runs": ids, "Poll": PollSeconds})
}

func (s *Server) render(w http.ResponseWriter, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := pages.ExecuteTemplate(w, name, data); err != nil {
		log.Printf("dashboard: page %s: %v", name, err)
	}
}

// refuse answers a refused or unreadable run.
func refuse(w http.ResponseWriter, err error) {
	code := http.StatusNotFound
	if errors.Is(err, errRefused) {
		code = http.StatusForbidden
	}
	http.Error(w, err.Error(), code)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		log.Printf("dashboard: encode JSON: %v", err)
	}
}

func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	runs, err := s.list()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, map[string]any{"runs": runs})
}

// GroupView is a setting's runs: their mean best-so-far with its standard
// deviation (bo.GroupCurves), and each run's curve.
type GroupView struct {
	Label string    `json:"label"`
	Count string    `json:"count"`
	Mean  []num     `json:"mean"`
	Std   []num     `json:"std"`
	Runs  []RunLine `json:"runs"`
}

// RunLine is one run's best-so-far curve: element i is the best after i
// distinct evaluations (element 0: the labelled start's best).
type RunLine struct {
	ID   string `json:"id"`
	Best []num  `json:"best"`
}

// Detail is what the page shows of its focused run.
type Detail struct {
	ID    string     `json:"id"`
	Task  string     `json:"task"`
	Best  []Best     `json:"best"`
	GP    []GPPoint  `json:"gp"`
	TR    []TRPoint  `json:"tr"`
	Map   []MapPoint `json:"map"`
	Torn  string     `json:"torn,omitempty"`
	Label string     `json:"label"`
	// Asks are a manual run's objects awaiting their measurement (absent
	// for another run).
	Asks *Asks `json:"asks,omitempty"`
}

// View is the JSON of a run page.
type View struct {
	Runs   []*Run      `json:"runs"`
	Groups []GroupView `json:"groups"`
	Detail *Detail     `json:"detail,omitempty"`
	// Error says why the runs cannot share one chart.
	Error string `json:"error,omitempty"`
}

func (s *Server) apiView(w http.ResponseWriter, r *http.Request) {
	ids := r.URL.Query()["run"]
	if len(ids) == 0 {
		http.Error(w, "no run selected: /api/view?run=NAME[&run=NAME...]", http.StatusBadRequest)
		return
	}
	v, err := s.view(ids, r.URL.Query().Get("focus"))
	if err != nil {
		refuse(w, err)
		return
	}
	writeJSON(w, v)
}

// view reads the runs ids and details the one named focus (the first
// when focus is empty or not among them).
func (s *Server) view(ids []string, focus string) (*View, error) {
	v := &View{}
	var curves []bo.Curve
	for _, id := range ids {
		run, err := s.run(id)
		if err != nil {
			return nil, err
		}
		v.Runs = append(v.Runs, run)
		curves = append(curves, bo.Curve{Dir: id, Fields: run.fields, Maximize: run.Maximize, Best: run.curve})
	}
	if err := bo.CheckAxis(curves); err != nil {
		v.Error = err.Error()
	} else {
		for _, g := range bo.GroupCurves(curves) {
			gv := GroupView{Label: g.Label, Count: g.Count(), Mean: nums(g.Mean), Std: nums(g.Std)}
			for _, c := range g.Runs {
				gv.Runs = append(gv.Runs, RunLine{ID: c.Dir, Best: nums(c.Best)})
			}
			v.Groups = append(v.Groups, gv)
		}
	}
	f := v.Runs[0]
	for _, run := range v.Runs {
		if run.ID == focus {
			f = run
		}
	}
	v.Detail = &Detail{ID: f.ID, Task: f.Task, Best: f.best(bestShown), GP: f.gpFits(), TR: f.trustRegion(), Map: f.latentMap(),
		Torn: f.Torn, Label: fmt.Sprintf("%s %s elbo=%s seed=%s", f.Task, f.Strategy, f.ELBO, f.Seed), Asks: f.asks(time.Now())}
	return v, nil
}

// maxPictures bounds the pictures kept in memory.
const maxPictures = 512

func (s *Server) pictureHandler(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("run")
	q, err := strconv.Atoi(r.URL.Query().Get("query"))
	if err != nil {
		http.Error(w, "picture: want ?run=NAME&query=INDEX", http.StatusBadRequest)
		return
	}
	run, err := s.run(id)
	if err != nil {
		refuse(w, err)
		return
	}
	done := run.state.complete()
	if q < 0 || q >= len(done) || !done[q].Valid || !canDraw(run.Task) {
		http.Error(w, fmt.Sprintf("run %q has no picture of query %d", id, q), http.StatusNotFound)
		return
	}
	key := run.dir + "\x00" + strconv.Itoa(q)
	s.mu.Lock()
	b, ok := s.picture[key]
	s.mu.Unlock()
	if !ok {
		if b, err = drawObject(run.Task, done[q].Object); err != nil {
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		s.mu.Lock()
		if len(s.picture) >= maxPictures {
			clear(s.picture)
		}
		s.picture[key] = b
		s.mu.Unlock()
	}
	w.Header().Set("Content-Type", "image/png")
	w.Write(b)
}
