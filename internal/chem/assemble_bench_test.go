package chem

import (
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/rusage"
)

// BenchmarkTreeStages decomposes, recovers and assembles every fifth
// tree-fixture molecule (204 ZINC molecules) per iteration, and reports the
// CPU time of each stage a molecule (the process's, so GC included):
// what featurising a molecule spends in internal/chem. It also assembles
// each tree again, only the inner nodes (what featurisation enumerates).
func BenchmarkTreeStages(b *testing.B) {
	var smiles []string
	for i, r := range readTreeFixtures(b, "tree_fixtures.json.gz") {
		if i%5 == 0 && r.Error == "" {
			smiles = append(smiles, r.Smiles)
		}
	}
	inner := func(n *Node) bool { return !n.IsLeaf }
	var stages [4]float64
	n := 0
	for b.Loop() {
		for _, s := range smiles {
			t0 := rusage.CPUSeconds()
			tr, err := Decompose(s)
			if err != nil {
				continue
			}
			t1 := rusage.CPUSeconds()
			if err := tr.Recover(); err != nil {
				b.Fatal(err)
			}
			t2 := rusage.CPUSeconds()
			if err := tr.Assemble(); err != nil {
				b.Fatal(err)
			}
			t3 := rusage.CPUSeconds()
			if err := tr.AssembleNodes(inner); err != nil {
				b.Fatal(err)
			}
			t4 := rusage.CPUSeconds()
			tr.Close()
			stages[0] += t1 - t0
			stages[1] += t2 - t1
			stages[2] += t3 - t2
			stages[3] += t4 - t3
			n++
		}
	}
	for i, name := range []string{"decompose", "recover", "assemble", "assemble-inner"} {
		b.ReportMetric(1000*stages[i]/float64(n), name+"-cpu-ms/mol")
	}
}
