package molecule

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/manual"
)

// sdfFields names the data fields of a hand-out's SDF record: ask's CSV
// columns (manual.AskHeader), the object named smiles.
var sdfFields = func() []string {
	f := slices.Clone(manual.AskHeader)
	f[slices.Index(f, "object")] = "smiles"
	return f
}()

// writeHandoutSDF writes base.sdf, the molecules an ask hands out as an SD
// file beside its CSV (task.Spec.Handout), atomically: all records are made
// first, so that a molecule RDKit cannot lay out leaves no file.
func writeHandoutSDF(base string, handed []manual.Proposal) (string, error) {
	path := base + ".sdf"
	var b bytes.Buffer
	if err := writeSDF(&b, handed); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return path, manual.WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b.Bytes())
		return err
	})
}

// writeSDF writes one SD record per proposal, in order: the molecule of
// its SMILES laid out in 2D (chem.MolBlock2D) titled "id N", then its
// row of ask's CSV as data fields (sdfFields; an empty cell, such as the
// start's mean, is left out), then $$$$.
func writeSDF(w io.Writer, handed []manual.Proposal) error {
	for _, p := range handed {
		block, err := molBlock(p.Object)
		if err != nil {
			return fmt.Errorf("id %d: %w", p.ID, err)
		}
		// A molfile's first line is its title (CTfile format).
		_, rest, _ := strings.Cut(block, "\n")
		if _, err := fmt.Fprintf(w, "id %d\n%s\n", p.ID, strings.TrimRight(rest, "\n")); err != nil {
			return err
		}
		for i, v := range p.Row() {
			if v == "" {
				continue
			}
			if _, err := fmt.Fprintf(w, "> <%s>\n%s\n\n", sdfFields[i], v); err != nil {
				return err
			}
		}
		if _, err := io.WriteString(w, "$$$$\n"); err != nil {
			return err
		}
	}
	return nil
}

// molBlock is the 2D molfile of a SMILES.
func molBlock(smiles string) (string, error) {
	m, err := chem.Smiles(smiles)
	if err != nil {
		return "", fmt.Errorf("SMILES %s: %w", strconv.Quote(smiles), err)
	}
	defer m.Close()
	return m.MolBlock2D()
}
