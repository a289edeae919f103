package chem

import "testing"

// TestReassemble: decompose, recover and attach the clusters back along the
// tree; the result is the input without stereo (the authors' decode test).
func TestReassemble(t *testing.T) {
	for _, s := range []string{
		"CC(=O)Oc1ccccc1C(=O)O",
		"O=C1[C@@H]2C=C[C@@H](C=CC2)C1(c1ccccc1)c1ccccc1",
		"Cc1cc(NC(=O)CSc2nnc3c4ccccc4n(C)c3n2)ccc1Br",
		"O=C(N1CCc2c(F)ccc(F)c2C1)C1(O)Cc2ccccc2C1",
	} {
		tr, err := Decompose(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Recover(); err != nil {
			t.Fatal(err)
		}
		got, err := tr.Reassemble()
		tr.Close()
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		m, _ := Smiles(s)
		want, _ := m.SmilesWith(SmilesOptions{Canonical: true})
		m.Close()
		if got != want {
			t.Errorf("%s: reassembled %s, want %s", s, got, want)
		}
	}
}

// TestReassembleFails: a bridged cluster whose label no attachment makes (a
// limit of JT-VAE's assembly) is an error, not a wrong molecule.
func TestReassembleFails(t *testing.T) {
	const s = "CC(C)(C)c1ccc(C(=O)N[C@H]2CCN3CCCc4cccc2c43)cc1"
	tr, err := Decompose(s)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if err := tr.Recover(); err != nil {
		t.Fatal(err)
	}
	if got, err := tr.Reassemble(); err == nil {
		t.Errorf("reassembled %s", got)
	}
}
