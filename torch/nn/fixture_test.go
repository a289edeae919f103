package nn_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/fixture/torchfixture"
	"github.com/tlbo-native/tlbo-native/torch"
	"github.com/tlbo-native/tlbo-native/torch/nn"
)

// Tolerances for float32 results of the same libtorch kernels as the fixture
// (PyTorch 1.13): differences come only from summation order.
const atol, rtol = 1e-5, 1e-4

type moduleCase struct {
	file    string
	train   bool
	module  func() nn.Module
	forward func(m nn.Module, in []*torch.Tensor) []*torch.Tensor
}

func single(m nn.Module, in []*torch.Tensor) []*torch.Tensor {
	return []*torch.Tensor{m.(nn.Layer).Forward(in[0])}
}

var moduleCases = []moduleCase{
	{"linear", true, func() nn.Module { return nn.NewLinear(5, 3) }, func(m nn.Module, in []*torch.Tensor) []*torch.Tensor {
		return []*torch.Tensor{m.(nn.Layer).Forward(in[0])}
	}},
	{"conv1d", true, func() nn.Module { return nn.NewConv1d(4, 3, 3) }, single},
	{"conv2d", true, func() nn.Module { return nn.NewConv2d(2, 3, 3, 2, 1) }, single},
	{"convtranspose2d", true, func() nn.Module { return nn.NewConvTranspose2d(3, 2, 3, 2, 1, 1) }, single},
	{"batchnorm1d_train", true, func() nn.Module { return nn.NewBatchNorm(3) }, single},
	{"batchnorm1d_eval", false, func() nn.Module { return nn.NewBatchNorm(3) }, single},
	{"batchnorm2d_train", true, func() nn.Module { return nn.NewBatchNorm(2) }, single},
	{"gru", true, func() nn.Module { return nn.NewGRU(4, 5, 2, true) },
		func(m nn.Module, in []*torch.Tensor) []*torch.Tensor {
			out, hn := m.(*nn.GRU).Forward(in[0], in[1])
			return []*torch.Tensor{out, hn}
		}},
	{"grucell", true, func() nn.Module { return nn.NewGRUCell(4, 5) },
		func(m nn.Module, in []*torch.Tensor) []*torch.Tensor {
			return []*torch.Tensor{m.(*nn.GRUCell).Forward(in[0], in[1])}
		}},
	{"embedding", true, func() nn.Module { return nn.NewEmbedding(6, 3) }, single},
}

// stateful is what every module offers through nn.Base.
type stateful interface {
	nn.Module
	LoadStateDict([]torch.Named) error
	SetTraining(bool)
	NamedParameters() []torch.Named
	StateDict() []torch.Named
	Close()
}

func TestModulesMatchPyTorch(t *testing.T) {
	for _, c := range moduleCases {
		t.Run(c.file, func(t *testing.T) {
			fx := torchfixture.Load(t, "torch", c.file+".npz")
			m := c.module().(stateful)
			defer m.Close()
			if err := m.LoadStateDict(fx.WithPrefix("param.")); err != nil {
				t.Fatal(err)
			}
			m.SetTraining(c.train)
			sc := torch.NewScope()
			defer sc.Close()
			var inputs []*torch.Tensor
			for k := 0; ; k++ {
				x, ok := fx[fmt.Sprintf("input.%d", k)]
				if !ok {
					break
				}
				x = sc.Own(x.Clone().Detach())
				if x.DType() == torch.Float32 {
					x.SetRequiresGrad(true)
				}
				inputs = append(inputs, x)
			}
			outs := c.forward(m, inputs)
			var loss *torch.Tensor
			for k, o := range outs {
				torchfixture.Close(t, fmt.Sprintf("output %d", k), o, fx.Get(t, fmt.Sprintf("output.%d", k)), atol, rtol)
				term := o.Mul(fx.Get(t, fmt.Sprintf("grad_output.%d", k))).Sum()
				if loss == nil {
					loss = term
				} else {
					loss = loss.Add(term)
				}
			}
			if err := loss.Backward(); err != nil {
				t.Fatal(err)
			}
			checkGradients(t, fx, m, inputs)
			for _, b := range m.StateDict() {
				if want, ok := fx["after."+b.Name]; ok {
					torchfixture.Close(t, "buffer "+b.Name, b.Tensor, want, atol, rtol)
				}
			}
		})
	}
}

func checkGradients(t *testing.T, fx torchfixture.Set, m stateful, inputs []*torch.Tensor) {
	t.Helper()
	for k, x := range inputs {
		want, ok := fx[fmt.Sprintf("grad.input.%d", k)]
		if !ok {
			continue
		}
		g, err := x.Grad()
		if err != nil || g == nil {
			t.Fatalf("input %d: no gradient (%v)", k, err)
		}
		torchfixture.Close(t, fmt.Sprintf("grad of input %d", k), g, want, atol, rtol)
		g.Close()
	}
	for _, p := range m.NamedParameters() {
		g, err := p.Tensor.Grad()
		if err != nil || g == nil {
			t.Fatalf("%s: no gradient (%v)", p.Name, err)
		}
		torchfixture.Close(t, "grad of "+p.Name, g, fx.Get(t, "grad.param."+p.Name), atol, rtol)
		g.Close()
	}
}

func TestStateDictNamesLikePyTorch(t *testing.T) {
	seq := nn.NewSequential(nn.NewLinear(3, 2), nn.ReLU(), nn.NewBatchNorm(2))
	defer seq.Close()
	var names []string
	for _, n := range seq.StateDict() {
		names = append(names, n.Name)
	}
	want := "0.weight 0.bias 2.weight 2.bias 2.running_mean 2.running_var 2.num_batches_tracked"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("names %q, want %q", got, want)
	}
}

func TestLoadStateDictErrors(t *testing.T) {
	lin := nn.NewLinear(3, 2)
	defer lin.Close()
	w := torch.Zeros([]int64{2, 3}, torch.Float32, torch.CPU)
	wrong := torch.Zeros([]int64{3, 3}, torch.Float32, torch.CPU)
	b := torch.Zeros([]int64{2}, torch.Float32, torch.CPU)
	cases := map[string][]torch.Named{
		"missing keys: bias":                             {{Name: "weight", Tensor: w}},
		"unexpected keys: extra":                         {{Name: "weight", Tensor: w}, {Name: "bias", Tensor: b}, {Name: "extra", Tensor: b}},
		"shape mismatch: weight (want [2 3], got [3 3])": {{Name: "weight", Tensor: wrong}, {Name: "bias", Tensor: b}},
	}
	for want, sd := range cases {
		err := lin.LoadStateDict(sd)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want an error with %q", err, want)
		}
	}
}

func TestDropoutModes(t *testing.T) {
	d := nn.NewDropout(0.5)
	x := torch.Ones([]int64{10000}, torch.Float32, torch.CPU)
	defer x.Close()
	y := d.Forward(x)
	v, err := y.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	zeros := 0
	for _, e := range v {
		if e == 0 {
			zeros++
		} else if e != 2 {
			t.Fatalf("kept element scaled to %v, want 2", e)
		}
	}
	if zeros < 4700 || zeros > 5300 {
		t.Errorf("%d of 10000 zeroed with p=0.5", zeros)
	}
	d.SetTraining(false)
	s, _ := d.Forward(x).Sum().Item()
	if s != 10000 {
		t.Errorf("eval dropout changed the input: sum %v", s)
	}
}
