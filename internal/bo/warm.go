package bo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/gp"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// GPWarmFile holds the GP warm start after the run's last journaled fit
// (BO only): each fit of a version is warm-started from the one before, so
// without it a resume refits the GP once for every query or round of the
// version so far, to rebuild the chain exactly (minutes at thousands of GP
// points). It is a cache: when it is missing, unreadable or older than the
// journal, the resume replays the fits instead.
const GPWarmFile = "gp-warm.npz"

// savedWarm is GPWarmFile's content: the surrogate's warm start (nil: no
// fit of the version has succeeded yet) after the fit of version's query
// or round whose first query has index fit, and whether that fit failed
// (a schedule other than GPRefitEvery then has no kept GP to go on with).
type savedWarm struct {
	version, fit int
	warm         *gp.WarmStart
	failed       bool
}

// saveWarm writes the surrogate's warm start after the journaled fit of
// query or round fit. A failure only costs a slower resume, so it is
// logged, and the stale file removed, rather than ending the run.
func (r *runner[O]) saveWarm(fit int) {
	if r.cfg.Strategy != StrategyBO {
		return
	}
	path := filepath.Join(r.opts.Dir, GPWarmFile)
	s := savedWarm{version: r.version.current, fit: fit, warm: r.surrogate.last, failed: r.surrogate.lastFailed}
	if err := writeWarm(path, s); err != nil {
		os.Remove(path)
		r.logf("warning: %v (a resume will refit the GP to rebuild its warm start)", err)
	}
}

func writeWarm(path string, s savedWarm) error {
	arrays := []numpy.Array{
		{Name: "version", Shape: []int{1}, Data: []int64{int64(s.version)}},
		{Name: "fit", Shape: []int{1}, Data: []int64{int64(s.fit)}},
	}
	if s.failed {
		arrays = append(arrays, numpy.Array{Name: "failed", Shape: []int{1}, Data: []int64{1}})
	}
	if w := s.warm; w != nil {
		h := w.Hyper
		arrays = append(arrays,
			numpy.Array{Name: "lengthscales", Shape: []int{len(h.Lengthscales)}, Data: h.Lengthscales},
			numpy.Array{Name: "outputscale", Shape: []int{1}, Data: []float64{h.Outputscale}},
			numpy.Array{Name: "mean", Shape: []int{1}, Data: []float64{h.Mean}},
			numpy.Array{Name: "noise", Shape: []int{1}, Data: []float64{h.Noise}})
		if h.WarpA != nil {
			arrays = append(arrays,
				numpy.Array{Name: "warp_a", Shape: []int{len(h.WarpA)}, Data: h.WarpA},
				numpy.Array{Name: "warp_b", Shape: []int{len(h.WarpB)}, Data: h.WarpB})
		}
		if w.Inducing != nil {
			m, d := w.Inducing.Dims()
			arrays = append(arrays, numpy.Array{Name: "inducing", Shape: []int{m, d}, Data: mat.DenseCopyOf(w.Inducing).RawMatrix().Data})
		}
	}
	return numpy.WriteNPZ(path, arrays)
}

// readWarm reads GPWarmFile in dir; a missing file is (nil, nil).
func readWarm(dir string) (*savedWarm, error) {
	path := filepath.Join(dir, GPWarmFile)
	arrays, err := numpy.ReadNPZ(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	f := warmFields{path: path, byName: map[string]numpy.Array{}}
	for _, a := range arrays {
		f.byName[a.Name] = a
	}
	s := &savedWarm{version: int(f.scalar("version")), fit: int(f.scalar("fit"))}
	if _, ok := f.byName["failed"]; ok {
		s.failed = f.scalar("failed") != 0
	}
	if _, ok := f.byName["lengthscales"]; ok {
		h := gp.Hyper{Lengthscales: f.vector("lengthscales"), Outputscale: f.scalar("outputscale"), Mean: f.scalar("mean"),
			Noise: f.scalar("noise")}
		if _, ok := f.byName["warp_a"]; ok {
			h.WarpA, h.WarpB = f.vector("warp_a"), f.vector("warp_b")
		}
		s.warm = &gp.WarmStart{Hyper: h}
		if a, ok := f.byName["inducing"]; ok {
			if len(a.Shape) != 2 || a.Shape[1] != len(h.Lengthscales) || a.Shape[0] == 0 {
				f.fail("inducing", fmt.Sprintf("shape %v, want (M, %d)", a.Shape, len(h.Lengthscales)))
			} else {
				s.warm.Inducing = mat.NewDense(a.Shape[0], a.Shape[1], f.vector("inducing"))
			}
		}
	}
	return s, f.err
}

// warmFields reads GPWarmFile's arrays, keeping the first error, which
// names the file and the array.
type warmFields struct {
	path   string
	byName map[string]numpy.Array
	err    error
}

func (f *warmFields) fail(name, what string) {
	if f.err == nil {
		f.err = fmt.Errorf("%s: array %q: %s", f.path, name, what)
	}
}

func (f *warmFields) vector(name string) []float64 {
	a, ok := f.byName[name]
	if !ok {
		f.fail(name, "missing")
		return nil
	}
	v, err := a.Float64s()
	if err != nil {
		f.fail(name, err.Error())
		return nil
	}
	return append([]float64(nil), v...)
}

func (f *warmFields) scalar(name string) float64 {
	v := f.vector(name)
	if len(v) != 1 {
		f.fail(name, fmt.Sprintf("%d values, want 1", len(v)))
		return 0
	}
	return v[0]
}

// restoreWarm sets the surrogate's warm start from GPWarmFile when the file
// holds the state after fit, the version's last journaled fit, and reports
// whether it did; otherwise the caller replays the fits.
func (r *runner[O]) restoreWarm(fit int) bool {
	s, err := readWarm(r.opts.Dir)
	switch {
	case err != nil:
		r.logf("warning: %v; refitting the GP to rebuild its warm start", err)
		return false
	case s == nil || s.version != r.version.current || s.fit != fit:
		return false
	}
	if s.warm != nil {
		if err := s.warm.Check(r.vae.LatentDim()); err != nil {
			r.logf("warning: %s: %v; refitting the GP to rebuild its warm start", filepath.Join(r.opts.Dir, GPWarmFile), err)
			return false
		}
	}
	r.surrogate.last, r.surrogate.lastFailed = s.warm, s.failed
	return true
}
