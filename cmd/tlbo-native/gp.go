package main

import (
	"fmt"
	"math"
	"time"

	"github.com/urfave/cli/v2"
	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/gp"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// gpCommand fits a GP to .npy data and scores it on held-out data.
func gpCommand() *cli.Command {
	return &cli.Command{
		Name:  "gp",
		Usage: "fit a GP (SGPR, or exact) to .npy data and print the held-out log-likelihood",
		Description: "Inputs are normalised to the unit box and targets standardised as in the reference; the last\n" +
			"line is `test_loglik <mean predictive log-likelihood per point, scale of y> rmse <r> fit_s <seconds>`.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "train-x", Required: true, Usage: "training inputs, N x d .npy"},
			&cli.StringFlag{Name: "train-y", Required: true, Usage: "training targets, N .npy"},
			&cli.StringFlag{Name: "test-x", Required: true, Usage: "test inputs, Q x d .npy"},
			&cli.StringFlag{Name: "test-y", Required: true, Usage: "test targets, Q .npy"},
			&cli.IntFlag{Name: "inducing", Value: 500, Usage: "inducing points M (0 or >= N: exact GP)"},
			&cli.StringFlag{Name: "kernel", Value: "rbf", Usage: "rbf or matern52"},
			&cli.BoolFlag{Name: "raw", Usage: "fit inputs and targets as they are, unnormalised (the authors' molecule GP)"},
			&cli.BoolFlag{Name: "warp", Usage: "learn Kumaraswamy input warping (W-LBO)"},
			&cli.IntFlag{Name: "max-iter", Usage: "L-BFGS iterations (0: the default, 200)"},
			&cli.Uint64Flag{Name: "seed", Value: 0, Usage: "seed of the k-means initialisation"},
		},
		Action: runGP,
	}
}

func runGP(c *cli.Context) error {
	kern, err := gp.ParseKernel(c.String("kernel"))
	if err != nil {
		return err
	}
	if c.Int("inducing") < 0 {
		return fmt.Errorf("--inducing %d: want >= 0", c.Int("inducing"))
	}
	x, err := readMatrix(c.String("train-x"))
	if err != nil {
		return err
	}
	y, err := readVector(c.String("train-y"))
	if err != nil {
		return err
	}
	xt, err := readMatrix(c.String("test-x"))
	if err != nil {
		return err
	}
	yt, err := readVector(c.String("test-y"))
	if err != nil {
		return err
	}
	if err := checkShapes(x, y, xt, yt, c); err != nil {
		return err
	}
	start := time.Now()
	fit := gp.FitRegressor
	if c.Bool("raw") {
		fit = gp.FitRegressorRaw
	}
	reg, err := fit(x, y, gp.Options{
		Inducing: c.Int("inducing"), Kernel: kern, Warp: c.Bool("warp"),
		Seed: c.Uint64("seed"), MaxIter: c.Int("max-iter"),
	})
	if err != nil {
		return err
	}
	fitS := time.Since(start).Seconds()
	ll, rmse, err := reg.Score(xt, yt)
	if err != nil {
		return err
	}
	m := reg.Model
	info := m.Info()
	kind := "exact"
	if m.Sparse() {
		r, _ := m.Inducing().Dims()
		kind = fmt.Sprintf("sgpr M=%d", r)
	}
	fmt.Printf("model %s kernel %s warp %v N=%d d=%d: objective %.6g, %d evaluations, %d iterations, %s\n",
		kind, kern, c.Bool("warp"), m.Points(), m.Dim(), m.LogLik()+m.LogPrior(), info.Evaluations, info.Iterations, info.Status)
	fmt.Printf("test_loglik %.6f rmse %.6f fit_s %.3f\n", ll, rmse, fitS)
	return nil
}

// checkShapes validates the four arrays against each other.
func checkShapes(x *mat.Dense, y []float64, xt *mat.Dense, yt []float64, c *cli.Context) error {
	n, d := x.Dims()
	q, dt := xt.Dims()
	switch {
	case n < 2:
		return fmt.Errorf("%s: %d training points, need at least 2", c.String("train-x"), n)
	case len(y) != n:
		return fmt.Errorf("%s has %d targets but %s has %d rows", c.String("train-y"), len(y), c.String("train-x"), n)
	case dt != d:
		return fmt.Errorf("%s has %d columns but %s has %d", c.String("test-x"), dt, c.String("train-x"), d)
	case len(yt) != q:
		return fmt.Errorf("%s has %d targets but %s has %d rows", c.String("test-y"), len(yt), c.String("test-x"), q)
	case q == 0:
		return fmt.Errorf("%s: no test points", c.String("test-x"))
	}
	return nil
}

// readFloat64 reads a numeric .npy file as float64 values and its shape,
// rejecting NaN and Inf.
func readFloat64(path string) ([]float64, []int, error) {
	a, err := numpy.ReadNPY(path)
	if err != nil {
		return nil, nil, err // names the file already
	}
	var out []float64
	switch v := a.Data.(type) {
	case []float64:
		out = v
	case []float32:
		out = make([]float64, len(v))
		for i, f := range v {
			out[i] = float64(f)
		}
	case []int64:
		out = make([]float64, len(v))
		for i, f := range v {
			out[i] = float64(f)
		}
	case []int32:
		out = make([]float64, len(v))
		for i, f := range v {
			out[i] = float64(f)
		}
	default:
		return nil, nil, fmt.Errorf("%s: array of %T, want a numeric array", path, a.Data)
	}
	for i, v := range out {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if len(a.Shape) == 2 {
				return nil, nil, fmt.Errorf("%s: row %d, column %d is %v", path, i/a.Shape[1], i%a.Shape[1], v)
			}
			return nil, nil, fmt.Errorf("%s: element %d is %v", path, i, v)
		}
	}
	return out, a.Shape, nil
}

// readMatrix reads an N x d array (a 1-d array is N x 1).
func readMatrix(path string) (*mat.Dense, error) {
	v, shape, err := readFloat64(path)
	if err != nil {
		return nil, err
	}
	switch len(shape) {
	case 1:
		shape = []int{shape[0], 1}
	case 2:
	default:
		return nil, fmt.Errorf("%s: shape %v, want a 2-d array (points x dimensions)", path, shape)
	}
	if shape[0] == 0 || shape[1] == 0 {
		return nil, fmt.Errorf("%s: empty array of shape %v", path, shape)
	}
	return mat.NewDense(shape[0], shape[1], v), nil
}

// readVector reads an N array (or N x 1).
func readVector(path string) ([]float64, error) {
	v, shape, err := readFloat64(path)
	if err != nil {
		return nil, err
	}
	if len(shape) == 1 || (len(shape) == 2 && shape[1] == 1) {
		return v, nil
	}
	return nil, fmt.Errorf("%s: shape %v, want a 1-d array of targets", path, shape)
}
