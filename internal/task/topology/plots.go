package topology

import (
	"fmt"
	"image"
	"image/color"
	stddraw "image/draw"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/tlbo-native/tlbo-native/internal/task"
	conv "github.com/tlbo-native/tlbo-native/models/topology"
)

// DesignsPlot is the file name of a run's picture of the target and the
// best designs.
const DesignsPlot = "designs.png"

// plotColumns is the width of the grid of designs.png.
const plotColumns = 5

// grayImage draws grey levels v in [0, 1] (rows x cols, row-major, row 0 at
// the top) as an image, 1 (material) black.
func grayImage(v []float32, rows, cols int) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, cols, rows))
	for i, x := range v {
		img.Pix[i] = grayLevel(x)
	}
	return img
}

// grayLevel is the grey of a pixel value in [0, 1]: 1 (material) black.
func grayLevel(x float32) uint8 { return uint8(255 * (1 - min(1, max(0, x)))) }

// designImage draws a design inside a one-pixel grey frame, so that an
// empty design still shows.
func designImage(d Design) *image.Gray {
	const framed = Side + 2
	v := make([]float32, framed*framed)
	for i := range v {
		v[i] = 0.5
	}
	for i, x := range d {
		v[(i/Side+1)*framed+i%Side+1] = float32(x)
	}
	return grayImage(v, framed, framed)
}

// tile is one design in a grid of pictures.
func tile(title string, img image.Image) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.HideAxes()
	p.Add(plotter.NewImage(img, -1, -1, Side+1, Side+1))
	return p
}

// plots writes dir/designs.png: the target, then the best designs found,
// each titled with its similarity and query number.
func plots(env *task.Env, dir string, best []task.Scored[Design]) error {
	obj, err := objective(env)
	if err != nil {
		return err
	}
	tiles := []*plot.Plot{tile("target", designImage(obj.(Objective).Target))}
	for _, s := range best {
		tiles = append(tiles, tile(s.Title("%.4f"), designImage(s.Object)))
	}
	path := filepath.Join(dir, DesignsPlot)
	if err := task.WriteTiles(path, tiles, min(plotColumns, len(tiles)), 2*vg.Inch); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "designs %s\n", path)
	return nil
}

// LatentMap draws the designs decoded (sigmoid, not rounded) from an n x n
// grid over [-box, box]^2 of a 2-d conv VAE's latent space into a PNG at
// path, with z1 across and z2 up.
func LatentMap(m *conv.Model, path string, n int, box float64) error {
	if m.LatentDim() != 2 {
		return fmt.Errorf("latent map: the network has %d latent dimensions, want 2", m.LatentDim())
	}
	if n < 2 || !(box > 0) {
		return fmt.Errorf("latent map: grid %d and box %v: want n >= 2 and box > 0", n, box)
	}
	z := make([]float64, 0, 2*n*n)
	for r := range n { // row 0 at the top: the largest z2
		for c := range n {
			z = append(z, -box+2*box*float64(c)/float64(n-1), box-2*box*float64(r)/float64(n-1))
		}
	}
	probs, err := m.DecodeProbs(z)
	if err != nil {
		return err
	}
	const gap = 4 // pixels between designs, drawn light blue
	pitch := Side + gap
	side := n*pitch - gap
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	stddraw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{R: 200, G: 220, B: 255, A: 255}), image.Point{}, stddraw.Src)
	for k := range n * n {
		r0, c0 := (k/n)*pitch, (k%n)*pitch
		for i, x := range probs[k*Pixels : (k+1)*Pixels] {
			g := grayLevel(x)
			img.Set(c0+i%Side, r0+i/Side, color.RGBA{R: g, G: g, B: g, A: 255})
		}
	}
	// Cell centres sit at the grid's latent points: b latent units per pixel.
	b := 2 * box / float64((n-1)*pitch)
	half := box + b*Side/2
	p := plot.New()
	p.Title.Text = fmt.Sprintf("decoded designs over [-%g, %g]^2", box, box)
	p.X.Label.Text, p.Y.Label.Text = "z1", "z2"
	p.Add(plotter.NewImage(img, -half, -half, half, half))
	return task.WriteTiles(path, []*plot.Plot{p}, 1, 8*vg.Inch)
}
