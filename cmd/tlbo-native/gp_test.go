package main

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// runApp runs the command line with args and returns its standard output.
func runApp(t *testing.T, args ...string) (string, error) {
	t.Helper()
	app := &cli.App{Name: "tlbo-native", Commands: []*cli.Command{gpCommand()}}
	old := os.Stdout
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout = w
	runErr := app.Run(append([]string{"tlbo-native"}, args...))
	w.Close()
	os.Stdout = old
	var buf bytes.Buffer
	io.Copy(&buf, r)
	return buf.String(), runErr
}

func writeArray(t *testing.T, dir, name string, shape []int, data []float64) string {
	t.Helper()
	p := filepath.Join(dir, name+".npy")
	if err := numpy.WriteNPY(p, numpy.Array{Name: name, Shape: shape, Data: data}); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGPCommand(t *testing.T) {
	dir := t.TempDir()
	const n, q = 60, 20
	x, y := make([]float64, 2*(n+q)), make([]float64, n+q)
	for i := range y {
		a, b := math.Mod(float64(i)*0.618, 1), math.Mod(float64(i)*0.382+0.1, 1)
		x[2*i], x[2*i+1] = 5*a, b
		y[i] = math.Sin(a*3) + b
	}
	tx := writeArray(t, dir, "tx", []int{n, 2}, x[:2*n])
	ty := writeArray(t, dir, "ty", []int{n}, y[:n])
	vx := writeArray(t, dir, "vx", []int{q, 2}, x[2*n:])
	vy := writeArray(t, dir, "vy", []int{q}, y[n:])
	for _, extra := range [][]string{{"--inducing", "10"}, {"--inducing", "0", "--kernel", "matern52"}, {"--inducing", "10", "--warp"}} {
		out, err := runApp(t, append([]string{"gp", "--train-x", tx, "--train-y", ty, "--test-x", vx, "--test-y", vy}, extra...)...)
		if err != nil {
			t.Fatalf("%v: %v", extra, err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		last := strings.Fields(lines[len(lines)-1])
		if len(last) != 6 || last[0] != "test_loglik" || last[2] != "rmse" || last[4] != "fit_s" {
			t.Fatalf("%v: last line %q", extra, lines[len(lines)-1])
		}
	}

	nan := append([]float64(nil), y[:n]...)
	nan[3] = math.NaN()
	bad := map[string][]string{
		"NaN":            {"--train-y", writeArray(t, dir, "nan", []int{n}, nan)},
		"no such file":   {"--train-y", filepath.Join(dir, "none.npy")},
		"has 1 columns":  {"--test-x", writeArray(t, dir, "x3", []int{q, 1}, x[:q])},
		"targets but":    {"--train-y", vy},
		"at least 2":     {"--train-x", writeArray(t, dir, "one", []int{1, 2}, x[:2]), "--train-y", writeArray(t, dir, "oney", []int{1}, y[:1])},
		"unknown kernel": {"--kernel", "cosine"},
		"1-d array":      {"--train-y", writeArray(t, dir, "y2", []int{n / 2, 2}, y[:n])},
	}
	for want, override := range bad {
		args := map[string]string{"--train-x": tx, "--train-y": ty, "--test-x": vx, "--test-y": vy, "--kernel": "rbf"}
		for i := 0; i < len(override); i += 2 {
			args[override[i]] = override[i+1]
		}
		var flat []string
		for k, v := range args {
			flat = append(flat, k, v)
		}
		_, err := runApp(t, append([]string{"gp"}, flat...)...)
		if err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(want, " ")) {
			t.Errorf("%s: error %v", want, err)
		}
	}
}
