package task

import (
	"fmt"
	"math"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/models"
)

// Encode writes the encoder means (float64, one row per object) of the
// objects in req.In to the .npy file req.Out, the objects made into
// examples for the checkpoint's network (Spec.Bind).
func (d *Defined[O, E]) Encode(env *Env, req EncodeRequest) error {
	if d.s.ReadObjects == nil {
		return d.unsupported("encode")
	}
	net, _, err := d.loadNetwork(env, req.VAE)
	if err != nil {
		return err
	}
	defer net.Close()
	objs, err := d.s.ReadObjects(req.In)
	if err != nil {
		return err
	}
	if len(objs) == 0 {
		return fmt.Errorf("%s: no objects", req.In)
	}
	ex, rows, err := d.encodable(env, req, objs)
	if err != nil {
		return err
	}
	dim := net.LatentDim()
	mu := make([]float64, len(objs)*dim)
	for i := range mu {
		mu[i] = math.NaN()
	}
	if len(ex) > 0 {
		got, err := models.EncodeMeans(net, ex)
		if err != nil {
			return err
		}
		for k, i := range rows {
			copy(mu[i*dim:(i+1)*dim], got[k*dim:(k+1)*dim])
		}
	}
	if err := numpy.WriteNPY(req.Out, numpy.Array{Shape: []int{len(objs), dim}, Data: mu}); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "encoded %d objects into %d dimensions: %s\n", len(rows), dim, req.Out)
	if skipped := len(objs) - len(rows); skipped > 0 {
		fmt.Fprintf(env.Stdout, "skipped %d objects the network cannot take (rows of NaN)\n", skipped)
	}
	return nil
}

// encodable returns the examples of the objects the network can take and
// their rows: all of them, or an error naming the first that fails
// (1-based, as the file's objects are counted), unless req.SkipInvalid,
// which names each failure on env.Stderr and goes on.
func (d *Defined[O, E]) encodable(env *Env, req EncodeRequest, objs []O) ([]E, []int, error) {
	var ex []E
	var rows []int
	for i, o := range objs {
		e, err := d.s.Example(o)
		if err != nil && !req.SkipInvalid {
			return nil, nil, fmt.Errorf("%s: object %d: %w (--skip-invalid writes a row of NaN for it instead)", req.In, i+1, err)
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: object %d skipped: %v\n", req.In, i+1, err)
			continue
		}
		ex, rows = append(ex, e), append(rows, i)
	}
	return ex, rows, nil
}

// Decode writes the objects decoded from the latent points of the .npy file
// req.In (n x latent) to req.Out in the task's format; invalid decodes are
// empty entries, counted on env.Stderr.
func (d *Defined[O, E]) Decode(env *Env, req DecodeRequest) error {
	if d.s.WriteObjects == nil {
		return d.unsupported("decode")
	}
	net, _, err := models.LoadVAE[E](req.VAE, env.Device, d.s.Networks...)
	if err != nil {
		return err
	}
	defer net.Close()
	z, err := readLatents(req.In, net.LatentDim())
	if err != nil {
		return err
	}
	objs, valid, err := d.s.Decode(net, z, req.Decode, env.Seed)
	if err != nil {
		return err
	}
	if err := d.s.WriteObjects(req.Out, objs, valid); err != nil {
		return err
	}
	invalid := 0
	for _, v := range valid {
		if !v {
			invalid++
		}
	}
	fmt.Fprintf(env.Stderr, "decoded %d points: %d invalid\n", len(valid), invalid)
	fmt.Fprintf(env.Stdout, "decoded %s\n", req.Out)
	return nil
}

// readLatents reads an (n, latent) array of float64 or float32 latent
// points, checking that every value is finite.
func readLatents(path string, latent int) ([]float64, error) {
	a, err := numpy.ReadNPY(path)
	if err != nil {
		return nil, err
	}
	if len(a.Shape) != 2 || a.Shape[1] != latent || a.Shape[0] == 0 {
		return nil, fmt.Errorf("%s: shape %v, want (n, %d) with n >= 1", path, a.Shape, latent)
	}
	var z []float64
	switch v := a.Data.(type) {
	case []float64:
		z = v
	case []float32:
		z = make([]float64, len(v))
		for i, x := range v {
			z[i] = float64(x)
		}
	default:
		return nil, fmt.Errorf("%s: dtype of %T, want float64 or float32", path, a.Data)
	}
	for i, x := range z {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%s: row %d column %d is %v", path, i/latent, i%latent, x)
		}
	}
	return z, nil
}
