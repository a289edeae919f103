package jtvae

import (
	"reflect"
	"testing"

	"github.com/tlbo-native/tlbo-native/torch"
)

// TestPack: packed examples unpack to the same values and encode to the
// same means as the unpacked ones, bit for bit; a corrupt packed example is
// an error of Collate, not a panic.
func TestPack(t *testing.T) {
	f := readFixture(t, fixtureDir+"parity.npz")
	ex := f.examples(t)
	packed := make([]Example, len(ex))
	for i := range ex {
		ex[i].Smiles = "molecule"
		var err error
		if packed[i], err = Pack(ex[i]); err != nil {
			t.Fatal(err)
		}
		if packed[i].Packed == nil || packed[i].Tree.Labels != nil || packed[i].Assembly != nil || packed[i].Smiles != "molecule" {
			t.Fatalf("example %d: packed form %+v", i, packed[i].Tree)
		}
		if again, _ := Pack(packed[i]); &again.Packed[0] != &packed[i].Packed[0] {
			t.Errorf("example %d: packing a packed example encoded it again", i)
		}
		back, err := packed[i].Unpack()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Tree, ex[i].Tree) || !reflect.DeepEqual(back.Graph, ex[i].Graph) ||
			len(back.Assembly) != len(ex[i].Assembly) || back.Smiles != ex[i].Smiles {
			t.Errorf("example %d: unpacked example differs", i)
		}
	}
	m := parityModel(t, f, true, 20)
	sc := torch.NewScope()
	defer sc.Close()
	var means [2][]float64
	for k, set := range [][]Example{ex, packed} {
		b := collateFixture(t, m, sc, set)
		torch.NoGrad(func() {
			mu, _ := m.EncodeParams(b)
			means[k] = values(t, mu)
		})
	}
	if !reflect.DeepEqual(means[0], means[1]) {
		t.Error("packed examples encode to other means")
	}
	bad := append([]Example{}, packed...)
	bad[1].Packed = bad[1].Packed[:len(bad[1].Packed)/2]
	if _, err := m.Collate(sc, bad); err == nil {
		t.Error("a truncated packed example collated")
	}
}
