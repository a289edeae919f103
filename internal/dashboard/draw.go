package dashboard

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"sync"

	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/task/topology"
)

// Tasks whose objects the dashboard draws; the others show as text.
const (
	taskMolecule = "molecule"
	taskTopology = "topology"
)

// canDraw reports whether the objects of a task are drawn as pictures.
func canDraw(task string) bool { return task == taskMolecule || task == taskTopology }

const (
	moleculePixels = 240 // side of an RDKit depiction
	designScale    = 5   // pixels per design pixel
)

// drawMu serialises the drawings: they are rare and small, and RDKit's
// drawing code is not documented as thread-safe.
var drawMu sync.Mutex

// drawObject returns a PNG of an object of the task: a molecule's RDKit
// depiction, a topology design's pixels (material black).
func drawObject(task, object string) ([]byte, error) {
	drawMu.Lock()
	defer drawMu.Unlock()
	switch task {
	case taskMolecule:
		m, err := chem.Smiles(object)
		if err != nil {
			return nil, fmt.Errorf("draw molecule %q: %w", object, err)
		}
		defer m.Close()
		return m.DrawPNG(moleculePixels, moleculePixels)
	case taskTopology:
		d, err := topology.ParseKey(object)
		if err != nil {
			return nil, fmt.Errorf("draw design: %w", err)
		}
		side := topology.Side * designScale
		img := image.NewGray(image.Rect(0, 0, side, side))
		for y := range side {
			for x := range side {
				img.Pix[y*side+x] = 255 * (1 - d[(y/designScale)*topology.Side+x/designScale])
			}
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			return nil, fmt.Errorf("draw design: %w", err)
		}
		return buf.Bytes(), nil
	}
	return nil, fmt.Errorf("task %q has no pictures", task)
}
