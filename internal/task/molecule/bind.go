package molecule

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
)

// binding is what a verb binds (bind) and the task's hooks share: the
// featuriser of its network's vocabulary, the cached featurisation of the
// data set's molecules over it, by SMILES, and the workers of its
// decodings. Each TaskSpec has its own, so that nothing of one verb's is
// left in package variables for another (or another test) to find.
type binding struct {
	mu     sync.Mutex
	vocab  Vocab
	f      *Featuriser
	cached map[string]Cached
	lazy   *lazyCache // the data set's featurisation on demand (lazy.go), or nil
	// workers is the verb's --workers: its decodings (decode) run on that
	// many goroutines (0: one per CPU).
	workers int
	// keys holds the keys of the data set's molecules (keys.go), which the
	// verb's objective (objective) takes.
	keys keyMemo
}

// featuriser returns the bound featuriser (nil before a verb binds one).
func (b *binding) featuriser() *Featuriser {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.f
}

// decodeWorkers returns the workers of the verb's decodings.
func (b *binding) decodeWorkers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.workers
}

// bind makes the vocabulary of the verb's network the featuriser's, so that
// molecules are featurised over the clusters the network knows (a
// checkpoint imported with its own vocabulary included). A --vocab whose
// clusters differ from the network's is refused, naming the difference.
func (b *binding) bind(env *task.Env, net models.VAE[jtvae.Example]) error {
	m, ok := net.(*jtvae.Model)
	if !ok {
		return fmt.Errorf("molecule task: network %T is not the JT-VAE", net)
	}
	v := Vocab(m.Config().Vocab)
	if len(v) == 0 { // a header without its vocabulary
		var err error
		if v, _, err = vocabulary(env); err != nil {
			return err
		}
	} else if p := env.Opts.String(optVocab); p != "" {
		given, err := ReadVocab(p)
		if err != nil {
			return fmt.Errorf("--%s: %w", optVocab, err)
		}
		if err := sameClusters(given, v); err != nil {
			return fmt.Errorf("--%s %s is not the checkpoint's vocabulary: %w; leave --%s out to use the checkpoint's", optVocab, p, err, optVocab)
		}
	}
	b.bindVocab(v)
	b.mu.Lock()
	b.workers = env.Opts.Int(optWorkers)
	b.mu.Unlock()
	return nil
}

// bindVocab makes v the featuriser's vocabulary.
func (b *binding) bindVocab(v Vocab) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.f == nil || !slices.Equal(b.vocab, v) {
		b.f, b.vocab, b.cached, b.lazy = NewFeaturiser(v), slices.Clone(v), nil, nil
	}
}

// sameClusters returns nil when a (a --vocab) and b (the checkpoint's) hold
// the same clusters, in any order (featurisation maps labels onto the
// network's vocabulary by cluster), else what differs.
func sameClusters(a, b Vocab) error {
	in := func(v Vocab) map[string]bool {
		m := make(map[string]bool, len(v))
		for _, s := range v {
			m[s] = true
		}
		return m
	}
	ia, ib := in(a), in(b)
	var extra, lack []string
	for _, s := range a {
		if !ib[s] {
			extra = append(extra, s)
		}
	}
	for _, s := range b {
		if !ia[s] {
			lack = append(lack, s)
		}
	}
	if len(extra) == 0 && len(lack) == 0 {
		return nil
	}
	first := func(xs []string) string {
		if len(xs) == 0 {
			return ""
		}
		return " (the first: " + xs[0] + ")"
	}
	return fmt.Errorf("%d clusters, the checkpoint's %d: %d not in the checkpoint's%s, %d of the checkpoint's missing%s",
		len(a), len(b), len(extra), first(extra), len(lack), first(lack))
}

// example returns the cached featurisation of a data-set molecule, else
// featurises it.
func (b *binding) example(smiles string) (jtvae.Example, error) {
	b.mu.Lock()
	f, lazy := b.f, b.lazy
	c, ok := b.cached[smiles]
	b.mu.Unlock()
	if ok {
		return c.Example, c.Err
	}
	if lazy != nil {
		if c, ok := lazy.lookup(smiles); ok {
			return c.Example, c.Err
		}
	}
	if f == nil {
		return jtvae.Example{}, fmt.Errorf("molecule %q: no vocabulary bound (give --%s)", smiles, optVocab)
	}
	return f.Featurise(smiles)
}

// materialise featurises the data-set molecules of ex that example left to
// be made on demand (lazy.go).
func (b *binding) materialise(ex []jtvae.Example) ([]jtvae.Example, error) {
	lazy := b.onDemand()
	if lazy == nil || !slices.ContainsFunc(ex, isPlaceholder) {
		return ex, nil
	}
	return lazy.materialise(ex)
}

// materialiseEncoder makes what the encoder reads of the data-set
// molecules of ex that example left to be made on demand (lazy.go).
func (b *binding) materialiseEncoder(ex []jtvae.Example) ([]jtvae.Example, error) {
	lazy := b.onDemand()
	if lazy == nil || !slices.ContainsFunc(ex, isPlaceholder) {
		return ex, nil
	}
	return lazy.materialiseEncoder(ex)
}

// prefetch makes the data-set molecules of the batches that materialise
// will be given next in the background (lazyCache.prefetch).
func (b *binding) prefetch(batches [][]jtvae.Example) (stop func()) {
	lazy := b.onDemand()
	if lazy == nil {
		return func() {}
	}
	return lazy.prefetch(batches)
}

// flush writes the molecules featurised on demand since the cache's last
// flush (lazyCache.flush), if any: at the end of a run, so that a resumed
// or later run finds them.
func (b *binding) flush() error {
	if lazy := b.onDemand(); lazy != nil {
		return lazy.flush()
	}
	return nil
}

// featuriseCPU returns the CPU seconds of the featurisation on demand so
// far (lazyCache.CPUSeconds; 0 without it).
func (b *binding) featuriseCPU() float64 {
	if lazy := b.onDemand(); lazy != nil {
		return lazy.CPUSeconds()
	}
	return 0
}

// onDemand returns the data set's featurisation on demand, or nil.
func (b *binding) onDemand() *lazyCache {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lazy
}

// vocabulary returns the vocabulary of --vocab, else the data directory's
// shipped one, else (with --synthetic-data) the clusters of the built-in
// sample; path names it.
func vocabulary(env *task.Env) (Vocab, string, error) {
	if p := env.Opts.String(optVocab); p != "" {
		v, err := ReadVocab(p)
		return v, p, err
	}
	p, derr := ShippedVocabPath(env.DataDir)
	if derr == nil {
		v, err := ReadVocab(p)
		if err == nil || !errors.Is(err, os.ErrNotExist) || !env.Synthetic {
			return v, p, err
		}
	} else if !env.Synthetic {
		return nil, "", fmt.Errorf("molecule vocabulary: give --%s or a data directory: %w", optVocab, derr)
	}
	v, err := sampleVocab()
	return v, "synthetic sample", err
}

// ShippedVocabPath returns the path of the JT-VAE vocabulary shipped in the
// data directory dir ("": found as FindDataDir finds it).
func ShippedVocabPath(dir string) (string, error) {
	dir, err := FindDataDir(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, ShippedVocab), nil
}

// sampleVocab is the cluster vocabulary of the built-in sample.
func sampleVocab() (Vocab, error) {
	seen := map[string]bool{}
	var v Vocab
	for _, s := range sampleSmiles {
		t, err := chem.Decompose(s)
		if err != nil {
			return nil, fmt.Errorf("sample molecule %q: %w", s, err)
		}
		for _, c := range t.Vocabulary() {
			if !seen[c] {
				seen[c] = true
				v = append(v, c)
			}
		}
		t.Close()
	}
	return v, nil
}
