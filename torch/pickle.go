package torch

import (
	"fmt"
	"io"

	"github.com/nlpodyssey/gopickle/pickle"
	"github.com/nlpodyssey/gopickle/pytorch"
	"github.com/nlpodyssey/gopickle/types"
)

// loadPT reads a torch.save file with a pure-Go unpickler: libtorch's C++
// unpickler cannot read the OrderedDict (with _metadata) that Python's
// Module.state_dict() returns.
func loadPT(path string) ([]Named, error) {
	obj, err := pytorch.LoadWithUnpickler(path, newUnpickler)
	if err != nil {
		return nil, fmt.Errorf("%s: not a PyTorch checkpoint: %w", path, err)
	}
	var out []Named
	if err := collectTensors(obj, "", &out); err != nil {
		CloseNamed(out)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, isDict := obj.(*types.Dict); !isDict {
		if _, isOrdered := obj.(*types.OrderedDict); !isOrdered {
			CloseNamed(out)
			return nil, fmt.Errorf("%s: not a state dict (the file holds a %T)", path, obj)
		}
	}
	return out, nil
}

func newUnpickler(r io.Reader) pickle.Unpickler {
	u := pickle.NewUnpickler(r)
	u.FindClass = func(module, name string) (interface{}, error) {
		switch module + "." + name {
		case "torch._utils._rebuild_parameter":
			return firstArgument{}, nil // an nn.Parameter: keep its tensor
		case "torch.jit._pickle.restore_type_tag":
			return firstArgument{}, nil // libtorch's pickler tags typed dicts: keep the dict
		case "collections.OrderedDict":
			return &types.OrderedDictClass{}, nil
		}
		return nil, fmt.Errorf("unsupported class %s.%s in checkpoint", module, name)
	}
	return u
}

// firstArgument is a pickled callable that returns its first argument.
type firstArgument struct{}

func (firstArgument) Call(args ...interface{}) (interface{}, error) {
	if len(args) < 1 {
		return nil, fmt.Errorf("pickle: call without arguments")
	}
	return args[0], nil
}

// collectTensors walks (nested) dicts in order, naming tensors by their key path.
func collectTensors(obj interface{}, prefix string, out *[]Named) error {
	join := func(k interface{}) (string, error) {
		s, ok := k.(string)
		if !ok {
			return "", fmt.Errorf("non-string key %v under %q", k, prefix)
		}
		if prefix == "" {
			return s, nil
		}
		return prefix + "." + s, nil
	}
	switch v := obj.(type) {
	case *pytorch.Tensor:
		t, err := fromPickled(v)
		if err != nil {
			return fmt.Errorf("tensor %q: %w", prefix, err)
		}
		*out = append(*out, Named{Name: prefix, Tensor: t})
	case *types.OrderedDict:
		for e := v.List.Front(); e != nil; e = e.Next() {
			entry := e.Value.(*types.OrderedDictEntry)
			name, err := join(entry.Key)
			if err != nil {
				return err
			}
			if err := collectTensors(entry.Value, name, out); err != nil {
				return err
			}
		}
	case *types.Dict:
		for _, entry := range *v {
			name, err := join(entry.Key)
			if err != nil {
				return err
			}
			if err := collectTensors(entry.Value, name, out); err != nil {
				return err
			}
		}
	}
	return nil // numbers, strings and the like are not state
}

var opAsStrided = newOp("aten::as_strided", "")

// fromPickled materialises a pickled tensor: its storage viewed with the saved
// size, stride and offset, made contiguous.
func fromPickled(p *pytorch.Tensor) (*Tensor, error) {
	var storage *Tensor
	switch s := p.Source.(type) {
	case *pytorch.FloatStorage:
		storage = FromFloat32(s.Data)
	case *pytorch.DoubleStorage:
		storage = FromFloat64(s.Data)
	case *pytorch.HalfStorage:
		storage = FromFloat32(s.Data)
	case *pytorch.BFloat16Storage:
		storage = FromFloat32(s.Data)
	case *pytorch.LongStorage:
		storage = FromInt64(s.Data)
	case *pytorch.IntStorage:
		storage = FromInt64(widen(s.Data)).ToDType(Int32)
	case *pytorch.ShortStorage:
		storage = FromInt64(widen(s.Data))
	case *pytorch.CharStorage:
		storage = FromInt64(widen(s.Data))
	case *pytorch.ByteStorage:
		storage = FromInt64(widen(s.Data)).ToDType(Uint8)
	case *pytorch.BoolStorage:
		storage = FromBool(s.Data)
	default:
		return nil, fmt.Errorf("unsupported storage %T", p.Source)
	}
	defer storage.Close()
	size, stride := toInt64s(p.Size), toInt64s(p.Stride)
	view := opAsStrided.tensor(storage, size, stride, int64(p.StorageOffset))
	defer view.Close()
	t := view.Contiguous().Clone()
	return t, t.Err()
}

func widen[T int32 | int16 | int8 | uint8](v []T) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

func toInt64s(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}
