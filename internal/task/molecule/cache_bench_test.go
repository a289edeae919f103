package molecule

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tlbo-native/tlbo-native/models/jtvae"
)

// TestCacheMeasure compares featurising the first $TLBO_CACHE_MEASURE
// molecules of ZINC250K (on all cores; this writes the cache) with
// reading them back from the cache, in CPU seconds, and reports the cache's
// size on disk and the Go heap that the read examples hold. Skipped unless
// the variable is set:
//
//	TLBO_CACHE_MEASURE=2000 OPENBLAS_NUM_THREADS=1 nice go test ./internal/task/molecule -run TestCacheMeasure -v
func TestCacheMeasure(t *testing.T) {
	v, smiles := measureMolecules(t, "TLBO_CACHE_MEASURE", "measure the cache on N molecules")
	f := NewFeaturiser(v)
	var err error
	o := CacheOptions{Dir: t.TempDir(), DataDigest: "measure"} // CPU time: the same on any number of workers
	build := cpuTime(t, func() { _, err = CachedExamples(o, f, smiles) })
	if err != nil {
		t.Fatal(err)
	}
	var got []Cached
	read := cpuTime(t, func() { got, err = CachedExamples(o, f, smiles) })
	if err != nil {
		t.Fatal(err)
	}
	bad, packed := 0, 0
	for _, c := range got {
		if c.Err != nil {
			bad++
		}
		packed += len(c.Example.Packed)
	}
	unpack := cpuTime(t, func() {
		for _, c := range got {
			_, _ = c.Example.Unpack()
		}
	})
	got = nil
	heap := heldHeap(func() any { g, _ := CachedExamples(o, f, smiles); return g })
	unpacked := heldHeap(func() any {
		g, _ := CachedExamples(o, f, smiles)
		ex := make([]jtvae.Example, len(g))
		for i, c := range g {
			ex[i], _ = c.Example.Unpack()
		}
		return ex
	})
	bytes := int64(0)
	shards, _ := filepath.Glob(filepath.Join(o.Dir, "*", "shard-*.gob"))
	for _, p := range shards {
		if st, err := os.Stat(p); err == nil {
			bytes += st.Size()
		}
	}
	t.Logf("%d molecules (%d not featurisable), %d shards", len(smiles), bad, len(shards))
	t.Logf("featurise and write: %.2f CPU s (%.2f ms per molecule); read: %.3f CPU s (%.3f ms per molecule); ratio %.0fx",
		build.Seconds(), ms(build, len(smiles)), read.Seconds(), ms(read, len(smiles)), build.Seconds()/read.Seconds())
	perMolecule := func(h float64) string {
		return fmt.Sprintf("%s (%.1f KiB per molecule, %s for 10,000)", mib(h), h/1024/float64(len(smiles)),
			mib(h*10000/float64(len(smiles))))
	}
	t.Logf("on disk %s (%.1f KiB per molecule); packed examples %s; unpacking each once %.3f CPU s (%.3f ms per molecule)",
		mib(float64(bytes)), float64(bytes)/1024/float64(len(smiles)), mib(float64(packed)), unpack.Seconds(), ms(unpack, len(smiles)))
	t.Logf("heap held by the read cache %s; by the same examples unpacked %s", perMolecule(heap), perMolecule(unpacked))
}

// heldHeap returns the heap bytes that build's result holds: the live heap
// with it, less the live heap once it is dropped.
func heldHeap(build func() any) float64 {
	var with, without runtime.MemStats
	v := build()
	runtime.GC()
	runtime.ReadMemStats(&with)
	runtime.KeepAlive(v)
	v = nil
	runtime.GC()
	runtime.ReadMemStats(&without)
	return float64(with.HeapAlloc) - float64(without.HeapAlloc)
}

// measureMolecules returns the shipped vocabulary and the first $env
// molecules of ZINC250K, and skips the measurement when env is not set.
func measureMolecules(t *testing.T, env, what string) (Vocab, []string) {
	t.Helper()
	n, _ := strconv.Atoi(os.Getenv(env))
	if n <= 0 {
		t.Skipf("set %s=N to %s", env, what)
	}
	v, err := ReadVocab(testVocab(t))
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := FindDataDir("")
	smiles, _, err := readSplits(dir)
	if err != nil {
		t.Fatal(err)
	}
	return v, smiles[:min(n, len(smiles))]
}

// cpuTime returns the process's user and system CPU time spent in f.
func cpuTime(t *testing.T, f func()) time.Duration {
	t.Helper()
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	f()
	return cpu() - start
}

func ms(d time.Duration, n int) float64 { return d.Seconds() * 1000 / float64(n) }

func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }
