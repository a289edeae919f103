package expression

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sbinet/npyio/npz"
)

// fixturePath is the numpy fixture written by testdata/expression/gen_fixtures.py.
const fixturePath = "../../../testdata/expression/fixtures.npz"

var (
	fixtureOnce sync.Once
	fixtureZip  *npz.Reader
	fixtureErr  error
)

func openFixture(t *testing.T) *npz.Reader {
	t.Helper()
	fixtureOnce.Do(func() { fixtureZip, fixtureErr = npz.Open(fixturePath) })
	if fixtureErr != nil {
		t.Fatalf("fixture: %v", fixtureErr)
	}
	return fixtureZip
}

func fixtureFloat64(t *testing.T, key string) []float64 {
	t.Helper()
	var v []float64
	if err := openFixture(t).Read(key+".npy", &v); err != nil {
		t.Fatalf("fixture %s: %v", key, err)
	}
	return v
}

func fixtureFloat32(t *testing.T, key string) []float32 {
	t.Helper()
	var v []float32
	if err := openFixture(t).Read(key+".npy", &v); err != nil {
		t.Fatalf("fixture %s: %v", key, err)
	}
	return v
}

func fixtureInt64(t *testing.T, key string) []int64 {
	t.Helper()
	var v []int64
	if err := openFixture(t).Read(key+".npy", &v); err != nil {
		t.Fatalf("fixture %s: %v", key, err)
	}
	return v
}

func fixtureStrings(t *testing.T, key string) []string {
	t.Helper()
	v, err := readUnicodeEntry(openFixture(t), key)
	if err != nil {
		t.Fatalf("fixture %s: %v", key, err)
	}
	return v
}

// dataFile returns the real data set file, or skips the test when it cannot be found.
func dataFile(t *testing.T) string {
	t.Helper()
	dirs := searchDirs()
	if d := os.Getenv(DataEnv); d != "" {
		dirs = append([]string{d}, dirs...)
	}
	for _, d := range dirs {
		if p, ok := findFile(d); ok {
			return p
		}
	}
	t.Skipf("data set %s not found ($%s, or shared/data above %s); skipping the full-data-set test", DataFileName, DataEnv, mustWd())
	return ""
}

func mustWd() string {
	wd, _ := os.Getwd()
	return filepath.Clean(wd)
}
