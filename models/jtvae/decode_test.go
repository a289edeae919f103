package jtvae

import (
	"fmt"
	"slices"
	"testing"
)

// recordedChemistry answers as the authors' chemistry did during the
// fixture's decoding (every can_assemble call recorded) with the
// vocabulary's slots; a call they did not make is an error.
type recordedChemistry struct {
	slots   [][]Slot
	answers map[string]bool
	calls   int
}

func newRecordedChemistry(t testing.TB, f fixture) *recordedChemistry {
	t.Helper()
	c := &recordedChemistry{answers: map[string]bool{}}
	ptr, charge, hs := f.ints(t, "slot_ptr"), f.ints(t, "slot_charge"), f.ints(t, "slot_hs")
	sym, _ := f["slot_symbol"].Data.([]string)
	for k := range len(ptr) - 1 {
		var s []Slot
		for i := ptr[k]; i < ptr[k+1]; i++ {
			s = append(s, Slot{Symbol: sym[i], Charge: int(charge[i]), Hs: int(hs[i])})
		}
		c.slots = append(c.slots, s)
	}
	cp, center, nbr, leaf, res := f.ints(t, "call_ptr"), f.ints(t, "call_center"), f.ints(t, "call_nbr"), f.ints(t, "call_leaf"), f.ints(t, "call_result")
	for k := range center {
		l := make([]bool, 0, cp[k+1]-cp[k])
		for _, v := range leaf[cp[k]:cp[k+1]] {
			l = append(l, v == 1)
		}
		c.answers[callKey(center[k], nbr[cp[k]:cp[k+1]], l)] = res[k] == 1
	}
	return c
}

func callKey(center int64, nbrs []int64, leaf []bool) string {
	return fmt.Sprint(center, nbrs, leaf)
}

func (c *recordedChemistry) Slots(label int64) []Slot { return slices.Clone(c.slots[label]) }

func (c *recordedChemistry) CanAssemble(_ int, center int64, nbrs []int64, leaf []bool) (bool, error) {
	c.calls++
	ok, found := c.answers[callKey(center, nbrs, leaf)]
	if !found {
		return false, fmt.Errorf("can_assemble(%d, %v, %v) was not called by the authors' decoder", center, nbrs, leaf)
	}
	return ok, nil
}

// TestDecodeTreesParity: greedy tree decoding of the fixture's latent points
// gives the authors' trees (labels in creation order and adjacency), with
// their chemistry answers replayed.
func TestDecodeTreesParity(t *testing.T) {
	f := readFixture(t, fixtureDir+"parity.npz")
	m := parityModel(t, f, true, 20)
	chem := newRecordedChemistry(t, f)
	zt := f.float32s(t, "dec_z")
	lt := m.cfg.LatentTree
	n := len(zt) / lt
	z := make([]float32, n*m.cfg.Latent) // the graph half is unused
	for i := range n {
		copy(z[i*m.cfg.Latent:], zt[i*lt:(i+1)*lt])
	}
	trees, err := m.DecodeTrees(z, chem, int(f.ints(t, "dec_max_steps")[0]), nil)
	if err != nil {
		t.Fatal(err)
	}
	nodePtr, wid, nbrPtr, nbr := f.ints(t, "dec_node_ptr"), f.ints(t, "dec_wid"), f.ints(t, "dec_nbr_ptr"), f.ints(t, "dec_nbr")
	for i, tr := range trees {
		want := wid[nodePtr[i]:nodePtr[i+1]]
		if !slices.Equal(tr.Labels, want) {
			t.Errorf("point %d: labels %v, want %v", i, tr.Labels, want)
			continue
		}
		for k := range tr.Labels {
			g := nodePtr[i] + int64(k)
			var w []int32
			for _, y := range nbr[nbrPtr[g]:nbrPtr[g+1]] {
				w = append(w, int32(y))
			}
			if !slices.Equal(tr.Neighbors[k], w) {
				t.Errorf("point %d node %d: neighbours %v, want %v", i, k, tr.Neighbors[k], w)
			}
		}
	}
	if chem.calls != len(f.ints(t, "call_center")) {
		t.Errorf("%d can_assemble calls, the authors made %d", chem.calls, len(f.ints(t, "call_center")))
	}
	t.Logf("%d trees of %d nodes in all, %d can_assemble calls", n, len(wid), chem.calls)
}

func TestHaveSlots(t *testing.T) {
	c := func(hs int) Slot { return Slot{Symbol: "C", Hs: hs} }
	n := Slot{Symbol: "N", Hs: 1}
	for _, tc := range []struct {
		fa, ch         []Slot
		ok             bool
		faLeft, chLeft int
	}{
		{[]Slot{c(3), c(3), c(2)}, []Slot{c(1), c(1), c(1)}, true, 3, 3}, // both rings: no check
		{[]Slot{c(3)}, []Slot{c(0)}, false, 1, 1},                        // carbons short of hydrogens
		{[]Slot{c(3), n}, []Slot{n, c(0)}, true, 1, 1},                   // one N match: consumed on both sides
		{[]Slot{c(2), c(2)}, []Slot{c(2), c(2)}, true, 2, 2},             // several matches: nothing consumed
		{[]Slot{n}, []Slot{{Symbol: "N", Charge: 1}}, false, 1, 1},       // charges differ
	} {
		fa, ch := slices.Clone(tc.fa), slices.Clone(tc.ch)
		if ok := haveSlots(&fa, &ch); ok != tc.ok || len(fa) != tc.faLeft || len(ch) != tc.chLeft {
			t.Errorf("haveSlots(%v, %v) = %v leaving %d, %d; want %v, %d, %d", tc.fa, tc.ch, ok, len(fa), len(ch), tc.ok, tc.faLeft, tc.chLeft)
		}
	}
}
