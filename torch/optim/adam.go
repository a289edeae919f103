// Package optim holds optimisers over torch tensors: Adam with state that can
// be saved and restored, and gradient-norm clipping.
package optim

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tlbo-native/tlbo-native/torch"
)

// AdamOptions are Adam's hyperparameters (PyTorch's defaults: lr 1e-3,
// betas 0.9/0.999, eps 1e-8, no weight decay).
type AdamOptions struct {
	LR, Beta1, Beta2, Eps, WeightDecay float64
}

// DefaultAdam returns PyTorch's default Adam options with the learning rate lr.
func DefaultAdam(lr float64) AdamOptions {
	return AdamOptions{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
}

// Adam implements torch.optim.Adam (without amsgrad), step for step.
type Adam struct {
	Opts   AdamOptions
	params []*torch.Tensor
	state  []adamState
}

type adamState struct {
	step            int64
	expAvg, expAvg2 *torch.Tensor // nil until the first step
}

// NewAdam returns an Adam optimiser over params.
func NewAdam(params []*torch.Tensor, opts AdamOptions) *Adam {
	return &Adam{Opts: opts, params: params, state: make([]adamState, len(params))}
}

// SetLR changes the learning rate.
func (a *Adam) SetLR(lr float64) { a.Opts.LR = lr }

// ZeroGrad drops the gradients of every parameter.
func (a *Adam) ZeroGrad() error {
	for i, p := range a.params {
		if err := p.ZeroGrad(); err != nil {
			return fmt.Errorf("adam: zero grad of parameter %d: %w", i, err)
		}
	}
	return nil
}

// Step updates every parameter that has a gradient.
func (a *Adam) Step() error {
	var err error
	torch.NoGrad(func() {
		for i, p := range a.params {
			if err = a.update(i, p); err != nil {
				err = fmt.Errorf("adam: parameter %d: %w", i, err)
				return
			}
		}
	})
	return err
}

func (a *Adam) update(i int, p *torch.Tensor) error {
	g, err := p.Grad()
	if err != nil || g == nil {
		return err
	}
	defer g.Close()
	o := a.Opts
	if o.WeightDecay != 0 {
		wd := p.MulScalar(o.WeightDecay)
		defer wd.Close()
		decayed := g.Add(wd)
		defer decayed.Close()
		g = decayed
	}
	st := &a.state[i]
	if st.expAvg == nil {
		st.expAvg, st.expAvg2 = p.ZerosLike(), p.ZerosLike()
	}
	st.step++
	bc1 := 1 - math.Pow(o.Beta1, float64(st.step))
	bc2 := 1 - math.Pow(o.Beta2, float64(st.step))
	return torch.AdamStep_(p, g, st.expAvg, st.expAvg2, o.LR, o.Beta1, o.Beta2, o.Eps, bc1, bc2)
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// StateDict returns the optimiser state with names "<i>.step", "<i>.exp_avg"
// and "<i>.exp_avg_sq" (i the parameter index), plus "lr". The caller closes
// the returned tensors.
func (a *Adam) StateDict() []torch.Named {
	out := []torch.Named{{Name: "lr", Tensor: torch.FromFloat64([]float64{a.Opts.LR}, []int64{}...)}}
	for i, st := range a.state {
		if st.expAvg == nil {
			continue
		}
		k := strconv.Itoa(i)
		out = append(out,
			torch.Named{Name: k + ".step", Tensor: torch.FromInt64([]int64{st.step}, []int64{}...)},
			torch.Named{Name: k + ".exp_avg", Tensor: st.expAvg.Detach().To(torch.CPU)},
			torch.Named{Name: k + ".exp_avg_sq", Tensor: st.expAvg2.Detach().To(torch.CPU)})
	}
	return out
}

// LoadStateDict restores a state saved by StateDict for the same parameters.
func (a *Adam) LoadStateDict(sd []torch.Named) error {
	byName := make(map[string]*torch.Tensor, len(sd))
	for _, n := range sd {
		byName[n.Name] = n.Tensor
	}
	if lr, ok := byName["lr"]; ok {
		v, err := lr.Item()
		if err != nil {
			return fmt.Errorf("adam state: lr: %w", err)
		}
		a.Opts.LR = v
	}
	for i, p := range a.params {
		k := strconv.Itoa(i)
		step, ok := byName[k+".step"]
		if !ok {
			a.state[i] = adamState{}
			continue
		}
		st, err := restoreState(p, step, byName[k+".exp_avg"], byName[k+".exp_avg_sq"])
		if err != nil {
			return fmt.Errorf("adam state of parameter %d: %w", i, err)
		}
		a.state[i] = st
	}
	return nil
}

func restoreState(p, step, m, v *torch.Tensor) (adamState, error) {
	if m == nil || v == nil {
		return adamState{}, fmt.Errorf("exp_avg or exp_avg_sq missing")
	}
	n, err := step.Item()
	if err != nil {
		return adamState{}, err
	}
	want := fmt.Sprint(p.Shape())
	if fmt.Sprint(m.Shape()) != want || fmt.Sprint(v.Shape()) != want {
		return adamState{}, fmt.Errorf("shape %v, parameter has %s", m.Shape(), want)
	}
	st := adamState{step: int64(n), expAvg: p.ZerosLike(), expAvg2: p.ZerosLike()}
	if err := firstErr(st.expAvg.Copy_(m), st.expAvg2.Copy_(v)); err != nil {
		return adamState{}, err
	}
	return st, nil
}

// ClipGradNorm scales the gradients of params so that their joint Euclidean
// norm is at most maxNorm, as torch.nn.utils.clip_grad_norm_, and returns the
// norm before clipping.
func ClipGradNorm(params []*torch.Tensor, maxNorm float64) (float64, error) {
	var grads []*torch.Tensor
	defer func() {
		for _, g := range grads {
			g.Close()
		}
	}()
	total := 0.0
	for _, p := range params {
		g, err := p.Grad()
		if err != nil {
			return 0, err
		}
		if g == nil {
			continue
		}
		grads = append(grads, g)
		n := g.Norm()
		v, err := n.Item()
		n.Close()
		if err != nil {
			return 0, fmt.Errorf("clip grad norm: %w", err)
		}
		total += v * v
	}
	total = math.Sqrt(total)
	coef := maxNorm / (total + 1e-6)
	if coef >= 1 {
		return total, nil
	}
	var err error
	torch.NoGrad(func() {
		for _, g := range grads {
			if e := g.MulScalar_(coef); e != nil && err == nil {
				err = fmt.Errorf("clip grad norm: %w", e)
			}
		}
	})
	return total, err
}
