package jtvae

import (
	"github.com/tlbo-native/tlbo-native/torch"
)

// rowCache remembers the rows of products that depend on one item each (a
// node's label, a bond's input features), computed once per item and
// gathered after, where decoding used to compute them again in every batch
// that met the item.
//
// A remembered row is the same bits as the batch's own product would be:
// the CPU GEMM behind libtorch (OpenBLAS here) gives a row the same result
// in any batch of at least three rows, but other results in a batch of one
// or two; that is its kernels' behaviour, not a promise, so tests check it
// at the networks' sizes (TestLabelTermsMatchSteps, TestScoreInputsMatch). So
// the cache keeps two tables, of rows computed among three items or more (a
// batch of three or more reads these) and of rows computed alone (a batch
// of one); a batch of two computes its rows as before. On other devices
// (whose GEMMs make no such promise) every batch computes its rows as
// before.
type rowCache[K comparable] struct {
	sc       *torch.Scope
	parts    int // products per item
	template *torch.Tensor
	cpu      bool // template is on the CPU: remember rows
	many     *rowTable[K]
	one      *rowTable[K]
	// rows computed and rows asked for (tests)
	computed, asked int
}

// rowTable is the rows of a rowCache computed in one kind of batch.
type rowTable[K comparable] struct {
	row  map[K]int64 // item -> row of the tables
	tabs []*msgTable // one per product
}

// newRowCache returns a cache of parts products of width cols whose tensors
// belong to sc and are made like template (dtype, device).
func newRowCache[K comparable](sc *torch.Scope, template *torch.Tensor, parts int, cols int64) *rowCache[K] {
	c := &rowCache[K]{sc: sc, parts: parts, template: template, cpu: template.Device().Type == torch.CPUDevice}
	c.many, c.one = c.newTable(cols), c.newTable(cols)
	return c
}

func (c *rowCache[K]) newTable(cols int64) *rowTable[K] {
	t := &rowTable[K]{row: map[K]int64{}}
	for range c.parts {
		t.tabs = append(t.tabs, newMsgTable(c.sc.Own(c.template.NewZeros([]int64{16, cols}))))
	}
	return t
}

// lookup returns views of the tables holding the products of the distinct
// items keys (one view per product, valid until the next lookup) and each
// item's row in them. compute(batch) must return the products of the items
// at the given places of keys, as one batch (a row each, in that order); it
// is called for the items the cache lacks, with a batch of the kind the
// caller's own product would have been.
func (c *rowCache[K]) lookup(keys []K, compute func(batch []int) []*torch.Tensor) ([]*torch.Tensor, []int64, error) {
	c.asked += len(keys)
	views := make([]*torch.Tensor, c.parts)
	rows := make([]int64, len(keys))
	var t *rowTable[K]
	switch n := len(keys); {
	case n == 2 || !c.cpu: // its own batch, as the caller computed it
		batch := make([]int, n)
		for i := range batch {
			batch[i] = i
			rows[i] = int64(i)
		}
		for i, p := range compute(batch) {
			if err := p.Err(); err != nil {
				return nil, nil, err
			}
			views[i] = p
		}
		c.computed += n
		return views, rows, nil
	case n == 1:
		t = c.one
	default:
		t = c.many
	}
	var missing []int
	for i, k := range keys {
		if _, ok := t.row[k]; !ok {
			missing = append(missing, i)
		}
	}
	if n := len(missing); n > 0 {
		batch := missing
		for i, k := range keys { // a batch of many: pad to three rows with known items
			if t == c.one || len(batch) >= 3 {
				break
			}
			if _, ok := t.row[k]; ok {
				batch = append(batch, i)
			}
		}
		start := t.tabs[0].rows
		for j, p := range compute(batch) {
			if err := t.tabs[j].append(p.Narrow(0, 0, int64(n))); err != nil {
				return nil, nil, err
			}
		}
		for j, i := range missing {
			t.row[keys[i]] = start + int64(j)
		}
		c.computed += len(batch)
	}
	for i, k := range keys {
		rows[i] = t.row[k]
	}
	for j, tab := range t.tabs {
		views[j] = tab.view()
	}
	return views, rows, nil
}
