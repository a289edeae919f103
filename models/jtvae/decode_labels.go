package jtvae

import (
	"github.com/tlbo-native/tlbo-native/torch"
)

// labelTerms holds, for one DecodeTrees call, the tree decoder's terms that
// depend on a node's label only: the label halves (with biases) of the
// GRU's W_z and W_h, its W_r x, and the label half (with bias) of U_i in
// the stop score. Every step used to compute them again for the step's
// distinct labels (seven products with 450-wide weights per step, each
// repacking its weight), while a decoding meets a few dozen labels in all;
// here each label's rows are computed once (rowCache: the same bits).
type labelTerms struct {
	m             *Model
	bd            *builder
	wzX, whX, uiX *torch.Tensor // label halves of W_z, W_h, U_i
	wzH, whH, uiH *torch.Tensor // message halves of W_z, W_h, U_i
	rows          *rowCache[int64]
}

// The products of labelTerms' cache, in order.
const (
	termZ = iota
	termR
	termH
	termStop
	labelTermCount
)

// newLabelTerms prepares the label terms of a call; its tensors belong to
// bd's scope.
func newLabelTerms(m *Model, bd *builder) *labelTerms {
	d := m.dec
	h := int64(m.cfg.Hidden)
	own := bd.sc.Own
	return &labelTerms{m: m, bd: bd,
		wzX: own(d.gru.Wz.Weight.Narrow(1, 0, h)), wzH: own(d.gru.Wz.Weight.Narrow(1, h, h)),
		whX: own(d.gru.Wh.Weight.Narrow(1, 0, h)), whH: own(d.gru.Wh.Weight.Narrow(1, h, h)),
		uiX: own(d.Ui.Weight.Narrow(1, 0, h)), uiH: own(d.Ui.Weight.Narrow(1, h, h)),
		rows: newRowCache[int64](bd.sc, d.Wo.Weight, labelTermCount, h)}
}

// lookup returns the label terms (views, by term) and, for each of labels,
// its row in them.
func (lt *labelTerms) lookup(labels []int64) ([]*torch.Tensor, []int64, error) {
	d := lt.m.dec
	distinct, of := distinctLabels(labels)
	views, rows, err := lt.rows.lookup(distinct, func(batch []int) []*torch.Tensor {
		ws := make([]int64, len(batch))
		for i, j := range batch {
			ws[i] = distinct[j]
		}
		x := d.emb.Forward(lt.bd.ints(ws))
		return []*torch.Tensor{termZ: torch.Linear(x, lt.wzX, d.gru.Wz.Bias), termR: d.gru.Wr.Forward(x),
			termH: torch.Linear(x, lt.whX, d.gru.Wh.Bias), termStop: torch.Linear(x, lt.uiX, d.Ui.Bias)}
	})
	if err != nil {
		return nil, nil, err
	}
	idx := make([]int64, len(labels))
	for k, j := range of {
		idx[k] = rows[j]
	}
	return views, idx, nil
}

// gruPass returns the decoder GRU's pass over the messages with the given
// sender labels, and each message's row in the pass's label terms.
func (lt *labelTerms) gruPass(labels []int64) (gruPass, []int64, error) {
	v, idx, err := lt.lookup(labels)
	if err != nil {
		return gruPass{}, nil, err
	}
	return gruPass{g: lt.m.dec.gru, wzH: lt.wzH, whH: lt.whH, xz: v[termZ], xr: v[termR], xh: v[termH]}, idx, nil
}

// stop returns the label half (with bias) of U_i's product for each of the
// labels.
func (lt *labelTerms) stop(labels []int64) (*torch.Tensor, error) {
	v, idx, err := lt.lookup(labels)
	if err != nil {
		return nil, err
	}
	return v[termStop].IndexSelect(0, lt.bd.ints(idx)), nil
}
