package expression

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/datadir"
	fx "github.com/tlbo-native/tlbo-native/internal/fixture"
)

// fixturePath is the numpy fixture written by testdata/expression/gen_fixtures.py.
const fixturePath = "../../../testdata/expression/fixtures.npz"

// fixture returns the data of one array of the fixture file.
func fixture[T any](t *testing.T, key string) T {
	t.Helper()
	return fx.Data[T](t, fx.Load(t, "expression", "fixtures.npz"), key)
}

func fixtureFloat64(t *testing.T, key string) []float64 { return fixture[[]float64](t, key) }
func fixtureFloat32(t *testing.T, key string) []float32 { return fixture[[]float32](t, key) }
func fixtureInt64(t *testing.T, key string) []int64     { return fixture[[]int64](t, key) }
func fixtureStrings(t *testing.T, key string) []string  { return fixture[[]string](t, key) }

// dataFile returns the real data set file, or skips the test when it cannot be found.
func dataFile(t *testing.T) string {
	t.Helper()
	dirs, _, _ := datadir.Dirs("")
	for _, d := range dirs {
		if p, ok := findFile(d); ok {
			return p
		}
	}
	t.Skipf("data set %s not found ($%s, or shared/data above %s); skipping the full-data-set test", DataFileName, datadir.Env, mustWd())
	return ""
}

func mustWd() string {
	wd, _ := os.Getwd()
	return filepath.Clean(wd)
}
