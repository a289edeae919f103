package objectives

import (
	"fmt"
	"sort"
	"sync"

	"github.com/tlbo-native/tlbo-native/internal/chem"
)

// The Gobbi-Poppinger 2D pharmacophore fingerprint, rdkit.Chem.Pharm2D's
// Generate.Gen2DFingerprint(mol, Gobbi_Pharm2D.factory), ported from RDKit's
// Python (RDKit's C++ has no Pharm2D): features are the atoms matched by the
// factory's eight feature SMARTS (families sorted by name), 2- and 3-point
// pharmacophores over distinct feature matches with topological distances binned
// into (2,3) (3,4) (4,5) (5,6) (6,7) (7,8) (8,100), a distance below 2 or from 100
// on dropping the combination, and bits numbered as SigFactory.GetBitIdx does
// (triangle-pruned scaffolds, OrderTriangle, CountUpTo). A bit vector (no counts).

// gobbiFamilies are Gobbi_Pharm2D.fdef's features, sorted by family as
// SigFactory.GetFeatFamilies sorts them.
var gobbiFamilies = []struct{ family, smarts string }{
	{"AG", "[$([C,S](=[O,S,P])-[O;H1])]"},
	{"AR", "[$([a;D3](@*)(@*)*)]"},
	{"BG", "[$([N;H2&+0][$([C,a]);!$([C,a](=O))]),$([N;H1&+0]([$([C,a]);!$([C,a](=O))])[$([C,a]);!$([C,a](=O))]),$([N;H0&+0]([C;!$(C(=O))])([C;!$(C(=O))])[C;!$(C(=O))]),$([N,n;X2;+0])]"},
	{"HA", "[$([O,S;H1;v2]-[!$(*=[O,N,P,S])]),$([O,S;H0;v2]),$([O,S;-]),$([N&v3;H1,H2]-[!$(*=[O,N,P,S])]),$([N;v3;H0]),$([n,o,s;+0]),F]"},
	{"HD", "[$([N;!H0;v3]),$([N;!H0;+1;v4]),$([O,S;H1;+0]),$([n;H1;+0])]"},
	{"LH", "[$([C;H2,H1](!=*)[C;H2,H1][C;H2,H1][$([C;H1,H2,H3]);!$(C=*)]),$(C([C;H2,H3])([C;H2,H3])[C;H2,H3])]"},
	{"RR", "[$([A;D3](@*)(@*)*)]"},
	{"X", "[!#1;!#6;!#7;!#8;!#9;!#16;!#17;!#35;!#53]"},
}

// gobbiBins is Gobbi_Pharm2D.defaultBins.
var gobbiBins = [][2]int{{2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 100}}

type pharmFactory struct {
	queries   []*chem.Query
	nFeats    int
	starts    map[int]int
	scaffolds map[int][][]int // by number of distances: 1 (2 points), 3 (3 points)
	size      int
}

var gobbiFactory = sync.OnceValues(func() (*pharmFactory, error) {
	f := &pharmFactory{nFeats: len(gobbiFamilies), starts: map[int]int{}, scaffolds: map[int][][]int{}}
	for _, fam := range gobbiFamilies {
		q, err := chem.Smarts(fam.smarts)
		if err != nil {
			return nil, err
		}
		f.queries = append(f.queries, q)
	}
	// SigFactory.Init with minPointCount 2, maxPointCount 3, trianglePruneBins.
	accum := 0
	for nPts := 2; nPts <= 3; nPts++ {
		f.starts[nPts] = accum
		nDists := len(nPointDists[nPts])
		sc := possibleScaffolds(nPts, gobbiBins)
		f.scaffolds[nDists] = sc
		accum += numCombinations(f.nFeats, nPts) * len(sc)
	}
	f.size = accum
	return f, nil
})

// nPointDists is Utils.nPointDistDict for 2 and 3 points.
var nPointDists = map[int][][2]int{
	2: {{0, 1}},
	3: {{0, 1}, {0, 2}, {1, 2}},
}

func comb(n, k int) int {
	if k < 0 || k > n {
		return 0
	}
	r := 1
	for i := 0; i < k; i++ {
		r = r * (n - i) / (i + 1)
	}
	return r
}

// numCombinations is Utils.NumCombinations: multisets of nSlots from nItems.
func numCombinations(nItems, nSlots int) int { return comb(nItems+nSlots-1, nSlots) }

// possibleScaffolds is Utils.GetPossibleScaffolds with the triangle inequality
// on bins (lexicographic order of bin-index tuples).
func possibleScaffolds(nPts int, bins [][2]int) [][]int {
	if nPts == 2 {
		out := make([][]int, len(bins))
		for i := range bins {
			out[i] = []int{i}
		}
		return out
	}
	// nPts == 3: three distances, one triangle (0, 1, 2).
	var out [][]int
	nb := len(bins)
	for a := 0; a < nb; a++ {
		for b := 0; b < nb; b++ {
			for c := 0; c < nb; c++ {
				if binsTriangle(bins[a], bins[b], bins[c]) {
					out = append(out, []int{a, b, c})
				}
			}
		}
	}
	return out
}

// binsTriangle is Utils.BinsTriangleInequality.
func binsTriangle(d1, d2, d3 [2]int) bool {
	if d1[1]+d2[1] < d3[0] {
		return false
	}
	if d2[1]+d3[1] < d1[0] {
		return false
	}
	if d3[1]+d1[1] < d2[0] {
		return false
	}
	return true
}

// countUpTo is Utils.CountUpTo.
func countUpTo(nItems, nSlots int, vs []int, idx, startAt int) int {
	if idx >= nSlots {
		return 0
	}
	if idx == nSlots-1 {
		return vs[idx] - startAt
	}
	accum := 0
	for i := startAt; i < vs[idx]; i++ {
		accum += numCombinations(nItems-i, nSlots-idx-1)
	}
	return accum + countUpTo(nItems, nSlots, vs, idx+1, vs[idx])
}

// orderTriangle is Utils.OrderTriangle.
func orderTriangle(feats, dists []int) ([]int, []int) {
	distinct := map[int]bool{}
	for _, f := range feats {
		distinct[f] = true
	}
	if len(distinct) == 3 {
		return feats, dists
	}
	dSums := []int{dists[0] + dists[1], dists[0] + dists[2], dists[1] + dists[2]}
	mD := max(dSums[0], dSums[1], dSums[2])
	var ire, dre [3]int
	if len(distinct) == 1 {
		switch {
		case dSums[0] == mD:
			if dists[0] > dists[1] {
				ire, dre = [3]int{0, 1, 2}, [3]int{0, 1, 2}
			} else {
				ire, dre = [3]int{0, 2, 1}, [3]int{1, 0, 2}
			}
		case dSums[1] == mD:
			if dists[0] > dists[2] {
				ire, dre = [3]int{1, 0, 2}, [3]int{0, 2, 1}
			} else {
				ire, dre = [3]int{1, 2, 0}, [3]int{2, 0, 1}
			}
		default:
			if dists[1] > dists[2] {
				ire, dre = [3]int{2, 0, 1}, [3]int{1, 2, 0}
			} else {
				ire, dre = [3]int{2, 1, 0}, [3]int{2, 1, 0}
			}
		}
	} else {
		switch {
		case feats[0] == feats[1]:
			if dists[1] > dists[2] {
				ire, dre = [3]int{0, 1, 2}, [3]int{0, 1, 2}
			} else {
				ire, dre = [3]int{1, 0, 2}, [3]int{0, 2, 1}
			}
		case feats[0] == feats[2]:
			if dists[0] > dists[2] {
				ire, dre = [3]int{0, 1, 2}, [3]int{0, 1, 2}
			} else {
				ire, dre = [3]int{2, 1, 0}, [3]int{2, 1, 0}
			}
		default:
			if dists[0] > dists[1] {
				ire, dre = [3]int{0, 1, 2}, [3]int{0, 1, 2}
			} else {
				ire, dre = [3]int{0, 2, 1}, [3]int{1, 0, 2}
			}
		}
	}
	nd := []int{dists[dre[0]], dists[dre[1]], dists[dre[2]]}
	nf := []int{feats[ire[0]], feats[ire[1]], feats[ire[2]]}
	return nf, nd
}

// bitIdx is SigFactory.GetBitIdx(featIndices, dists, sortIndices=False).
func (f *pharmFactory) bitIdx(feats, dists []int) (int, error) {
	nPts := len(feats)
	start := f.starts[nPts]
	if nPts == 3 {
		feats, dists = orderTriangle(feats, dists)
	}
	sc := f.scaffolds[len(dists)]
	offset := countUpTo(f.nFeats, nPts, feats, 0, 0) * len(sc)
	which := make([]int, len(dists))
	for i, d := range dists {
		where := -1
		for j, b := range gobbiBins {
			if d >= b[0] && d < b[1] {
				where = j
				break
			}
		}
		if where < 0 {
			return 0, fmt.Errorf("pharm2d: distance %d in no bin", d)
		}
		which[i] = where
	}
	for k, s := range sc {
		if equalInts(s, which) {
			return start + offset + k, nil
		}
	}
	return 0, fmt.Errorf("pharm2d: scaffold %v not found", which)
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// lessInts orders atom tuples as Python orders tuples.
func lessInts(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// Gobbi2D returns the set bits of the Gobbi 2D pharmacophore fingerprint,
// ascending (Gen2DFingerprint(mol, Gobbi_Pharm2D.factory).GetOnBits()).
func Gobbi2D(m *chem.Mol) ([]int, error) {
	f, err := gobbiFactory()
	if err != nil {
		return nil, err
	}
	n := m.NumAtoms()
	dMat, err := m.DistanceMatrix(false)
	if err != nil {
		return nil, err
	}
	// GetMolFeats: each family's matches (atom tuples), sorted as Python tuples
	// so that combinations come out canonical.
	feats := make([][][]int, len(f.queries))
	for i, q := range f.queries {
		ms, err := m.Matches(q, chem.DefaultMatch)
		if err != nil {
			return nil, err
		}
		sort.SliceStable(ms, func(a, b int) bool { return lessInts(ms[a], ms[b]) })
		feats[i] = ms
	}
	const minD, maxD = 2, 100
	bits := map[int]bool{}
	// shortestPathsMatch is _ShortestPathsMatch: the binned distances of a match,
	// or false when a pair is closer than 2 or 100 and more apart.
	shortestPathsMatch := func(match [][]int, perm []int) error {
		pairs := nPointDists[len(match)]
		dist := make([]int, len(pairs))
		for i, pr := range pairs {
			minSeen := float64(maxD)
			for _, a := range match[pr[0]] {
				for _, b := range match[pr[1]] {
					minSeen = min(minSeen, dMat[a*n+b])
					if minSeen == 0 || minSeen < minD {
						return nil
					}
				}
			}
			d := int(minSeen)
			if d == 0 || d < minD || d >= maxD {
				return nil
			}
			dist[i] = d
		}
		idx, err := f.bitIdx(append([]int(nil), perm...), dist)
		if err != nil {
			return err
		}
		bits[idx] = true
		return nil
	}
	// Every multiset of families (GetIndexCombinations), every canonical choice
	// of distinct matches (GetUniqueCombinations: within a family ascending,
	// across the set all distinct).
	for nPts := 2; nPts <= 3; nPts++ {
		for _, perm := range indexCombinations(f.nFeats, nPts) {
			match := make([][]int, nPts)
			var rec func(pos int) error
			rec = func(pos int) error {
				if pos == nPts {
					return shortestPathsMatch(match, perm)
				}
				for _, cand := range feats[perm[pos]] {
					if pos > 0 && perm[pos] == perm[pos-1] && !lessInts(match[pos-1], cand) {
						continue
					}
					dup := false
					for _, prev := range match[:pos] {
						if equalInts(prev, cand) {
							dup = true
							break
						}
					}
					if dup {
						continue
					}
					match[pos] = cand
					if err := rec(pos + 1); err != nil {
						return err
					}
				}
				return nil
			}
			if err := rec(0); err != nil {
				return nil, err
			}
		}
	}
	out := make([]int, 0, len(bits))
	for b := range bits {
		out = append(out, b)
	}
	sort.Ints(out)
	return out, nil
}

// indexCombinations is Utils.GetIndexCombinations: non-decreasing index tuples,
// lexicographic.
func indexCombinations(nItems, nSlots int) [][]int {
	var out [][]int
	cur := make([]int, nSlots)
	var rec func(slot, last int)
	rec = func(slot, last int) {
		if slot == nSlots {
			out = append(out, append([]int(nil), cur...))
			return
		}
		for x := last; x < nItems; x++ {
			cur[slot] = x
			rec(slot+1, x)
		}
	}
	rec(0, 0)
	return out
}

// bitTanimoto is RDKit's TanimotoSimilarity of two bit vectors given by their
// sorted on bits: 1 when both are empty.
func bitTanimoto(a, b []int) float64 {
	i, j, both := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			both++
			i++
			j++
		}
	}
	den := len(a) + len(b) - both
	if den == 0 {
		return 1
	}
	return float64(both) / float64(den)
}
