package chem

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestAttachMemo: every node's candidates (all of them, and can_assemble's
// first) enumerated with a memo, cold, warm and from several goroutines,
// are those enumerated without; the memo holds answers and forgets them on
// Reset.
func TestAttachMemo(t *testing.T) {
	memo := NewAttachMemo()
	for _, s := range []string{
		"CC(=O)Oc1ccccc1C(=O)O",
		"Cc1cc(NC(=O)CSc2nnc3c4ccccc4n(C)c3n2)ccc1Br",
		"O=C(N1CCc2c(F)ccc(F)c2C1)C1(O)Cc2ccccc2C1",
		"CCN(CC)C(=O)c1ccc2c(c1)nc(-c1ccc3[nH]ccc3c1)n2C1CCCCC1",
	} {
		tr, err := Decompose(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range tr.Nodes {
			nbrs := AssemblyOrder(n.Neighbors)
			for _, first := range []bool{false, true} {
				want, err := EnumOptions{First: first}.EnumAssemble(n, nbrs, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				got := make([][]Candidate, 4)
				errs := make([]error, 4)
				for k := range got {
					wg.Add(1)
					go func() {
						defer wg.Done()
						got[k], errs[k] = EnumOptions{First: first, Memo: memo}.EnumAssemble(n, nbrs, nil, nil)
					}()
				}
				wg.Wait()
				for k := range got {
					if errs[k] != nil || !reflect.DeepEqual(got[k], want) {
						t.Errorf("%s node %d (first %v): with the memo %v (%v), without %v", s, n.ID, first, got[k], errs[k], want)
					}
				}
				if first {
					all, err := EnumAssemble(n, nbrs, nil, nil)
					if err != nil || (len(all) > 0) != (len(want) > 0) || (len(want) > 0 && !slices.ContainsFunc(all, func(c Candidate) bool { return c.Smiles == want[0].Smiles })) {
						t.Errorf("%s node %d: the first candidate %v is not one of all %v (%v)", s, n.ID, want, all, err)
					}
				}
			}
		}
		tr.Close()
	}
	if memo.Len() == 0 {
		t.Error("the memo holds no answer")
	}
	memo.Reset()
	if memo.Len() != 0 {
		t.Errorf("%d answers after Reset", memo.Len())
	}
}

// TestAttachMemoTrees: on ZINC molecules' trees, atom-mapped as decoding
// maps them (a node that is not a leaf by its ID), each node's candidates
// under each of its father's first candidates (dfs_assemble's calls) are
// the same with a memo shared by all molecules as without one.
func TestAttachMemoTrees(t *testing.T) {
	memo := NewAttachMemo()
	recs := readTreeFixtures(t, "tree_fixtures.json.gz")
	calls := 0
	for i := 0; i < len(recs); i += 25 {
		tr, err := Decompose(recs[i].Smiles)
		if err != nil {
			continue
		}
		for _, n := range tr.Nodes {
			n.IsLeaf = len(n.Neighbors) == 1
			num := n.ID
			if n.IsLeaf {
				num = 0
			}
			if err := n.SetAtomMap(num); err != nil {
				t.Fatal(err)
			}
		}
		for _, fa := range tr.Nodes {
			faCands, err := EnumAssemble(fa, AssemblyOrder(fa.Neighbors), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			underFather(fa, faCands, func(_ int, ch *Node, kids []*Node, amap []AtomPair) error {
				want, err := EnumAssemble(ch, AssemblyOrder(kids), []*Node{fa}, amap)
				if err != nil {
					t.Fatal(err)
				}
				got, err := EnumOptions{Memo: memo}.EnumAssemble(ch, AssemblyOrder(kids), []*Node{fa}, amap)
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("%s node %d under %d: with the memo %v (%v), without %v", recs[i].Smiles, ch.ID, fa.ID, got, err, want)
				}
				calls++
				return nil
			})
		}
		tr.Close()
	}
	requests, hits, smilesHits := memo.Counts()
	t.Logf("%d enumerations, %d attachments, %d answered by content and %d by SMILES", calls, requests, hits, smilesHits)
	if calls < 100 || hits == 0 {
		t.Errorf("%d enumerations, %d answered by content", calls, hits)
	}
	requests, hits, smilesHits = memo.FinishedCounts()
	t.Logf("%d complete attachments, %d answered by content and %d by SMILES", requests, hits, smilesHits)
	if hits == 0 || smilesHits == 0 {
		t.Errorf("%d complete attachments, %d answered by content and %d by SMILES: a path of the memo is not tested", requests, hits, smilesHits)
	}
}

// TestSmilesMemos: decomposition and recovery of the tree fixtures'
// molecules, failures included, are the same with the fragment and label
// answers forgotten (cold) as with them remembered (warm), and the memos
// hold answers after.
func TestSmilesMemos(t *testing.T) {
	recs := readTreeFixtures(t, "tree_fixtures.json.gz")
	run := func() []string {
		var out []string
		for i := 0; i < len(recs); i += 10 {
			tr, err := Decompose(recs[i].Smiles)
			if err == nil {
				err = tr.Recover()
			}
			if err != nil {
				out = append(out, "error "+err.Error())
				tr.Close()
				continue
			}
			for _, n := range tr.Nodes {
				out = append(out, n.Smiles+" "+n.Label)
			}
			tr.Close()
		}
		return out
	}
	forget := func() {
		for _, c := range []interface{ reset() }{fragmentAnswers, labelAnswers} {
			c.reset()
		}
	}
	forget()
	cold := run()
	if len(fragmentAnswers.m) == 0 || len(labelAnswers.m) == 0 {
		t.Fatalf("%d fragment and %d label answers held", len(fragmentAnswers.m), len(labelAnswers.m))
	}
	warm := run()
	forget()
	if !slices.Equal(cold, warm) {
		t.Error("decompositions with the memos warm differ from cold ones")
	}
	errs := 0
	for _, s := range cold {
		if strings.HasPrefix(s, "error ") {
			errs++
		}
	}
	if errs == 0 {
		t.Error("no molecule failed: the failing path is not tested")
	}
}
