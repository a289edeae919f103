package task

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// WriteLines writes one object per line, an empty line for an invalid one
// (valid[i] false), atomically: the decode verb's text format.
func WriteLines(path string, lines []string, valid []bool) error {
	var b strings.Builder
	for i, l := range lines {
		if valid[i] {
			b.WriteString(l)
		}
		b.WriteByte('\n')
	}
	return numpy.AtomicWriteFile(path, func(w io.Writer) error {
		_, err := io.WriteString(w, b.String())
		return err
	})
}

// WriteTiles lays plots out in rows of cols tiles of side size and writes a
// PNG atomically (the tasks' pictures of their best objects).
func WriteTiles(path string, plots []*plot.Plot, cols int, size vg.Length) error {
	rows := (len(plots) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
		copy(grid[r], plots[r*cols:min(len(plots), (r+1)*cols)])
	}
	c := vgimg.New(size*vg.Length(cols), size*vg.Length(rows))
	canvases := plot.Align(grid, draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter, PadY: vg.Millimeter}, draw.New(c))
	for r := range grid {
		for i, p := range grid[r] {
			if p != nil {
				p.Draw(canvases[r][i])
			}
		}
	}
	return numpy.AtomicWriteFile(path, func(w io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
		return err
	})
}

// FileDigest returns the hex SHA-256 of a file's bytes: how runs and caches
// recognise a checkpoint or a data set file.
func FileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("digest %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
