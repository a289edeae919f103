package objectives

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/chem"
)

type fixtureMol struct {
	Smiles      string                `json:"smiles"`
	QEDProps    []float64             `json:"qed_props"`
	Bertz       float64               `json:"bertz"`
	Descriptors map[string]float64    `json:"descriptors"`
	FPs         map[string][][2]int64 `json:"fps"`
	PHCO        []int                 `json:"phco"`
	Scores      map[string]float64    `json:"scores"`
}

type fixtureFile struct {
	RDKit     string            `json:"rdkit"`
	Targets   map[string]string `json:"targets"`
	PHCOSize  int               `json:"phco_size"`
	Molecules []fixtureMol      `json:"molecules"`
}

func readFixtures(t *testing.T, path string) fixtureFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = z
	}
	var ff fixtureFile
	if err := json.NewDecoder(r).Decode(&ff); err != nil {
		t.Fatal(err)
	}
	return ff
}

const relTol = 1e-9

func close(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= relTol*math.Max(math.Abs(a), math.Abs(b))
}

func TestFixtures(t *testing.T) {
	ff := readFixtures(t, filepath.Join("..", "..", "..", "..", "testdata", "objectives", "fixtures.json.gz"))
	if len(ff.Molecules) < 100 {
		t.Fatalf("only %d fixture molecules", len(ff.Molecules))
	}
	checkFixtures(t, ff, true)
	// The Go definitions name the same target strings as the generator.
	known := map[string]bool{}
	for _, s := range ff.Targets {
		known[s] = true
	}
	for _, n := range Names() {
		o, _ := Lookup(n)
		for _, s := range o.Targets {
			if !known[s] {
				t.Errorf("%s: target %s is not among the fixtures' targets", n, s)
			}
		}
	}
}

// TestHeldout compares with fixtures made on other molecules:
// make_fixtures.py ZINC /tmp/heldout.json.gz --seed 7 --skip 2500 --n 300 --no-extra, then
// TLBO_OBJECTIVES_HELDOUT=/tmp/heldout.json.gz go test -run TestHeldout.
func TestHeldout(t *testing.T) {
	path := os.Getenv("TLBO_OBJECTIVES_HELDOUT")
	if path == "" {
		t.Skip("TLBO_OBJECTIVES_HELDOUT not set")
	}
	checkFixtures(t, readFixtures(t, path), true)
}

func checkFixtures(t *testing.T, ff fixtureFile, internals bool) {
	if f, err := gobbiFactory(); err != nil || f.size != ff.PHCOSize {
		t.Fatalf("Gobbi signature size %v (err %v), want %d", f.size, err, ff.PHCOSize)
	}
	names := Names()
	if len(names) != 20 {
		t.Errorf("%d objectives: %v", len(names), names)
	}
	worst := map[string]float64{}
	nonzero := map[string]int{}
	for _, fm := range ff.Molecules {
		m, err := chem.Smiles(fm.Smiles)
		if err != nil {
			t.Errorf("%s: %v", fm.Smiles, err)
			continue
		}
		if internals {
			checkInternals(t, m, fm)
		}
		for name, want := range fm.Scores {
			o, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := o.ScoreMol(m)
			if err != nil {
				t.Errorf("%s %s: %v", name, fm.Smiles, err)
				continue
			}
			if !close(got, want) {
				t.Errorf("%s %s: %.17g, want %.17g", name, fm.Smiles, got, want)
			}
			if _, ok := worst[name]; !ok {
				worst[name] = 0
			}
			if want != 0 {
				nonzero[name]++
				worst[name] = math.Max(worst[name], math.Abs(got-want)/math.Abs(want))
			}
		}
		m.Close()
	}
	for _, n := range names {
		if _, ok := worst[n]; !ok {
			t.Errorf("objective %s has no fixture", n)
		}
	}
	t.Logf("%d molecules; worst relative difference per objective: %v; non-zero scores: %v", len(ff.Molecules), worst, nonzero)
}

func checkInternals(t *testing.T, m *chem.Mol, fm fixtureMol) {
	t.Helper()
	p, err := QEDProps(m)
	if err != nil {
		t.Errorf("%s: QED properties: %v", fm.Smiles, err)
		return
	}
	got := p.values()
	for i, want := range fm.QEDProps {
		if !close(got[i], want) {
			t.Errorf("%s: QED property %d: %v, want %v", fm.Smiles, i, got[i], want)
		}
	}
	b, err := BertzCT(m)
	if err != nil || !close(b, fm.Bertz) {
		t.Errorf("%s: BertzCT %v (%v), want %v", fm.Smiles, b, err, fm.Bertz)
	}
	for name, want := range fm.Descriptors {
		var v float64
		var err error
		if name == "num_atoms_h" {
			v, err = numAtoms(m)
		} else {
			v, err = m.Descriptor(name)
		}
		if err != nil || !close(v, want) {
			t.Errorf("%s: %s %v (%v), want %v", fm.Smiles, name, v, err, want)
		}
	}
	for kind, want := range fm.FPs {
		fp, _, err := Fingerprint(m, kind)
		if err != nil {
			t.Errorf("%s: %s: %v", fm.Smiles, kind, err)
			continue
		}
		if len(fp.IDs) != len(want) {
			t.Errorf("%s: %s: %d ids, want %d", fm.Smiles, kind, len(fp.IDs), len(want))
			continue
		}
		for i, w := range want {
			if int64(fp.IDs[i]) != w[0] || int64(fp.Counts[i]) != w[1] {
				t.Errorf("%s: %s: entry %d (%d, %d), want %v", fm.Smiles, kind, i, fp.IDs[i], fp.Counts[i], w)
				break
			}
		}
	}
	bits, err := Gobbi2D(m)
	if err != nil || !equalInts(bits, fm.PHCO) {
		t.Errorf("%s: PHCO bits %v (%v), want %v", fm.Smiles, bits, err, fm.PHCO)
	}
}

func TestTargetsScoreOne(t *testing.T) {
	for _, name := range []string{"celecoxib_rediscovery", "troglitazone_rediscovery", "thiothixene_rediscovery",
		"albuterol_similarity", "mestranol_similarity"} {
		o, _ := Lookup(name)
		v, err := o.Score(o.Targets[0])
		if err != nil || v != 1 {
			t.Errorf("%s of its target: %v (%v), want 1", name, v, err)
		}
	}
}

func TestInvalid(t *testing.T) {
	o, _ := Lookup("qed")
	for _, s := range []string{"", "C1CC", "c1cccc1", "not a smiles", "C(C)(C)(C)(C)C"} {
		if _, err := o.Score(s); err == nil {
			t.Errorf("%q scored", s)
		}
	}
	if _, err := Lookup("nope"); err == nil {
		t.Error("unknown objective found")
	}
}

func TestParseFormula(t *testing.T) {
	got, err := ParseFormula("C9H10N2O2PF2Cl")
	want := []ElementCount{{"C", 9}, {"H", 10}, {"N", 2}, {"O", 2}, {"P", 1}, {"F", 2}, {"Cl", 1}}
	if err != nil || len(got) != len(want) {
		t.Fatalf("%v %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %v, want %v", i, got[i], want[i])
		}
	}
}

// TestConcurrent scores from several goroutines at once (shared SMARTS queries
// and target fingerprints).
func TestConcurrent(t *testing.T) {
	smiles := []string{"CC(C)(C)c1ccc2occ(CC(=O)Nc3ccccc3F)c2c1", "COc1ccc2[C@H]3CC[C@@]4(C)[C@@H](CC[C@@]4(O)C#C)[C@@H]3CCc2c1",
		"CCCOc1cc2ncnc(Nc3ccc4ncsc4c3)c2cc1S(=O)(=O)C(C)(C)C"}
	want := map[string]float64{}
	for _, n := range Names() {
		o, _ := Lookup(n)
		for _, s := range smiles {
			v, err := o.Score(s)
			if err != nil {
				t.Fatal(err)
			}
			want[n+" "+s] = v
		}
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rep := 0; rep < 3; rep++ {
				for _, n := range Names() {
					o, _ := Lookup(n)
					for _, s := range smiles {
						v, err := o.Score(s)
						if err != nil || v != want[n+" "+s] {
							t.Errorf("%s %s: %v (%v), want %v", n, s, v, err, want[n+" "+s])
						}
					}
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkObjectives times each objective on ZINC-like molecules
// (go test -bench . -run XXX ./internal/task/molecule/objectives).
func BenchmarkObjectives(b *testing.B) {
	smiles := []string{"CC(C)(C)c1ccc2occ(CC(=O)Nc3ccccc3F)c2c1", "C[C@@H]1CC(Nc2cncc(-c3nncn3C)c2)C[C@@H](C)C1",
		"N#Cc1ccc(-c2ccc(O[C@@H](C(=O)N3CCCC3)c3ccccc3)cc2)cc1"}
	for _, n := range Names() {
		o, _ := Lookup(n)
		b.Run(n, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := o.Score(smiles[i%len(smiles)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
