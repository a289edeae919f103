package main

import (
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// plotCommand overlays the best-score curves of several runs; the tasks add
// their own pictures as subcommands (plot latent-map).
func plotCommand() *cli.Command {
	return &cli.Command{
		Name:      "plot",
		Usage:     "plot the best score against the number of distinct evaluations of one or more runs",
		ArgsUsage: "RUN_DIR...",
		Description: "The x-axis counts distinct evaluations: 0 is the labelled start, 1 the first object\n" +
			"evaluated; a repeat of an object already evaluated in the run, a score known from the data and\n" +
			"an invalid decode add no point. Runs whose configurations differ only in the seed are drawn as\n" +
			"one curve, their mean over the length of the run with fewest distinct evaluations, with a band\n" +
			"of one standard deviation; the legend names the settings that differ and counts the runs and\n" +
			"seeds (from the runs' configurations). Runs of different tasks or directions (maximised,\n" +
			"minimised) are refused.",
		Flags: []cli.Flag{
			// Not Required: urfave would demand it of the subcommands too.
			&cli.StringFlag{Name: "out", Usage: "output PNG file (required)"},
			&cli.StringFlag{Name: "title", Usage: "plot title"},
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
			groups := bo.GroupCurves(curves)
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
			fmt.Printf("plot %s\n", c.String("out"))
			return nil
		},
	}
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

// writeBestPlot draws the groups' mean best score (with a ±1 standard
// deviation band for groups of several runs) against the number of
// distinct evaluations and writes a PNG to path atomically.
func writeBestPlot(path, title string, groups []bo.Group) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "distinct evaluations (0: the labelled start)"
	p.X.Tick.Marker = countTicks
	p.Y.Label.Text = "best score"
	if len(groups) > 0 && len(groups[0].Runs) > 0 && !groups[0].Runs[0].Maximize {
		p.Y.Label.Text = "best score (lower is better)"
	}
	p.Add(plotter.NewGrid())
	for i, g := range groups {
		col := plotutil.Color(i)
		if len(g.Runs) > 1 {
			band, err := stdBand(g, col)
			if err != nil {
				return fmt.Errorf("plot: %w", err)
			}
			p.Add(band)
		}
		line, err := plotter.NewLine(meanXYs(g))
		if err != nil {
			return fmt.Errorf("plot: %w", err)
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
	// Best-score curves fall (minimising) or rise (maximising) from the left:
	// the empty corner is the top right, or the bottom right.
	p.Legend.Top = len(groups) > 0 && len(groups[0].Runs) > 0 && !groups[0].Runs[0].Maximize
	w, err := p.WriterTo(7*vg.Inch, 4.5*vg.Inch, strings.TrimPrefix(filepath.Ext(path), "."))
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return numpy.AtomicWriteFile(path, func(out io.Writer) error {
		_, err := w.WriteTo(out)
		return err
	})
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

func meanXYs(g bo.Group) plotter.XYs {
	xy := make(plotter.XYs, len(g.Mean))
	for i, m := range g.Mean {
		xy[i].X, xy[i].Y = float64(i), m
	}
	return xy
}

// stdBand is the polygon between mean - std and mean + std.
func stdBand(g bo.Group, col color.Color) (*plotter.Polygon, error) {
	n := len(g.Mean)
	xy := make(plotter.XYs, 0, 2*n)
	for i := 0; i < n; i++ {
		xy = append(xy, plotter.XY{X: float64(i), Y: g.Mean[i] + g.Std[i]})
	}
	for i := n - 1; i >= 0; i-- {
		xy = append(xy, plotter.XY{X: float64(i), Y: g.Mean[i] - g.Std[i]})
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
