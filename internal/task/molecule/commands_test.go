package molecule

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/chem"
)

// TestVocabCoverage checks the counts of bench vocab-coverage on the
// built-in sample: its own vocabulary covers every molecule, and one
// without a cluster leaves out the molecules that have it.
func TestVocabCoverage(t *testing.T) {
	chem.SetLogging(false)
	v, err := sampleVocab()
	if err != nil {
		t.Fatal(err)
	}
	smiles := SampleSmiles()
	c := VocabCoverage(v, smiles)
	if c.Molecules != len(smiles) || c.Undecomposable != 0 || c.Exact != len(smiles) || c.Labelled != len(smiles) || len(c.Missing) != 0 {
		t.Errorf("the sample's own vocabulary: %+v, want every molecule covered", c)
	}
	// Without the first cluster (a bond, e.g. C-C, that most molecules have).
	c = VocabCoverage(v[1:], smiles)
	if c.Missing[v[0]] == 0 || c.Labelled != len(smiles)-c.Missing[v[0]] || c.Exact > c.Labelled {
		t.Errorf("without %s: %+v", v[0], c)
	}
}

// TestMeasureCache runs bench cache-measure's measurement on eight
// molecules: everything featurised, a shard on disk, packed examples.
func TestMeasureCache(t *testing.T) {
	chem.SetLogging(false)
	v, err := sampleVocab()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	m, err := MeasureCache(CacheOptions{Dir: dir, DataDigest: "measure", Workers: 2}, NewFeaturiser(v), SampleSmiles()[:8])
	if err != nil {
		t.Fatal(err)
	}
	if m.Molecules != 8 || m.Unfeaturisable != 0 || m.Shards != 1 || m.Disk <= 0 || m.Packed <= 0 {
		t.Errorf("measurement %+v", m)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("cache directory holds %d entries, want one key", len(entries))
	}
	if shards, _ := filepath.Glob(filepath.Join(dir, "*", "shard-*.gob")); len(shards) != 1 {
		t.Errorf("shards %v", shards)
	}
}
