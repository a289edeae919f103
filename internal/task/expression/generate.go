package expression

import "math/rand/v2"

// minRules is the fewest rules that complete each nonterminal: S -> T -> 'x' and T -> 'x'.
var minRules = [NumNonterminals]int{NonterminalS: 2, NonterminalT: 1}

// Generate returns n distinct expressions sampled from the grammar (fewer if, after many
// tries, no new ones turn up), seeded. Each leftmost derivation picks uniformly among the
// productions of the pending nonterminal that can still complete within MaxRules, so
// every sample is valid and most use close to MaxRules rules, like the data set.
func Generate(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	seen := make(map[string]bool, n)
	exprs := make([]string, 0, n)
	for tries := 0; len(exprs) < n && tries < 50*n+1000; tries++ {
		text, err := Decode(sampleRules(rng))
		if err != nil || seen[text] {
			continue // sampleRules always completes; err is impossible
		}
		seen[text] = true
		exprs = append(exprs, text)
	}
	return exprs
}

// sampleRules samples one leftmost derivation within MaxRules rules.
func sampleRules(rng *rand.Rand) []int {
	stack := []int{NonterminalS} // pending nonterminals, leftmost on top
	pending := minRules[NonterminalS]
	var rules []int
	allowed := make([]int, 0, NumProductions)
	for len(stack) > 0 {
		nt := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		pending -= minRules[nt]
		allowed = allowed[:0]
		for p, prod := range productions {
			if prod.lhs != nt {
				continue
			}
			if len(rules)+1+pending+rhsMinRules(p) <= MaxRules {
				allowed = append(allowed, p)
			}
		}
		p := allowed[rng.IntN(len(allowed))]
		rules = append(rules, p)
		rhs := productions[p].rhs
		for i := len(rhs) - 1; i >= 0; i-- {
			if rhs[i].nt >= 0 {
				stack = append(stack, rhs[i].nt)
				pending += minRules[rhs[i].nt]
			}
		}
	}
	return rules
}

// rhsMinRules is the fewest rules completing the nonterminals of production p's right-hand side.
func rhsMinRules(p int) int {
	n := 0
	for _, s := range productions[p].rhs {
		if s.nt >= 0 {
			n += minRules[s.nt]
		}
	}
	return n
}
