package molecule

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Keys of the data set. A run asks for the key (Objective.Key) of every
// data-set molecule several times before its first retraining step: the
// data's digest and its set of known molecules in the loop, the model's
// verdict and examples. Each is an RDKit parse, sanitisation and canonical
// SMILES, about a minute a pass over ZINC's 210,770 training molecules on
// one core: four passes were most of a molecule run's start-up. The keys
// are therefore made once when the data set is read (keyMemo), taken from
// the data file's canonical array where it has one: data molecule wrote
// there each molecule's Standardize, which is the key. A key is a function
// of the SMILES alone, so a memo never goes stale.

// keyCheckCount is the number of molecules, spread over the data set,
// whose canonical SMILES in the data file are compared with this build's
// Standardize before the file's are taken as keys: another RDKit build's
// canonical order would differ on most molecules.
const keyCheckCount = 256

// keyMemo holds the keys of molecules by SMILES, made beforehand (fill,
// take). Its zero value holds none; a nil memo is valid and holds none.
type keyMemo struct {
	m atomic.Pointer[map[string]string]
}

// get returns the memoised key of smiles, if any.
func (k *keyMemo) get(smiles string) (string, bool) {
	if k == nil {
		return "", false
	}
	m := k.m.Load()
	if m == nil {
		return "", false
	}
	key, ok := (*m)[smiles]
	return key, ok
}

// add keeps keys[i] as the key of smiles[i], with those held already.
func (k *keyMemo) add(smiles, keys []string) {
	old := k.m.Load()
	n := len(smiles)
	if old != nil {
		n += len(*old)
	}
	m := make(map[string]string, n)
	if old != nil {
		for s, key := range *old {
			m[s] = key
		}
	}
	for i, s := range smiles {
		m[s] = keys[i]
	}
	k.m.Store(&m)
}

// standardKey is Objective.Key made afresh: the canonical SMILES without
// stereo, or the SMILES itself when RDKit rejects it.
func standardKey(smiles string) string {
	if k, err := Standardize(smiles); err == nil {
		return k
	}
	return smiles
}

// take keeps the keys of the data set's molecules smiles: canonical[i]
// (the data file's canonical SMILES) for smiles[i] when canonical's checked
// sample agrees with standardKey, else each made here (fill). canonical may
// be nil (a data file without it); an empty entry is made here.
func (k *keyMemo) take(ctx context.Context, smiles, canonical []string, workers int, log io.Writer) error {
	if canonical != nil {
		if err := checkCanonical(smiles, canonical); err != nil {
			note(log, "molecule data set: %v; making the keys of its molecules again", err)
		} else {
			var missing []string
			for i, c := range canonical {
				if c == "" {
					missing = append(missing, smiles[i])
				}
			}
			k.add(smiles, canonical)
			return k.fill(ctx, missing, workers, log)
		}
	}
	return k.fill(ctx, smiles, workers, log)
}

// checkCanonical compares keyCheckCount of the file's canonical SMILES,
// evenly spread, with this build's standardKey.
func checkCanonical(smiles, canonical []string) error {
	if len(canonical) != len(smiles) {
		return fmt.Errorf("%d canonical SMILES for %d molecules", len(canonical), len(smiles))
	}
	step := max(1, len(smiles)/keyCheckCount)
	for i := 0; i < len(smiles); i += step {
		if canonical[i] == "" {
			continue
		}
		if key := standardKey(smiles[i]); key != canonical[i] {
			return fmt.Errorf("the data file's canonical SMILES of molecule %d (%s) is %s, this build's %s (a data file of another RDKit build?)",
				i+1, smiles[i], canonical[i], key)
		}
	}
	return nil
}

// fill makes the keys of smiles that the memo does not hold, on workers
// goroutines (0: one per CPU), saying on log how far it has gone once a
// minute when there are many. When ctx ends it returns its error and keeps
// nothing.
func (k *keyMemo) fill(ctx context.Context, smiles []string, workers int, log io.Writer) error {
	var want []string
	seen := map[string]bool{}
	for _, s := range smiles {
		if _, ok := k.get(s); !ok && !seen[s] {
			seen[s] = true
			want = append(want, s)
		}
	}
	if len(want) == 0 {
		return nil
	}
	const many = 10000
	start := time.Now()
	if len(want) >= many {
		note(log, "molecule data set: making the keys (canonical SMILES) of %d molecules on %d workers", len(want), workerCount(workers, len(want)))
	}
	var done atomic.Int64
	var mu sync.Mutex
	last := start
	keys := make([]string, len(want))
	err := forEach(ctx, workers, len(want), func(i int) {
		keys[i] = standardKey(want[i])
		if n := done.Add(1); len(want) >= many && n%1024 == 0 {
			mu.Lock()
			if now := time.Now(); now.Sub(last) >= progressEvery {
				last = now
				note(log, "molecule data set: %d of %d keys made", n, len(want))
			}
			mu.Unlock()
		}
	})
	if err != nil {
		return fmt.Errorf("molecule data set: making the keys: %w", err)
	}
	k.add(want, keys)
	if len(want) >= many {
		note(log, "molecule data set: %d keys made in %s", len(want), time.Since(start).Round(time.Second))
	}
	return nil
}

// note writes a line on log, if any.
func note(log io.Writer, format string, args ...any) {
	if log != nil {
		fmt.Fprintf(log, format+"\n", args...)
	}
}
