package simp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/openblas"
)

// DataFileName is the data set's file in its directory.
const DataFileName = "topology.npz"

// partsDir holds the finished chunks of an unfinished data set.
const partsDir = ".topology-parts"

// Design is one solved random problem of the data set.
type Design struct {
	Index           int
	Problem         Problem
	Image           []uint8 // (nely, nelx), row 0 at the top: 1 where the density exceeds 0.5
	Compliance      float64 // of the continuous final design
	ComplianceFirst float64 // of the uniform start
}

// SolveRandom solves the random problem (seed, index) and thresholds the
// final design at 0.5.
func SolveRandom(ctx context.Context, seed uint64, index int, opt Options) (Design, error) {
	p := RandomProblem(seed, index)
	res, err := Solve(ctx, p, opt)
	if err != nil {
		return Design{}, fmt.Errorf("design %d: %w", index, err)
	}
	img := make([]uint8, len(res.Densities))
	for i, v := range res.Densities {
		if v > 0.5 {
			img[i] = 1
		}
	}
	return Design{Index: index, Problem: p, Image: img, Compliance: res.Compliance, ComplianceFirst: res.ComplianceFirst}, nil
}

// GenerateOptions configure [Generate].
type GenerateOptions struct {
	Dir     string // output directory (created if missing)
	N       int    // number of designs: indices 0..N-1
	Seed    uint64 // below 2^63 (stored as int64)
	Workers int    // parallel solves; < 1 means the number of CPUs
	Chunk   int    // designs per checkpoint file; < 1 means 20
	// Progress, when set, is called from one goroutine with the number of
	// designs done (those kept from an earlier run included) and N.
	Progress func(done, total int)
}

// Generate writes Dir/topology.npz with the designs 0..N-1 of seed. It
// solves in parallel (one OpenBLAS thread per solve) and checkpoints every
// Chunk designs of a worker to Dir/.topology-parts (fsynced, renamed into
// place), so a killed run resumes with its finished designs; the parts are
// merged at the end and removed, except those holding designs beyond N.
// Designs of an existing topology.npz with the same seed are reused too. It
// returns the output path.
func Generate(ctx context.Context, o GenerateOptions) (string, error) {
	if o.N < 1 {
		return "", fmt.Errorf("n %d: must be at least 1", o.N)
	}
	if o.Seed >= 1<<63 {
		return "", fmt.Errorf("seed %d: must be below 2^63", o.Seed)
	}
	if o.Workers < 1 {
		o.Workers = runtime.NumCPU()
	}
	if o.Chunk < 1 {
		o.Chunk = 20
	}
	parts := filepath.Join(o.Dir, partsDir)
	if err := os.MkdirAll(parts, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(o.Dir, DataFileName)
	have, beyond, err := loadFinished(o.Seed, o.N, append([]string{out}, partFiles(parts)...))
	if err != nil {
		return "", err
	}
	if beyond[out] {
		return "", fmt.Errorf("%s holds more than %d designs: use a larger n or another directory", out, o.N)
	}
	var todo []int
	for i := range o.N {
		if _, ok := have[i]; !ok {
			todo = append(todo, i)
		}
	}
	// A single OpenBLAS thread per solve: the parallelism is across designs.
	defer openblas.OneThread()()
	if err := solveChunks(ctx, o, parts, todo, o.N-len(todo), have); err != nil {
		return "", err
	}
	designs := make([]Design, o.N)
	for i := range designs {
		designs[i] = have[i]
	}
	if err := WriteDesigns(out, o.Seed, designs); err != nil {
		return "", err
	}
	return out, removeParts(parts, beyond)
}

// removeParts deletes the part files once merged, keeping those that hold
// designs beyond the output (index >= N) for a later, larger run.
func removeParts(dir string, keep map[string]bool) error {
	for _, f := range partFiles(dir) {
		if !keep[f] {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	if len(keep) == 0 {
		return os.Remove(dir)
	}
	return nil
}

// partFiles lists the checkpoint files in dir.
func partFiles(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "part-*.npz"))
	sort.Strings(files)
	return files
}

// loadFinished reads the designs of the existing files (missing ones are
// skipped) and names the files holding designs with index n or above; a
// file made with another seed is an error.
func loadFinished(seed uint64, n int, files []string) (map[int]Design, map[string]bool, error) {
	have := make(map[int]Design)
	beyond := make(map[string]bool)
	for _, f := range files {
		if _, err := os.Stat(f); errors.Is(err, os.ErrNotExist) {
			continue
		}
		s, ds, err := ReadDesigns(f)
		if err != nil {
			return nil, nil, err
		}
		if s != seed {
			return nil, nil, fmt.Errorf("%s: made with seed %d, not %d: use another directory", f, s, seed)
		}
		for _, d := range ds {
			have[d.Index] = d
			if d.Index >= n {
				beyond[f] = true
			}
		}
	}
	return have, beyond, nil
}

// solveChunks solves the designs todo on o.Workers goroutines, writing a
// part file per chunk and adding the results to have.
func solveChunks(ctx context.Context, o GenerateOptions, parts string, todo []int, done int, have map[int]Design) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan []int)
	results := make(chan []Design)
	ticks := make(chan struct{}, o.Workers)
	errs := make(chan error, o.Workers)
	var wg sync.WaitGroup
	for range o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for chunk := range jobs {
				ds, err := solveChunk(ctx, o.Seed, chunk, parts, ticks)
				if err != nil {
					errs <- err
					cancel()
					return
				}
				results <- ds
			}
		}()
	}
	go func() {
		defer close(jobs)
		for c := range slices.Chunk(todo, o.Chunk) {
			select {
			case jobs <- c:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results); close(ticks) }()
	if o.Progress != nil {
		o.Progress(done, o.N)
	}
	for results != nil || ticks != nil {
		select {
		case ds, ok := <-results:
			if !ok {
				results = nil
				continue
			}
			for _, d := range ds {
				have[d.Index] = d
			}
		case _, ok := <-ticks:
			if !ok {
				ticks = nil
				continue
			}
			done++
			if o.Progress != nil {
				o.Progress(done, o.N)
			}
		}
	}
	select {
	case err := <-errs:
		return err
	default:
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return nil
}

// solveChunk solves the designs of one chunk, ticking once per design, and
// checkpoints them to a part file.
func solveChunk(ctx context.Context, seed uint64, chunk []int, parts string, ticks chan<- struct{}) ([]Design, error) {
	ds := make([]Design, 0, len(chunk))
	for _, i := range chunk {
		d, err := SolveRandom(ctx, seed, i, Options{})
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
		ticks <- struct{}{}
	}
	name := fmt.Sprintf("part-%08d-%08d.npz", chunk[0], chunk[len(chunk)-1])
	return ds, WriteDesigns(filepath.Join(parts, name), seed, ds)
}

// Array names of a designs file.
const (
	keySeed = "seed"
	keyNelX = "nelx"
	keyNelY = "nely"
)

// WriteDesigns writes designs to an .npz file atomically: designs (uint8
// 0/1, N x nely x nelx, row 0 at the top), index, volfrac, compliance,
// compliance_first, the supports as fixed_node (int32, N x F, padded with
// -1), fixed_axis (uint8, 0 x, 1 y) and n_fixed, the loads as load_node,
// load_axis, load_value (float64) and n_loads, and the scalars seed, nelx,
// nely, iterations, penal, rmin, nu, xmin, move and damping (the SIMP
// settings, equal for all designs).
func WriteDesigns(path string, seed uint64, designs []Design) error {
	if len(designs) == 0 {
		return fmt.Errorf("write %s: no designs", path)
	}
	p0 := designs[0].Problem
	n := len(designs)
	maxF, maxL := 1, 1
	for _, d := range designs {
		if d.Problem.NelX != p0.NelX || d.Problem.NelY != p0.NelY {
			return fmt.Errorf("write %s: design %d is %dx%d, not %dx%d", path, d.Index, d.Problem.NelX, d.Problem.NelY, p0.NelX, p0.NelY)
		}
		maxF, maxL = max(maxF, len(d.Problem.Fixed)), max(maxL, len(d.Problem.Loads))
	}
	pix := p0.NelX * p0.NelY
	img := make([]uint8, 0, n*pix)
	index := make([]int64, n)
	vf, comp, comp0 := make([]float64, n), make([]float64, n), make([]float64, n)
	fn, fa, nf := filled(n*maxF, int32(-1)), make([]uint8, n*maxF), make([]int32, n)
	ln, la, lv, nl := filled(n*maxL, int32(-1)), make([]uint8, n*maxL), make([]float64, n*maxL), make([]int32, n)
	for i, d := range designs {
		if len(d.Image) != pix {
			return fmt.Errorf("write %s: design %d has %d pixels, want %d", path, d.Index, len(d.Image), pix)
		}
		img = append(img, d.Image...)
		index[i], vf[i], comp[i], comp0[i] = int64(d.Index), d.Problem.VolFrac, d.Compliance, d.ComplianceFirst
		nf[i], nl[i] = int32(len(d.Problem.Fixed)), int32(len(d.Problem.Loads))
		for k, f := range d.Problem.Fixed {
			fn[i*maxF+k], fa[i*maxF+k] = int32(f.Node), uint8(f.Axis)
		}
		for k, l := range d.Problem.Loads {
			ln[i*maxL+k], la[i*maxL+k], lv[i*maxL+k] = int32(l.Node), uint8(l.Axis), l.Value
		}
	}
	scalar := func(name string, v any) numpy.Array { return numpy.Array{Name: name, Data: v} }
	return numpy.WriteNPZ(path, []numpy.Array{
		{Name: "designs", Shape: []int{n, p0.NelY, p0.NelX}, Data: img},
		{Name: "index", Shape: []int{n}, Data: index},
		{Name: "volfrac", Shape: []int{n}, Data: vf},
		{Name: "compliance", Shape: []int{n}, Data: comp},
		{Name: "compliance_first", Shape: []int{n}, Data: comp0},
		{Name: "fixed_node", Shape: []int{n, maxF}, Data: fn},
		{Name: "fixed_axis", Shape: []int{n, maxF}, Data: fa},
		{Name: "n_fixed", Shape: []int{n}, Data: nf},
		{Name: "load_node", Shape: []int{n, maxL}, Data: ln},
		{Name: "load_axis", Shape: []int{n, maxL}, Data: la},
		{Name: "load_value", Shape: []int{n, maxL}, Data: lv},
		{Name: "n_loads", Shape: []int{n}, Data: nl},
		scalar(keySeed, []int64{int64(seed)}),
		scalar(keyNelX, []int64{int64(p0.NelX)}),
		scalar(keyNelY, []int64{int64(p0.NelY)}),
		scalar("iterations", []int64{int64(p0.Iterations)}),
		scalar("penal", []float64{p0.Penal}),
		scalar("rmin", []float64{p0.RMin}),
		scalar("nu", []float64{p0.Nu}),
		scalar("xmin", []float64{p0.XMin}),
		scalar("move", []float64{p0.Move}),
		scalar("damping", []float64{p0.Damping}),
	})
}

func filled[T any](n int, v T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// ReadDesigns reads a file written by [WriteDesigns]; it returns the seed
// and the designs with their problems rebuilt.
func ReadDesigns(path string) (uint64, []Design, error) {
	arrays, err := numpy.ReadNPZ(path)
	if err != nil {
		return 0, nil, err
	}
	r := designReader{path: path, arrays: make(map[string]numpy.Array, len(arrays))}
	for _, a := range arrays {
		r.arrays[a.Name] = a
	}
	return r.read()
}

// designReader checks and extracts the arrays of a designs file.
type designReader struct {
	path   string
	arrays map[string]numpy.Array
	err    error
}

// get returns the data of array name with the given shape (-1: any size);
// the first problem sticks in r.err.
func get[T any](r *designReader, name string, shape ...int) []T {
	if r.err != nil {
		return nil
	}
	a, ok := r.arrays[name]
	if !ok {
		r.err = fmt.Errorf("%s: no array %q", r.path, name)
		return nil
	}
	v, ok := a.Data.([]T)
	good := ok && len(a.Shape) == len(shape)
	for i := 0; good && i < len(shape); i++ {
		good = shape[i] < 0 || shape[i] == a.Shape[i]
	}
	if !good {
		var zero T
		r.err = fmt.Errorf("%s: array %q is %T of shape %v, want %T of shape %v", r.path, name, a.Data, a.Shape, []T{zero}, shape)
		return nil
	}
	return v
}

func (r *designReader) read() (uint64, []Design, error) {
	seed := get[int64](r, keySeed)
	idx := get[int64](r, "index", -1)
	nelx, nely := get[int64](r, keyNelX), get[int64](r, keyNelY)
	if r.err != nil {
		return 0, nil, r.err
	}
	n := len(idx)
	if len(seed) != 1 || len(nelx) != 1 || len(nely) != 1 || nelx[0] < 1 || nely[0] < 1 {
		return 0, nil, fmt.Errorf("%s: bad seed or mesh size", r.path)
	}
	ex, ey := int(nelx[0]), int(nely[0])
	settings := NewProblem(ex, ey, 0)
	iters := get[int64](r, "iterations")
	for _, s := range []struct {
		name string
		dst  *float64
	}{{"penal", &settings.Penal}, {"rmin", &settings.RMin}, {"nu", &settings.Nu}, {"xmin", &settings.XMin}, {"move", &settings.Move}, {"damping", &settings.Damping}} {
		if v := get[float64](r, s.name); len(v) == 1 {
			*s.dst = v[0]
		}
	}
	img := get[uint8](r, "designs", n, ey, ex)
	vf, comp, comp0 := get[float64](r, "volfrac", n), get[float64](r, "compliance", n), get[float64](r, "compliance_first", n)
	fn, fa, nf := get[int32](r, "fixed_node", n, -1), get[uint8](r, "fixed_axis", n, -1), get[int32](r, "n_fixed", n)
	ln, la, lv, nl := get[int32](r, "load_node", n, -1), get[uint8](r, "load_axis", n, -1), get[float64](r, "load_value", n, -1), get[int32](r, "n_loads", n)
	if r.err != nil {
		return 0, nil, r.err
	}
	if len(iters) == 1 {
		settings.Iterations = int(iters[0])
	}
	maxF, maxL := r.arrays["fixed_node"].Shape[1], r.arrays["load_node"].Shape[1]
	if len(fa) != n*maxF || len(la) != n*maxL || len(lv) != n*maxL {
		return 0, nil, fmt.Errorf("%s: support and load arrays disagree in shape", r.path)
	}
	ds := make([]Design, n)
	pix := ex * ey
	for i := range ds {
		p := settings
		p.VolFrac = vf[i]
		if nf[i] < 0 || int(nf[i]) > maxF || nl[i] < 0 || int(nl[i]) > maxL {
			return 0, nil, fmt.Errorf("%s: design %d: bad support or load count", r.path, i)
		}
		for k := range int(nf[i]) {
			p.Fixed = append(p.Fixed, Fixed{Node: int(fn[i*maxF+k]), Axis: Axis(fa[i*maxF+k])})
		}
		for k := range int(nl[i]) {
			p.Loads = append(p.Loads, Load{Node: int(ln[i*maxL+k]), Axis: Axis(la[i*maxL+k]), Value: lv[i*maxL+k]})
		}
		if err := p.Validate(); err != nil {
			return 0, nil, fmt.Errorf("%s: design %d: %w", r.path, i, err)
		}
		ds[i] = Design{Index: int(idx[i]), Problem: p, Image: img[i*pix : (i+1)*pix], Compliance: comp[i], ComplianceFirst: comp0[i]}
	}
	return uint64(seed[0]), ds, nil
}
