package torch_test

import (
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/torch"
)

func TestBadInputGivesErrorsNamingTheOp(t *testing.T) {
	x := torch.FromFloat32([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	defer x.Close()
	idx := torch.FromInt64([]int64{0, 7}, 2)
	defer idx.Close()
	cases := []struct {
		op  string
		out *torch.Tensor
	}{
		{"aten::matmul", x.MatMul(x)},
		{"aten::add", x.Add(torch.FromFloat32([]float32{1, 2}, 2))},
		{"aten::index_select", x.IndexSelect(1, idx)},
		{"aten::reshape", x.Reshape(4, 2)},
		{"aten::cat", torch.Cat([]*torch.Tensor{x, torch.FromFloat32([]float32{1}, 1)}, 0)},
		{"aten::conv1d", torch.Conv1d(x, x, nil, 1, 0, 1, 1)},
		{"aten::cross_entropy_loss", torch.CrossEntropyLoss(x, x.ToDType(torch.Bool), torch.ReduceMean)},
		{"aten::gather", x.Gather(0, x)}, // float index: dtype mismatch
		{"aten::narrow", x.Narrow(1, 2, 5)},
	}
	for _, c := range cases {
		err := c.out.Err()
		if err == nil {
			t.Errorf("%s: no error", c.op)
			continue
		}
		if !strings.Contains(err.Error(), c.op) {
			t.Errorf("error does not name %s: %v", c.op, err)
		}
	}
	if _, err := torch.FromFloat32([]float32{1, 2, 3}, 2, 2).Float32s(); err == nil {
		t.Error("data/shape mismatch accepted")
	}
	if _, err := x.Int64s(); err != nil {
		t.Errorf("conversion to int64 failed: %v", err)
	}
	if err := x.Sum().Backward(); err == nil {
		t.Error("backward through a tensor without grad succeeded")
	}
}

func TestUnknownDevices(t *testing.T) {
	for _, d := range []string{"tpu", "cuda:x", "cuda:-1", "gpu0", ""} {
		if _, err := torch.ParseDevice(d); err == nil {
			t.Errorf("device %q accepted", d)
		}
	}
	if !torch.CUDAAvailable() {
		if _, err := torch.ParseDevice("cuda"); err == nil {
			t.Error("cuda accepted without a GPU")
		}
		if dev, err := torch.ParseDevice("auto"); err != nil || dev != torch.CPU {
			t.Errorf("auto gave %v, %v", dev, err)
		}
		x := torch.FromFloat32([]float32{1}, 1)
		if err := x.To(torch.CUDA(0)).Err(); err == nil {
			t.Error("moving to CUDA without CUDA succeeded")
		}
	}
}

func TestCUDA(t *testing.T) {
	if !torch.CUDAAvailable() {
		t.Skip("no CUDA device seen")
	}
	dev, err := torch.ParseDevice("cuda")
	if err != nil {
		t.Fatal(err)
	}
	x := torch.FromFloat32([]float32{1, 2, 3, 4}, 2, 2).To(dev).SetRequiresGrad(true)
	y := x.MatMul(x).Sum()
	if err := y.Backward(); err != nil {
		t.Fatal(err)
	}
	if x.Device().Type != torch.CUDADevice {
		t.Fatalf("tensor on %v", x.Device())
	}
	g, err := x.Grad()
	if err != nil {
		t.Fatal(err)
	}
	v, _ := g.Float32s()
	want := []float32{7, 11, 9, 13} // d/dx sum(x x) = 1 x^T + x^T 1 = [3 7; 3 7] + [4 4; 6 6]
	for i := range want {
		if v[i] != want[i] {
			t.Fatalf("cuda grad %v want %v", v, want)
		}
	}
}
