package molecule

import (
	"bytes"
	"fmt"
	"image/png"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// MoleculesPlot is the file name of a run's picture of its best molecules.
const MoleculesPlot = "molecules.png"

const (
	plotColumns = 4
	drawPixels  = 300 // side of each RDKit drawing
)

// plots writes dir/molecules.png: the best molecules drawn by RDKit, each
// titled with its penalised logP and query number.
func plots(env *task.Env, dir string, best []task.Scored[string]) error {
	if len(best) == 0 {
		return nil
	}
	var tiles []*plot.Plot
	for _, s := range best {
		smiles := s.Object
		p, err := moleculeTile(s.Title("%.3f"), smiles)
		if err != nil {
			return fmt.Errorf("molecules plot: %q: %w", smiles, err)
		}
		tiles = append(tiles, p)
	}
	path := filepath.Join(dir, MoleculesPlot)
	if err := task.WriteTiles(path, tiles, min(plotColumns, len(tiles)), 2.5*vg.Inch); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "molecules %s\n", path)
	return nil
}

// moleculeTile is one molecule drawn by RDKit under a title.
func moleculeTile(title, smiles string) (*plot.Plot, error) {
	m, err := chem.Smiles(smiles)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	b, err := m.DrawPNG(drawPixels, drawPixels)
	if err != nil {
		return nil, err
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("RDKit drawing: %w", err)
	}
	p := plot.New()
	p.Title.Text = title
	p.HideAxes()
	p.Add(plotter.NewImage(img, 0, 0, drawPixels, drawPixels))
	return p, nil
}
