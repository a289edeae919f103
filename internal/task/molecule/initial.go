package molecule

import (
	"fmt"
	"math/rand/v2"

	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// initialStream is the PCG stream of optimize --initial's draw.
const initialStream = 0x696e697469616c // "initial"

// initialMolecules is the data set of optimize --initial N, the PMO
// protocol's start: N distinct molecules drawn from smiles (a training
// split, whose penalised logP scores are fileScores) in the order of a
// permutation seeded by env.Seed, skipping those the bound vocabulary cannot
// featurise (the loop retrains on them), and scored with obj: the file's
// scores for penalised logP, else obj's, on --workers goroutines. The task
// charges them to the run as its first N oracle calls (Spec.InitialCalls:
// the run records them in bo.InitialFile, which analyze pmo and plot read).
// source says where they came from.
func (b *binding) initialMolecules(env *task.Env, obj Objective, smiles []string, fileScores []float64, source string) ([]string, []float64, string, error) {
	n := env.Opts.Int(optInitial)
	if n > len(smiles) {
		return nil, nil, "", fmt.Errorf("--%s %d: the data set (%s) has %d molecules", optInitial, n, source, len(smiles))
	}
	chem.SetLogging(env.Opts.Bool(optRDKitLog))
	workers := env.Opts.Int(optWorkers)
	f := b.featuriser()
	perm := rand.New(rand.NewPCG(env.Seed, initialStream)).Perm(len(smiles))
	var pick []int
	var examples []Cached
	seen := map[string]bool{}
	skipped := 0
	var first error
	for pos := 0; len(pick) < n && pos < len(perm); {
		batch := perm[pos : pos+min(len(perm)-pos, max(n-len(pick), 32))]
		pos += len(batch)
		keys, ex := make([]string, len(batch)), make([]Cached, len(batch))
		err := forEach(env.Ctx, workers, len(batch), func(k int) {
			s := smiles[batch[k]]
			if keys[k] = obj.Key(s); f != nil {
				ex[k] = packCached(f.Featurise(s))
			}
		})
		if err != nil {
			return nil, nil, "", fmt.Errorf("--%s: drawing the initial molecules: %w", optInitial, err)
		}
		for k, i := range batch {
			switch {
			case len(pick) == n || seen[keys[k]]:
				continue
			case ex[k].Err != nil:
				if skipped++; first == nil {
					first = ex[k].Err
				}
				continue
			}
			seen[keys[k]] = true
			pick, examples = append(pick, i), append(examples, ex[k])
		}
	}
	if len(pick) < n {
		return nil, nil, "", fmt.Errorf("--%s %d: only %d distinct molecules of the data set (%s) can be featurised over the vocabulary",
			optInitial, n, len(pick), source)
	}
	objs, scores := make([]string, n), make([]float64, n)
	for j, i := range pick {
		objs[j], scores[j] = smiles[i], fileScores[i]
	}
	failed := 0
	if obj.f != nil {
		errs := make([]string, n)
		if err := scoreInto(env.Ctx, obj, objs, scores, errs, workers, nil); err != nil {
			return nil, nil, "", fmt.Errorf("--%s: scoring the initial molecules: %w", optInitial, err)
		}
		for _, e := range errs {
			if e != "" {
				failed++
			}
		}
	}
	if f != nil {
		m := make(map[string]Cached, n)
		for j, s := range objs {
			m[s] = examples[j]
		}
		b.mu.Lock()
		if b.f == f {
			b.cached = m
		}
		b.mu.Unlock()
	}
	by := obj.Name()
	if p := env.Opts.String(task.ProgramValue); p != "" {
		by = "the program " + p // optimize scores them with it next
	}
	if env.Stderr != nil {
		note := ""
		if skipped > 0 {
			note = fmt.Sprintf("; %d drawn before them cannot be featurised over the vocabulary and were skipped (the first: %v)", skipped, first)
		}
		if failed > 0 {
			note += fmt.Sprintf("; %d could not be scored and have the failure score %g", failed, obj.FailureScore())
		}
		fmt.Fprintf(env.Stderr, "molecule data set: %d initial molecules drawn with seed %d from %d, scored by %s: the run's first %d oracle calls%s\n",
			n, env.Seed, len(smiles), by, n, note)
	}
	// The seed is the run's own field: a source without it lets runs that
	// differ only in the seed be grouped (bo.GroupCurves).
	return objs, scores, fmt.Sprintf("%s; %d drawn at random with the seed, scored by %s (oracle calls)", source, n, by), nil
}
