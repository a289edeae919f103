package main

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/tlbo-native/tlbo-native/internal/analysis"
	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// plotCommand overlays the best-score curves of several runs; the tasks add
// their own pictures as subcommands (plot latent-map).
func plotCommand() *cli.Command {
	return &cli.Command{
		Name:      "plot",
		Usage:     "plot the best score (or the top-10 mean) against the number of distinct evaluations (oracle calls) of one or more runs",
		ArgsUsage: "RUN_DIR...",
		Description: "The x-axis counts distinct evaluations: 0 is the labelled start, 1 the first object\n" +
			"evaluated; a repeat of an object already evaluated in the run, a score known from the data and\n" +
			"an invalid decode add no point. Runs whose configurations differ only in the seed are drawn as\n" +
			"one curve, their mean over the length of the run with fewest distinct evaluations, with a band\n" +
			"of one standard deviation; the legend names the settings that differ and counts the runs and\n" +
			"seeds (from the runs' configurations), in the corner where it hides least of the curves. Runs\n" +
			"of different tasks or directions (maximised, minimised) are refused.\n\n" +
			"--metric top10 draws the PMO benchmark's curve instead: the mean of the 10 best scores so far (of\n" +
			"all while fewer) against oracle calls, counted as analyze pmo counts them: a run's initial calls\n" +
			"(optimize --initial), then its distinct evaluations; x = 1 is the first call. Maximised runs only.\n\n" +
			"--label names the curves instead, one --label per curve in the order of their first runs among\n" +
			"RUN_DIR... (runs that differ only in the seed make one curve).",
		Flags: []cli.Flag{
			// Not Required: urfave would demand it of the subcommands too.
			&cli.StringFlag{Name: "out", Usage: "output PNG file (required)"},
			&cli.StringFlag{Name: "title", Usage: "plot title"},
			&cli.StringFlag{Name: "metric", Value: "best", Usage: "best (the best score) or top10 (the top-10 mean against oracle calls, PMO's)"},
			&cli.StringSliceFlag{Name: "label", Usage: "legend entry of a curve, one per curve in the order of their first runs (default: the settings that differ)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return fmt.Errorf("plot: no run directories given")
			}
			if c.String("out") == "" {
				return fmt.Errorf("plot: --out is required")
			}
			var curves []bo.Curve
			for _, dir := range c.Args().Slice() {
				cv, err := bo.ReadCurve(dir)
				if err != nil {
					return fmt.Errorf("plot: run %s: %w", dir, err)
				}
				curves = append(curves, cv)
			}
			if err := bo.CheckAxis(curves); err != nil {
				return fmt.Errorf("plot: %w", err)
			}
			switch c.String("metric") {
			case "best":
				groups, err := labelledGroups(curves, c.StringSlice("label"))
				if err != nil {
					return err
				}
				if err := writeBestPlot(c.String("out"), c.String("title"), groups); err != nil {
					return err
				}
				for _, g := range groups {
					var distinct, queries, known []int
					for _, r := range g.Runs {
						distinct, queries, known = append(distinct, r.Distinct()), append(queries, r.Queries), append(known, r.Known)
					}
					last := len(g.Mean) - 1
					fmt.Printf("%s: %s, %s distinct evaluations of %s queries (%s repeats avoided), best after %d: %.4g ± %.2g\n",
						label(g), g.Count(), span(distinct), span(queries), span(known), last, g.Mean[last], g.Std[last])
				}
			case "top10":
				if err := plotTopK(c.String("out"), c.String("title"), curves, 10, c.StringSlice("label")); err != nil {
					return err
				}
			default:
				return fmt.Errorf("plot: --metric %q: want best or top10", c.String("metric"))
			}
			fmt.Printf("plot %s\n", c.String("out"))
			return nil
		},
	}
}

// labelledGroups groups the curves (bo.GroupCurves) and, when names are
// given, names the groups with them in order: one name per group.
func labelledGroups(curves []bo.Curve, names []string) ([]bo.Group, error) {
	groups := bo.GroupCurves(curves)
	if len(names) == 0 {
		return groups, nil
	}
	if len(names) != len(groups) {
		var have []string
		for _, g := range groups {
			have = append(have, fmt.Sprintf("%q (%s)", label(g), g.Count()))
		}
		return nil, fmt.Errorf("plot: %d --label for %d curves: %s", len(names), len(groups), strings.Join(have, ", "))
	}
	for i := range groups {
		groups[i].Label = names[i]
	}
	return groups, nil
}

// label returns a group's legend entry.
func label(g bo.Group) string {
	if g.Label == "" {
		return filepath.Base(g.Runs[0].Dir)
	}
	return g.Label
}

// span returns "n" when every value is n, else "min-max".
func span(v []int) string {
	lo, hi := slices.Min(v), slices.Max(v)
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// axes name a plot's axes: the x label, the y label (and the one of
// minimised runs), and the x of a curve's first point.
type axes struct {
	x, y, yMin string
	x0         float64
}

// bestAxes are those of the best score against distinct evaluations.
var bestAxes = axes{x: "distinct evaluations (0: the labelled start)", y: "best score", yMin: "best score (lower is better)"}

// plotTopK draws the mean of the k best scores against oracle calls (the
// runs' initial calls, then their distinct evaluations), a curve per group
// of runs as the best-score plot (named by names when given), and prints a
// line per group.
func plotTopK(path, title string, curves []bo.Curve, k int, names []string) error {
	for i, c := range curves {
		if !c.Maximize {
			return fmt.Errorf("plot: --metric top%d: %s minimises its objective; the top-k mean is for maximised scores", k, c.Dir)
		}
		calls := c.OracleCalls()
		if len(calls) == 0 {
			return fmt.Errorf("plot: --metric top%d: %s has no oracle calls yet", k, c.Dir)
		}
		scores := make([]float64, len(calls))
		for j, e := range calls {
			scores[j] = e.Score
		}
		// GroupCurves averages Best across a group's runs: here it holds the
		// top-k curve, element j after j+1 calls.
		curves[i].Best = analysis.TopKCurve(scores, k)
	}
	groups, err := labelledGroups(curves, names)
	if err != nil {
		return err
	}
	ax := axes{x: "oracle calls (initial calls, then distinct evaluations)", y: fmt.Sprintf("mean of the top %d scores", k), x0: 1}
	if err := writeCurvePlot(path, title, groups, ax); err != nil {
		return err
	}
	for _, g := range groups {
		var calls, initial []int
		for _, r := range g.Runs {
			calls, initial = append(calls, len(r.Best)), append(initial, len(r.Initial))
		}
		last := len(g.Mean) - 1
		fmt.Printf("%s: %s, %s oracle calls (%s initial), top-%d mean after %d: %.4g ± %.2g\n",
			label(g), g.Count(), span(calls), span(initial), k, last+1, g.Mean[last], g.Std[last])
	}
	return nil
}

// writeBestPlot draws the groups' mean best score (with a ±1 standard
// deviation band for groups of several runs) against the number of
// distinct evaluations and writes a PNG to path atomically.
func writeBestPlot(path, title string, groups []bo.Group) error {
	return writeCurvePlot(path, title, groups, bestAxes)
}

// writeCurvePlot draws the groups' mean curve (with a ±1 standard deviation
// band for groups of several runs) on the axes ax and writes a PNG to path
// atomically.
func writeCurvePlot(path, title string, groups []bo.Group, ax axes) error {
	p, err := curvePlot(title, groups, ax)
	if err != nil {
		return err
	}
	w, err := p.WriterTo(curvePlotWidth, curvePlotHeight, strings.TrimPrefix(filepath.Ext(path), "."))
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return numpy.AtomicWriteFile(path, func(out io.Writer) error {
		_, err := w.WriteTo(out)
		return err
	})
}

// The size of writeCurvePlot's image.
const curvePlotWidth, curvePlotHeight = 7 * vg.Inch, 4.5 * vg.Inch

// curvePlot builds writeCurvePlot's plot, its legend in the corner where it
// hides least of the curves.
func curvePlot(title string, groups []bo.Group, ax axes) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = ax.x
	p.X.Tick.Marker = countTicks
	p.Y.Label.Text = ax.y
	maximize := len(groups) == 0 || len(groups[0].Runs) == 0 || groups[0].Runs[0].Maximize
	if !maximize {
		p.Y.Label.Text = ax.yMin
	}
	groups, scale := displayGroups(groups)
	if scale != 1 {
		p.Y.Label.Text += fmt.Sprintf(" (in units of %.0e)", scale)
	}
	p.Add(plotter.NewGrid())
	for i, g := range groups {
		col := plotutil.Color(i)
		if len(g.Runs) > 1 {
			band, err := stdBand(g, col, ax.x0)
			if err != nil {
				return nil, fmt.Errorf("plot: %w", err)
			}
			p.Add(band)
		}
		line, err := plotter.NewLine(meanXYs(g, ax.x0))
		if err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
		line.Color = col
		line.Width = vg.Points(1.5)
		p.Add(line)
		name := label(g)
		if len(g.Runs) > 1 {
			name = fmt.Sprintf("%s (%s)", name, g.Count())
		}
		p.Legend.Add(name, line)
	}
	p.Legend.Top, p.Legend.Left = legendCorner(p, curvePlotWidth, curvePlotHeight, groups, ax.x0, maximize)
	return p, nil
}

// maxDrawn is the largest magnitude curvePlot draws as it is: gonum/plot's
// axis arithmetic (the range hi - lo, the ticks) overflows near
// MaxFloat64 (a panic, "illegal range", or a loop without end).
const maxDrawn = 1e300

// displayGroups returns the groups as curvePlot draws them, and the power
// of ten their scores are divided by: 1 when every mean ± std is within
// ±maxDrawn, else the power of ten of the largest (a program's -1e308
// "failed" score as the best of a minimised run), so that the axis spans
// about ±10 in those units.
func displayGroups(groups []bo.Group) ([]bo.Group, float64) {
	big := 0.0
	for _, g := range groups {
		for i, m := range g.Mean {
			if !math.IsNaN(m) { // no best yet (meanXYs)
				big = math.Max(big, math.Abs(m)+g.Std[i]) // +Inf past MaxFloat64
			}
		}
	}
	if big <= maxDrawn {
		return groups, 1
	}
	scale := math.Pow(10, math.Floor(math.Log10(math.Min(big, math.MaxFloat64))))
	out := make([]bo.Group, len(groups))
	for k, g := range groups {
		out[k] = g
		out[k].Mean, out[k].Std = make([]float64, len(g.Mean)), make([]float64, len(g.Std))
		for i := range g.Mean {
			out[k].Mean[i], out[k].Std[i] = g.Mean[i]/scale, g.Std[i]/scale
		}
	}
	return out, scale
}

// legendCorner returns the corner of the data area where the legend of p,
// drawn on a width x height image, covers least of the groups' curves: the
// length of mean line under it, plus a quarter of the band area (in lengths
// of the legend's height), as text stays readable over a pale band but not
// over a line. Ties go to the corner that best-score curves usually leave
// empty: the bottom right when they rise (maximising), the top right when
// they fall, then the other empty corner (top left, bottom left).
func legendCorner(p *plot.Plot, width, height vg.Length, groups []bo.Group, x0 float64, maximize bool) (top, left bool) {
	c := draw.New(vgimg.New(width, height))
	data := p.DataCanvas(c)
	tx, ty := p.Transforms(&data)
	size := p.Legend.Rectangle(data).Size()
	corners := [][2]bool{{false, false}, {true, true}, {true, false}, {false, true}}
	if !maximize {
		corners = [][2]bool{{true, false}, {false, true}, {false, false}, {true, true}}
	}
	best := math.Inf(1)
	for _, cn := range corners {
		r := vg.Rectangle{Min: data.Min, Max: data.Max}
		if cn[0] {
			r.Min.Y = r.Max.Y - size.Y
		} else {
			r.Max.Y = r.Min.Y + size.Y
		}
		if cn[1] {
			r.Max.X = r.Min.X + size.X
		} else {
			r.Min.X = r.Max.X - size.X
		}
		if cost := curveCover(r, groups, x0, tx, ty); cost < best {
			best, top, left = cost, cn[0], cn[1]
		}
	}
	return top, left
}

// curveCover measures how much of the groups' curves, mapped to the canvas
// by tx and ty, the rectangle r covers (see legendCorner).
func curveCover(r vg.Rectangle, groups []bo.Group, x0 float64, tx, ty func(float64) vg.Length) float64 {
	var line, band float64
	for _, g := range groups {
		for i := 0; i+1 < len(g.Mean); i++ {
			xa, xb := tx(x0+float64(i)), tx(x0+float64(i+1))
			ya, yb := ty(g.Mean[i]), ty(g.Mean[i+1])
			w, h := overlap(xa, xb, r.Min.X, r.Max.X), overlap(min(ya, yb), max(ya, yb), r.Min.Y, r.Max.Y)
			if w >= 0 && h >= 0 {
				line += float64(w + h)
			}
			if len(g.Runs) > 1 {
				lo := ty(min(g.Mean[i]-g.Std[i], g.Mean[i+1]-g.Std[i+1]))
				hi := ty(max(g.Mean[i]+g.Std[i], g.Mean[i+1]+g.Std[i+1]))
				if h := overlap(lo, hi, r.Min.Y, r.Max.Y); w > 0 && h > 0 {
					band += float64(w * h)
				}
			}
		}
	}
	return line + band/4/float64(r.Size().Y)
}

// overlap is the length of the intersection of the intervals [a, b] and
// [lo, hi], negative when they are disjoint.
func overlap(a, b, lo, hi vg.Length) vg.Length {
	return min(b, hi) - max(a, lo)
}

// countTicks are gonum/plot's default ticks labelled as the counts they are
// ("250", not "250.00").
var countTicks = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
})

func meanXYs(g bo.Group, x0 float64) plotter.XYs {
	xy := make(plotter.XYs, 0, len(g.Mean))
	for i, m := range g.Mean {
		if !math.IsNaN(m) { // no best yet: every evaluation so far failed
			xy = append(xy, plotter.XY{X: x0 + float64(i), Y: m})
		}
	}
	return xy
}

// stdBand is the polygon between mean - std and mean + std.
func stdBand(g bo.Group, col color.Color, x0 float64) (*plotter.Polygon, error) {
	n := len(g.Mean)
	xy := make(plotter.XYs, 0, 2*n)
	for i := 0; i < n; i++ {
		if !math.IsNaN(g.Mean[i]) { // no best yet in a run (meanXYs)
			xy = append(xy, plotter.XY{X: x0 + float64(i), Y: g.Mean[i] + g.Std[i]})
		}
	}
	for i := n - 1; i >= 0; i-- {
		if !math.IsNaN(g.Mean[i]) {
			xy = append(xy, plotter.XY{X: x0 + float64(i), Y: g.Mean[i] - g.Std[i]})
		}
	}
	poly, err := plotter.NewPolygon(xy)
	if err != nil {
		return nil, err
	}
	r, gg, b, _ := col.RGBA()
	poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(gg >> 8), B: uint8(b >> 8), A: 60}
	poly.LineStyle.Width = 0
	return poly, nil
}
