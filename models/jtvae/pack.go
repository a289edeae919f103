package jtvae

import (
	"bytes"
	"compress/flate"
	"encoding/gob"
	"fmt"
	"io"
	"slices"
	"sync"
)

// PackVersion names Pack's encoding, for packed examples kept on disk (the
// molecule task's featurisation cache): it changes whenever the encoding
// does, so that bytes packed otherwise are refused, not misread. 1 was gob
// alone (before 2026-11-27), 2 is gob deflated.
const PackVersion = 2

// packed is what Pack encodes: the fields Collate reads.
type packed struct {
	Tree     Tree
	Graph    Graph
	Assembly []Group
}

// Pack returns ex with its tree, graph and assembly candidates gob-encoded
// and deflated into Packed, which is what lets a large data set stay in
// memory: on ZINC molecules about 2.2 KiB a molecule against 49 KiB
// decoded (gob alone: 16 KiB; its one-hot features and per-example type
// descriptors compress about sevenfold). Collate unpacks (a fraction of a
// millisecond a molecule); Vocab and Smiles stay as they are. Packing a
// packed example returns it.
func Pack(ex Example) (Example, error) {
	if ex.Packed != nil {
		return ex, nil
	}
	var b bytes.Buffer
	w := deflaters.Get().(*flate.Writer)
	defer deflaters.Put(w)
	w.Reset(&b)
	if err := gob.NewEncoder(w).Encode(&packed{Tree: ex.Tree, Graph: ex.Graph, Assembly: ex.Assembly}); err != nil {
		return Example{}, fmt.Errorf("jtvae: pack example: %w", err)
	}
	if err := w.Close(); err != nil {
		return Example{}, fmt.Errorf("jtvae: pack example: %w", err)
	}
	// A copy of exact size: the buffer's array is up to twice as large.
	return Example{Packed: bytes.Clone(b.Bytes()), Vocab: ex.Vocab, Smiles: ex.Smiles}, nil
}

// deflaters reuses flate writers: each allocates about 1.1 MiB of state,
// which would otherwise be allocated per example.
var deflaters = sync.Pool{New: func() any {
	w, err := flate.NewWriter(io.Discard, flate.BestSpeed)
	if err != nil { // only for a level out of range
		panic(err)
	}
	return w
}}

// inflaters reuses flate readers.
var inflaters sync.Pool

// Unpack returns ex with the fields that Pack encoded decoded (ex itself
// when it is not packed).
func (ex Example) Unpack() (Example, error) {
	if ex.Packed == nil {
		return ex, nil
	}
	src := bytes.NewReader(ex.Packed)
	r, ok := inflaters.Get().(io.ReadCloser)
	if !ok {
		r = flate.NewReader(src)
	} else if err := r.(flate.Resetter).Reset(src, nil); err != nil {
		return Example{}, fmt.Errorf("jtvae: unpack example: %w", err)
	}
	defer inflaters.Put(r)
	var p packed
	if err := gob.NewDecoder(r).Decode(&p); err != nil {
		return Example{}, fmt.Errorf("jtvae: unpack example: %w", err)
	}
	return Example{Tree: p.Tree, Graph: p.Graph, Assembly: p.Assembly, Vocab: ex.Vocab, Smiles: ex.Smiles}, nil
}

// unpackAll returns examples with every packed one unpacked (a copy where
// any is).
func unpackAll(examples []Example) ([]Example, error) {
	out, copied := examples, false
	for i, ex := range examples {
		if ex.Packed == nil {
			continue
		}
		if !copied {
			out, copied = slices.Clone(examples), true
		}
		var err error
		if out[i], err = ex.Unpack(); err != nil {
			return nil, fmt.Errorf("example %d: %w", i, err)
		}
	}
	return out, nil
}
