package numpy_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// A 2 x 3 float32 matrix written as a .npy file (atomically) and read back;
// Float64s widens any numeric dtype.
func ExampleWriteNPY() {
	dir, err := os.MkdirTemp("", "numpy-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "z.npy")
	err = numpy.WriteNPY(path, numpy.Array{Shape: []int{2, 3}, Data: []float32{1, 2, 3, 4, 5, 6.5}})
	if err != nil {
		panic(err)
	}
	a, err := numpy.ReadNPY(path)
	if err != nil {
		panic(err)
	}
	x, _ := a.Float64s()
	fmt.Printf("shape %v, %T, as float64 %v\n", a.Shape, a.Data, x)
	// Output:
	// shape [2 3], []float32, as float64 [1 2 3 4 5 6.5]
}

// An .npz archive of named arrays of several dtypes (strings included, as
// numpy's unicode arrays), read back in order.
func ExampleWriteNPZ() {
	dir, err := os.MkdirTemp("", "numpy-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "data.npz")
	err = numpy.WriteNPZ(path, []numpy.Array{
		{Name: "smiles", Shape: []int{2}, Data: []string{"CCO", "c1ccccc1"}},
		{Name: "score", Shape: []int{2}, Data: []float64{-0.26, 2.09}},
		{Name: "split", Shape: []int{2}, Data: []int64{0, 1}},
	})
	if err != nil {
		panic(err)
	}
	arrays, err := numpy.ReadNPZ(path)
	if err != nil {
		panic(err)
	}
	for _, a := range arrays {
		fmt.Printf("%s %v %v\n", a.Name, a.Shape, a.Data)
	}
	// Output:
	// smiles [2] [CCO c1ccccc1]
	// score [2] [-0.26 2.09]
	// split [2] [0 1]
}
