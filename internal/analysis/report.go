package analysis

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// File names of the reports, inside the output directory.
const (
	GPLogLikBase  = "gp_loglik"
	DistancesBase = "latent_distances"
)

// Report is the output of an analysis over several latent spaces (one per
// VAE): Names label them, Notes are lines of the text table's header (the
// protocol's settings).
type Report struct {
	Names []string
	Notes []string
}

// WriteGPLogLik writes dir/gp_loglik.txt (the table), .npz (names,
// mean, std, loglik and rmse per split, the standardised_ mean, std and
// loglik, points, dim) and .png (each VAE's
// per-split values and mean ± std) for results[i] of rep.Names[i], and
// returns the paths.
func WriteGPLogLik(dir string, rep Report, results []GPResult) ([]string, error) {
	if err := rep.check(len(results)); err != nil {
		return nil, err
	}
	base := filepath.Join(dir, GPLogLikBase)
	var b bytes.Buffer
	writeNotes(&b, rep.Notes)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "vae\tpoints\tdim\ttrain/test\tloglik mean\tstd\tstandardised mean\tstd\tper split\tstandardised per split\trmse per split")
	for i, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d/%d\t%.4f\t%.4f\t%.4f\t%.4f\t%s\t%s\t%s\n", rep.Names[i], r.Points, r.Dim, r.Train, r.Test,
			r.Mean, r.Std, r.StandardisedMean, r.StandardisedStd, join(r.LogLik, "%.4f"), join(r.Standardised, "%.4f"), join(r.RMSE, "%.4g"))
	}
	tw.Flush()
	k, s := len(results), len(results[0].LogLik)
	mean, std := make([]float64, k), make([]float64, k)
	smean, sstd := make([]float64, k), make([]float64, k)
	ll, sll, rmse := make([]float64, 0, k*s), make([]float64, 0, k*s), make([]float64, 0, k*s)
	points, dim := make([]int64, k), make([]int64, k)
	for i, r := range results {
		if len(r.LogLik) != s || len(r.RMSE) != s || len(r.Standardised) != s {
			return nil, fmt.Errorf("analysis: result %d has %d splits (%d RMSE, %d standardised), result 0 has %d",
				i, len(r.LogLik), len(r.RMSE), len(r.Standardised), s)
		}
		mean[i], std[i], points[i], dim[i] = r.Mean, r.Std, int64(r.Points), int64(r.Dim)
		smean[i], sstd[i] = r.StandardisedMean, r.StandardisedStd
		ll, sll, rmse = append(ll, r.LogLik...), append(sll, r.Standardised...), append(rmse, r.RMSE...)
	}
	arrays := []numpy.Array{
		{Name: "names", Shape: []int{k}, Data: append([]string(nil), rep.Names...)},
		{Name: "mean", Shape: []int{k}, Data: mean}, {Name: "std", Shape: []int{k}, Data: std},
		{Name: "loglik", Shape: []int{k, s}, Data: ll}, {Name: "rmse", Shape: []int{k, s}, Data: rmse},
		{Name: "standardised_mean", Shape: []int{k}, Data: smean}, {Name: "standardised_std", Shape: []int{k}, Data: sstd},
		{Name: "standardised_loglik", Shape: []int{k, s}, Data: sll},
		{Name: "points", Shape: []int{k}, Data: points}, {Name: "dim", Shape: []int{k}, Data: dim},
	}
	p, err := gpPlot(rep.Names, results)
	if err != nil {
		return nil, err
	}
	return writeAll(base, b.Bytes(), arrays, func(w io.Writer) error { return writePlot(w, p, 1+1.2*float64(k)) })
}

// WriteDistances writes dir/latent_distances.txt (the table), .npz (names,
// median, group sizes, pairs, sampled, mean, std, edges and densities:
// VAE x group x bin, groups in GroupNames order) and .png (one panel per
// VAE) and returns the paths.
func WriteDistances(dir string, rep Report, results []DistanceResult) ([]string, error) {
	if err := rep.check(len(results)); err != nil {
		return nil, err
	}
	base := filepath.Join(dir, DistancesBase)
	var b bytes.Buffer
	writeNotes(&b, rep.Notes)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "vae\tmedian score\thigh/low\tgroup\tpairs\tmean distance\tstd")
	k, bins := len(results), len(results[0].Edges)-1
	median, sizes := make([]float64, k), make([]int64, 0, 2*k)
	pairs, sampled := make([]int64, 0, 3*k), make([]bool, 0, 3*k)
	mean, std := make([]float64, 0, 3*k), make([]float64, 0, 3*k)
	edges, dens := make([]float64, 0, k*(bins+1)), make([]float64, 0, 3*k*bins)
	for i, r := range results {
		if len(r.Edges) != bins+1 {
			return nil, fmt.Errorf("analysis: result %d has %d bins, result 0 has %d", i, len(r.Edges)-1, bins)
		}
		for g, name := range GroupNames {
			how := "all"
			if r.Sampled[g] {
				how = "sampled"
			}
			fmt.Fprintf(tw, "%s\t%.6g\t%d/%d\t%s\t%d (%s)\t%.4f\t%.4f\n", rep.Names[i], r.Median, r.High, r.Low, name, r.Pairs[g], how, r.Mean[g], r.Std[g])
			pairs, sampled = append(pairs, int64(r.Pairs[g])), append(sampled, r.Sampled[g])
			mean, std = append(mean, r.Mean[g]), append(std, r.Std[g])
			dens = append(dens, r.Density[g]...)
		}
		median[i] = r.Median
		sizes = append(sizes, int64(r.High), int64(r.Low))
		edges = append(edges, r.Edges...)
	}
	tw.Flush()
	arrays := []numpy.Array{
		{Name: "names", Shape: []int{k}, Data: append([]string(nil), rep.Names...)},
		{Name: "groups", Shape: []int{3}, Data: GroupNames[:]},
		{Name: "median", Shape: []int{k}, Data: median}, {Name: "high_low", Shape: []int{k, 2}, Data: sizes},
		{Name: "pairs", Shape: []int{k, 3}, Data: pairs}, {Name: "sampled", Shape: []int{k, 3}, Data: sampled},
		{Name: "mean", Shape: []int{k, 3}, Data: mean}, {Name: "std", Shape: []int{k, 3}, Data: std},
		{Name: "edges", Shape: []int{k, bins + 1}, Data: edges}, {Name: "density", Shape: []int{k, 3, bins}, Data: dens},
	}
	return writeAll(base, b.Bytes(), arrays, func(w io.Writer) error { return distancePanels(w, rep.Names, results) })
}

func (rep Report) check(n int) error {
	if n == 0 || len(rep.Names) != n {
		return fmt.Errorf("analysis: %d names for %d results, want the same positive number", len(rep.Names), n)
	}
	return nil
}

func writeNotes(w io.Writer, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(w, "# %s\n", n)
	}
}

func join(v []float64, format string) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(parts, " ")
}

// writeAll writes base.txt, base.npz and base.png atomically.
func writeAll(base string, text []byte, arrays []numpy.Array, png func(io.Writer) error) ([]string, error) {
	txt, npz, img := base+".txt", base+".npz", base+".png"
	if err := numpy.AtomicWriteFile(txt, func(w io.Writer) error { _, err := w.Write(text); return err }); err != nil {
		return nil, fmt.Errorf("analysis: write %s: %w", txt, err)
	}
	if err := numpy.WriteNPZ(npz, arrays); err != nil {
		return nil, fmt.Errorf("analysis: write %s: %w", npz, err)
	}
	if err := numpy.AtomicWriteFile(img, png); err != nil {
		return nil, fmt.Errorf("analysis: write %s: %w", img, err)
	}
	return []string{txt, npz, img}, nil
}

// gpPlot shows each VAE's per-split log-likelihoods (points) and their mean
// ± std (error bar).
func gpPlot(names []string, results []GPResult) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "GP predictive log-likelihood per held-out point"
	p.Y.Label.Text = "mean log-likelihood on the scores' scale (higher is better)"
	p.Add(plotter.NewGrid())
	means := make(plotter.XYs, len(results))
	errs := make(plotter.YErrors, len(results))
	var splits plotter.XYs
	for i, r := range results {
		means[i] = plotter.XY{X: float64(i), Y: r.Mean}
		errs[i].Low, errs[i].High = r.Std, r.Std
		for s, v := range r.LogLik {
			splits = append(splits, plotter.XY{X: float64(i) + 0.25 + 0.05*float64(s), Y: v})
		}
	}
	bars, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{means, errs})
	if err != nil {
		return nil, fmt.Errorf("analysis: plot: %w", err)
	}
	bars.CapWidth, bars.LineStyle.Width = vg.Points(10), vg.Points(1.5)
	sm, err := plotter.NewScatter(means)
	if err != nil {
		return nil, fmt.Errorf("analysis: plot: %w", err)
	}
	sm.GlyphStyle.Radius, sm.GlyphStyle.Color = vg.Points(4), plotutil.Color(0)
	ss, err := plotter.NewScatter(splits)
	if err != nil {
		return nil, fmt.Errorf("analysis: plot: %w", err)
	}
	ss.GlyphStyle.Radius, ss.GlyphStyle.Color = vg.Points(2), plotutil.Color(1)
	p.Add(bars, sm, ss)
	p.Legend.Add("mean ± std", sm)
	p.Legend.Add("splits", ss)
	p.Legend.Top, p.Legend.Left = true, false
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(results))-0.5
	return p, nil
}

// distancePanels draws one panel per VAE: the three groups' densities as
// step lines on the common bins.
func distancePanels(w io.Writer, names []string, results []DistanceResult) error {
	cols := min(len(results), 3)
	rows := (len(results) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
	}
	for i, res := range results {
		p := plot.New()
		p.Title.Text = names[i]
		p.X.Label.Text = "latent distance"
		p.Y.Label.Text = "density"
		for g, name := range GroupNames {
			line, err := plotter.NewLine(steps(res.Edges, res.Density[g]))
			if err != nil {
				return fmt.Errorf("analysis: plot: %w", err)
			}
			line.Color, line.Width = plotutil.Color(g), vg.Points(1.5)
			p.Add(line)
			p.Legend.Add(name, line)
		}
		p.Legend.Top = true
		grid[i/cols][i%cols] = p
	}
	const tw, th = 4 * vg.Inch, 3.2 * vg.Inch
	img := vgimg.New(vg.Length(cols)*tw, vg.Length(rows)*th)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(grid, tiles, dc)
	for r, row := range grid {
		for c, p := range row {
			if p != nil {
				p.Draw(canvases[r][c])
			}
		}
	}
	_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}

// steps returns the outline of a histogram.
func steps(edges, dens []float64) plotter.XYs {
	xy := make(plotter.XYs, 0, 2*len(dens))
	for b, d := range dens {
		xy = append(xy, plotter.XY{X: edges[b], Y: d}, plotter.XY{X: edges[b+1], Y: d})
	}
	return xy
}

// writePlot renders p as a PNG of the given width in inches.
func writePlot(w io.Writer, p *plot.Plot, widthInches float64) error {
	wt, err := p.WriterTo(vg.Length(max(widthInches, 4))*vg.Inch, 4*vg.Inch, "png")
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// RecoveryBase is the file name of the domain-recovery report.
const RecoveryBase = "domain_recovery"

// RecoveryL is the paper's index of a model version: the number of
// retrainings behind it (the pretrained model, version -1, is l = 0; a BO
// run's version v follows its (v+1)-th retraining, the initial one
// included).
func RecoveryL(version int) int { return version + 1 }

// WriteRecovery writes dir/domain_recovery.txt (p(l) per run and mean ±
// std per method, with the number of runs where fewer have l), .npz (versions, l, runs, methods, seeds, p, carried,
// p_mean_point, drawn, raised per run and version; mean, std, count per
// method and version; NaN or -1 where a run lacks a version) and .png (p(l)
// per method, mean with a ± std band) and returns the paths.
func WriteRecovery(dir string, notes []string, t RecoveryTable) ([]string, error) {
	if len(t.Runs) == 0 || len(t.Versions) == 0 {
		return nil, fmt.Errorf("analysis: no runs or versions to report")
	}
	var b bytes.Buffer
	writeNotes(&b, notes)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	head := make([]string, len(t.Versions))
	for j, v := range t.Versions {
		head[j] = fmt.Sprintf("l=%d", RecoveryL(v))
	}
	fmt.Fprintf(tw, "run\tmethod\tseed\t%s\n", strings.Join(head, "\t"))
	for i, r := range t.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", r.Name, r.Method, r.Seed, strings.Join(cells(t.P[i], nil), "\t"))
	}
	fmt.Fprintf(tw, "\t\t\t\nmethod (mean ± std)\truns\t\t%s\n", strings.Join(head, "\t"))
	for m, name := range t.Methods {
		row, runs := cells(t.Mean[m], t.Std[m]), maxInt(t.Count[m])
		for j, c := range t.Count[m] {
			if c > 0 && c < runs { // a version some runs have not reached
				row[j] += fmt.Sprintf(" (%d)", c)
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t\t%s\n", name, runs, strings.Join(row, "\t"))
	}
	tw.Flush()
	png := func(w io.Writer) error {
		p, err := recoveryPlot(t)
		if err != nil {
			return err
		}
		return writePlot(w, p, 7)
	}
	return writeAll(filepath.Join(dir, RecoveryBase), b.Bytes(), recoveryArrays(t), png)
}

// cells formats values (with ± std when std is given); NaN is "-".
func cells(v, std []float64) []string {
	out := make([]string, len(v))
	for j, x := range v {
		switch {
		case math.IsNaN(x):
			out[j] = "-"
		case std != nil:
			out[j] = fmt.Sprintf("%.2f ± %.2f", x, std[j])
		default:
			out[j] = fmt.Sprintf("%.2f", x)
		}
	}
	return out
}

func maxInt(v []int) int {
	m := 0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// recoveryArrays lays the table out as npz arrays.
func recoveryArrays(t RecoveryTable) []numpy.Array {
	nr, nv, nm := len(t.Runs), len(t.Versions), len(t.Methods)
	versions, ls := make([]int64, nv), make([]int64, nv)
	for j, v := range t.Versions {
		versions[j], ls[j] = int64(v), int64(RecoveryL(v))
	}
	names, methods, seeds := make([]string, nr), make([]string, nr), make([]int64, nr)
	p, carried, atMean := make([]float64, 0, nr*nv), nanFilled(nr*nv), nanFilled(nr*nv)
	drawn, raised := make([]int64, nr*nv), make([]int64, nr*nv)
	for i, r := range t.Runs {
		names[i], methods[i], seeds[i] = r.Name, r.Method, int64(r.Seed) // numpy has no uint64 here; seeds stay below 2^63
		p = append(p, t.P[i]...)
		for j := range nv {
			drawn[i*nv+j], raised[i*nv+j] = -1, -1
		}
		for _, s := range r.Steps {
			k := i*nv + slices.Index(t.Versions, s.Version)
			carried[k], atMean[k], drawn[k], raised[k] = s.Carried, s.AtMean, int64(s.Drawn), 0
			if s.Raised {
				raised[k] = 1
			}
		}
	}
	mean, std, count := make([]float64, 0, nm*nv), make([]float64, 0, nm*nv), make([]int64, 0, nm*nv)
	for m := range t.Methods {
		mean, std = append(mean, t.Mean[m]...), append(std, t.Std[m]...)
		for _, c := range t.Count[m] {
			count = append(count, int64(c))
		}
	}
	return []numpy.Array{
		{Name: "versions", Shape: []int{nv}, Data: versions}, {Name: "l", Shape: []int{nv}, Data: ls},
		{Name: "runs", Shape: []int{nr}, Data: names}, {Name: "run_methods", Shape: []int{nr}, Data: methods},
		{Name: "seeds", Shape: []int{nr}, Data: seeds},
		{Name: "p", Shape: []int{nr, nv}, Data: p}, {Name: "carried", Shape: []int{nr, nv}, Data: carried},
		{Name: "p_mean_point", Shape: []int{nr, nv}, Data: atMean},
		{Name: "drawn", Shape: []int{nr, nv}, Data: drawn}, {Name: "raised", Shape: []int{nr, nv}, Data: raised},
		{Name: "methods", Shape: []int{nm}, Data: append([]string(nil), t.Methods...)},
		{Name: "mean", Shape: []int{nm, nv}, Data: mean}, {Name: "std", Shape: []int{nm, nv}, Data: std},
		{Name: "count", Shape: []int{nm, nv}, Data: count},
	}
}

func nanFilled(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}

// recoveryPlot draws p(l) per method: the mean over its runs as a line
// with points and the band mean ± std (clipped to [0, 1]).
func recoveryPlot(t RecoveryTable) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "domain recovery: p(l) of the target"
	p.X.Label.Text = "l (retrainings; 0: the pretrained model)"
	p.Y.Label.Text = "p(l)"
	p.Y.Min, p.Y.Max = 0, 1.05
	p.Add(plotter.NewGrid())
	for m, name := range t.Methods {
		col := plotutil.Color(m)
		var mean, lo, hi plotter.XYs
		for j, v := range t.Versions {
			if t.Count[m][j] == 0 {
				continue
			}
			x := float64(RecoveryL(v))
			mean = append(mean, plotter.XY{X: x, Y: t.Mean[m][j]})
			lo = append(lo, plotter.XY{X: x, Y: max(0, t.Mean[m][j]-t.Std[m][j])})
			hi = append(hi, plotter.XY{X: x, Y: min(1, t.Mean[m][j]+t.Std[m][j])})
		}
		if len(mean) == 0 {
			continue
		}
		if len(mean) > 1 {
			slices.Reverse(lo)
			band, err := plotter.NewPolygon(append(hi, lo...))
			if err != nil {
				return nil, fmt.Errorf("analysis: plot: %w", err)
			}
			r, g, bl, _ := col.RGBA()
			band.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(bl >> 8), A: 60}
			band.LineStyle.Width = 0
			p.Add(band)
		}
		line, points, err := plotter.NewLinePoints(mean)
		if err != nil {
			return nil, fmt.Errorf("analysis: plot: %w", err)
		}
		line.Color, line.Width, points.Color = col, vg.Points(1.5), col
		p.Add(line, points)
		p.Legend.Add(fmt.Sprintf("%s (%d runs)", name, maxInt(t.Count[m])), line, points)
	}
	p.Legend.Top, p.Legend.Left = false, false
	return p, nil
}
