package torch

// #include "tlbo.h"
import "C"

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"

	"github.com/nlpodyssey/gopickle/pickle"
	"github.com/nlpodyssey/gopickle/pytorch"
	"github.com/nlpodyssey/gopickle/types"

	"github.com/tlbo-native/tlbo-native/internal/zipcrc"
)

// loadPT reads a torch.save file with a pure-Go unpickler: libtorch's C++
// unpickler cannot read the OrderedDict (with _metadata) that Python's
// Module.state_dict() returns.
func loadPT(path string) ([]Named, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	out, err := readPT(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// readPT reads a state dict in torch.save's zip format (PyTorch 1.6 and later)
// from r, which holds size bytes. Untrusted input gives an error, never a
// panic or an allocation larger than the data the archive holds.
func readPT(r io.ReaderAt, size int64) ([]Named, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("not a PyTorch checkpoint (torch.save's zip format, PyTorch 1.6 and later): %w", err)
	}
	obj, err := unpickleArchive(zr)
	var corrupt *zipcrc.Error
	if errors.As(err, &corrupt) {
		return nil, corrupt // it names the record, and explains any error unpickling it
	}
	if err != nil {
		return nil, fmt.Errorf("not a PyTorch checkpoint: %w", err)
	}
	var out []Named
	if err := collectTensors(obj, "", &out); err != nil {
		CloseNamed(out)
		return nil, err
	}
	if _, isDict := obj.(*types.Dict); !isDict {
		if _, isOrdered := obj.(*types.OrderedDict); !isOrdered {
			CloseNamed(out)
			return nil, fmt.Errorf("not a state dict (the file holds a %T)", obj)
		}
	}
	return out, nil
}

// maxPickleBytes bounds data.pkl, which holds only names and tensor metadata.
const maxPickleBytes = 64 << 20

// unpickleArchive unpickles the data.pkl record of a torch.save archive,
// loading the storages it refers to from the archive's other records, and
// checks the CRC-32 of every record.
func unpickleArchive(zr *zip.Reader) (obj any, err error) {
	records := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		_, name := path.Split(f.Name)
		records[name] = f
	}
	if _, ok := records["constants.pkl"]; ok {
		return nil, fmt.Errorf("a TorchScript archive, not a state dict")
	}
	data, err := readRecord(records, "data.pkl", maxPickleBytes)
	if err != nil {
		return nil, err
	}
	if err := scanPickle(data); err != nil {
		return nil, fmt.Errorf("data.pkl: %w", err)
	}
	u := newUnpickler(bytes.NewReader(data))
	storages := map[string]pytorch.StorageInterface{}
	u.PersistentLoad = func(id any) (any, error) { return loadStorage(id, records, storages) }
	// gopickle panics on some malformed opcodes (e.g. negative lengths):
	// report them as errors.
	defer func() {
		if p := recover(); p != nil {
			obj, err = nil, fmt.Errorf("data.pkl: malformed pickle: %v", p)
		}
	}()
	obj, err = u.Load()
	if err != nil {
		return nil, fmt.Errorf("data.pkl: %w", err)
	}
	if err := verifyUnread(zr, records, storages); err != nil {
		return nil, err
	}
	return obj, nil
}

// verifyUnread checks the CRC-32 of the records neither data.pkl nor a
// storage it refers to (version, byteorder and the like): the whole file is
// intact or refused.
func verifyUnread(zr *zip.Reader, records map[string]*zip.File, storages map[string]pytorch.StorageInterface) error {
	read := map[*zip.File]bool{records["data.pkl"]: true}
	for key := range storages {
		read[records[key]] = true
	}
	for _, f := range zr.File {
		if read[f] {
			continue
		}
		r, err := zipcrc.Open(f)
		if err != nil {
			return err
		}
		err = r.Verify()
		r.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// readRecord reads a whole archive record of at most limit bytes, checking
// its length and CRC-32.
func readRecord(records map[string]*zip.File, name string, limit int64) ([]byte, error) {
	f, ok := records[name]
	if !ok {
		return nil, fmt.Errorf("no record %q in the archive", name)
	}
	return zipcrc.ReadAll(f, limit)
}

// storageClass is a pickled storage type with its element size in bytes.
type storageClass struct {
	pytorch.StorageClassInterface
	elemSize int
}

var storageClasses = map[string]storageClass{
	"torch.FloatStorage":    {&pytorch.FloatStorageClass{}, 4},
	"torch.DoubleStorage":   {&pytorch.DoubleStorageClass{}, 8},
	"torch.HalfStorage":     {&pytorch.HalfStorageClass{}, 2},
	"torch.BFloat16Storage": {&pytorch.BFloat16StorageClass{}, 2},
	"torch.LongStorage":     {&pytorch.LongStorageClass{}, 8},
	"torch.IntStorage":      {&pytorch.IntStorageClass{}, 4},
	"torch.ShortStorage":    {&pytorch.ShortStorageClass{}, 2},
	"torch.CharStorage":     {&pytorch.CharStorageClass{}, 1},
	"torch.ByteStorage":     {&pytorch.ByteStorageClass{}, 1},
	"torch.BoolStorage":     {&pytorch.BoolStorageClass{}, 1},
}

// loadStorage resolves a persistent id ('storage', class, key, location,
// numel) to the storage in record key, read once per key and its CRC-32
// checked. The element count must match the record's size, so that a forged
// count allocates nothing.
func loadStorage(id any, records map[string]*zip.File, loaded map[string]pytorch.StorageInterface) (any, error) {
	tuple, ok := id.(*types.Tuple)
	if !ok || tuple.Len() != 5 {
		return nil, fmt.Errorf("persistent id (a %T): want a tuple ('storage', class, key, location, size)", id)
	}
	kind, _ := tuple.Get(0).(string)
	class, classOK := tuple.Get(1).(storageClass)
	key, keyOK := tuple.Get(2).(string)
	location, locOK := tuple.Get(3).(string)
	numel, numelOK := tuple.Get(4).(int)
	if kind != "storage" || !classOK || !keyOK || !locOK || !numelOK || numel < 0 {
		return nil, fmt.Errorf("persistent id: want ('storage', a storage class, key, location, size >= 0)")
	}
	if s, ok := loaded[key]; ok {
		return s, nil
	}
	f, ok := records[key]
	if !ok {
		return nil, fmt.Errorf("storage %q: no such record in the archive", key)
	}
	if f.UncompressedSize64/uint64(class.elemSize) < uint64(numel) {
		return nil, fmt.Errorf("storage %q: %d elements of %d bytes, the record holds %d bytes",
			key, numel, class.elemSize, f.UncompressedSize64)
	}
	rc, err := zipcrc.Open(f)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	s := class.New(numel, location)
	err = s.SetFromFileWithSize(fullReader{rc}, numel)
	if verr := rc.Verify(); verr != nil { // also the bytes after numel's, which a view may not reach
		return nil, verr
	}
	if err != nil {
		return nil, fmt.Errorf("storage %q: %w", key, err)
	}
	loaded[key] = s
	return s, nil
}

// fullReader fills the whole buffer on each Read, or fails: gopickle's
// storages take what one Read returns as a full buffer, and neither a
// decompressor nor the end of a record need fill it.
type fullReader struct{ r io.Reader }

func (f fullReader) Read(p []byte) (int, error) {
	n, err := io.ReadFull(f.r, p)
	if n == len(p) {
		return n, nil
	}
	return n, err
}

func newUnpickler(r io.Reader) pickle.Unpickler {
	u := pickle.NewUnpickler(r)
	u.FindClass = func(module, name string) (any, error) {
		full := module + "." + name
		if c, ok := storageClasses[full]; ok {
			return c, nil
		}
		switch full {
		case "torch._utils._rebuild_tensor_v2":
			return &pytorch.RebuildTensorV2{}, nil
		case "torch._utils._rebuild_parameter":
			return firstArgument{}, nil // an nn.Parameter: keep its tensor
		case "torch.jit._pickle.restore_type_tag":
			return firstArgument{}, nil // libtorch's pickler tags typed dicts: keep the dict
		case "collections.OrderedDict":
			return &types.OrderedDictClass{}, nil
		}
		return nil, fmt.Errorf("unsupported class %s in checkpoint", full)
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

// maxNesting bounds the depth of nested dicts: a state dict nests a few
// levels, and a crafted pickle could nest millions or refer to itself.
const maxNesting = 64

// collectTensors walks (nested) dicts in order, naming tensors by their key path.
func collectTensors(obj any, prefix string, out *[]Named) error {
	return collectNested(obj, prefix, out, 0)
}

func collectNested(obj any, prefix string, out *[]Named, depth int) error {
	if depth > maxNesting {
		return fmt.Errorf("dicts nested deeper than %d levels under %q", maxNesting, prefix)
	}
	entry := func(k, v any) error {
		s, ok := k.(string)
		if !ok {
			return fmt.Errorf("non-string key (a %T) under %q", k, prefix)
		}
		if prefix != "" {
			s = prefix + "." + s
		}
		return collectNested(v, s, out, depth+1)
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
			kv, ok := e.Value.(*types.OrderedDictEntry)
			if !ok {
				return fmt.Errorf("malformed OrderedDict under %q", prefix)
			}
			if err := entry(kv.Key, kv.Value); err != nil {
				return err
			}
		}
	case *types.Dict:
		for _, kv := range *v {
			if err := entry(kv.Key, kv.Value); err != nil {
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
	storage, n, err := storageTensor(p.Source)
	if err != nil {
		return nil, err
	}
	defer storage.Close()
	if err := checkView(p.Size, p.Stride, p.StorageOffset, n); err != nil {
		return nil, err
	}
	view := opAsStrided.tensor(storage, toInt64s(p.Size), toInt64s(p.Stride), int64(p.StorageOffset))
	defer view.Close()
	c := view.Contiguous()
	defer c.Close()
	t := c.Clone()
	return t, t.Err()
}

// storageTensor copies a pickled storage into a 1-d tensor and returns its length.
func storageTensor(src pytorch.StorageInterface) (*Tensor, int, error) {
	var t *Tensor
	var n int
	switch s := src.(type) {
	case *pytorch.FloatStorage:
		t, n = FromFloat32(s.Data), len(s.Data)
	case *pytorch.DoubleStorage:
		t, n = FromFloat64(s.Data), len(s.Data)
	case *pytorch.HalfStorage:
		t, n = FromFloat32(s.Data), len(s.Data)
	case *pytorch.BFloat16Storage:
		t, n = FromFloat32(s.Data), len(s.Data)
	case *pytorch.LongStorage:
		t, n = FromInt64(s.Data), len(s.Data)
	case *pytorch.IntStorage:
		t, n = converted(widen(s.Data), Int32), len(s.Data)
	case *pytorch.ShortStorage:
		t, n = FromInt64(widen(s.Data)), len(s.Data)
	case *pytorch.CharStorage:
		t, n = FromInt64(widen(s.Data)), len(s.Data)
	case *pytorch.ByteStorage:
		t, n = converted(widen(s.Data), Uint8), len(s.Data)
	case *pytorch.BoolStorage:
		t, n = FromBool(s.Data), len(s.Data)
	default:
		return nil, 0, fmt.Errorf("unsupported storage %T", src)
	}
	return t, n, t.Err()
}

// converted makes an int64 tensor of v converted to dtype.
func converted(v []int64, dtype DType) *Tensor {
	wide := FromInt64(v)
	defer wide.Close()
	return wide.ToDType(dtype)
}

// maxExpanded bounds the elements of a tensor that views its storage with
// zero strides (as an expanded tensor does): more than the storage holds is
// allowed only up to this many.
const maxExpanded = 1 << 20

// checkView checks a saved size, stride and offset against a storage of n
// elements, so that a forged header can neither read outside the storage nor
// make libtorch allocate far more than the file holds.
func checkView(size, stride []int, offset, n int) error {
	if len(size) != len(stride) || len(size) > C.TLBO_MAX_DIMS {
		return fmt.Errorf("%d sizes and %d strides: want the same number, at most %d", len(size), len(stride), C.TLBO_MAX_DIMS)
	}
	for i := range size {
		if size[i] < 0 || stride[i] < 0 {
			return fmt.Errorf("negative size or stride (%v, %v)", size, stride)
		}
	}
	if slices.Contains(size, 0) { // no elements: any offset within the storage
		if offset < 0 || offset > n {
			return fmt.Errorf("storage offset %d outside a storage of %d elements", offset, n)
		}
		return nil
	}
	if offset < 0 || offset >= n {
		return fmt.Errorf("storage offset %d outside a storage of %d elements", offset, n)
	}
	numel, last, limit := 1, offset, max(n, maxExpanded)
	for i, s := range size {
		if numel > limit/s {
			return fmt.Errorf("size %v: more elements than the storage's %d", size, n)
		}
		numel *= s
		if stride[i] > 0 && s-1 > (n-1-last)/stride[i] {
			return fmt.Errorf("size %v, stride %v and offset %d reach beyond a storage of %d elements",
				size, stride, offset, n)
		}
		last += (s - 1) * stride[i]
	}
	return nil
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
