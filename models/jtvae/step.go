package jtvae

import (
	"time"

	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
	"github.com/tlbo-native/tlbo-native/torch/optim"
)

// StepTimes splits one training step in milliseconds: batching, the tree
// encoder, the graph encoder, the tree decoder's loss, the assembly loss, and
// backward with clipping and the Adam update; and the step's loss.
type StepTimes struct {
	Collate, Tree, Graph, Decoder, Assembly, Backward float64
	// Loss is the step's training loss, before its update (read after
	// the timed parts: no part of the split).
	Loss float64
}

// Total is the whole step in milliseconds.
func (s StepTimes) Total() float64 {
	return s.Collate + s.Tree + s.Graph + s.Decoder + s.Assembly + s.Backward
}

// TimedStep runs one training step of the authors' loop on examples (word +
// topology + assembly + beta KL, gradient clipping at models.DefaultGradClip,
// Adam) and times its parts, synchronising the device between them so that
// the split holds on CUDA too. It measures the network; models.Trainer runs
// the steps of real training.
func (m *Model) TimedStep(opt *optim.Adam, ex []Example, beta float64) (StepTimes, error) {
	var st StepTimes
	t0 := time.Now()
	lap := func(into *float64) error {
		if err := torch.Synchronize(); err != nil {
			return err
		}
		now := time.Now()
		*into += float64(now.Sub(t0).Microseconds()) / 1e3
		t0 = now
		return nil
	}
	sc := torch.NewScope()
	defer sc.Close()
	if err := opt.ZeroGrad(); err != nil {
		return st, err
	}
	mb, err := m.Collate(sc, ex)
	if err != nil {
		return st, err
	}
	b := mb.(*Batch)
	if err := lap(&st.Collate); err != nil {
		return st, err
	}
	tree, table := m.encodeTree(b)
	b.treeMess = table
	if err := lap(&st.Tree); err != nil {
		return st, err
	}
	graph := m.mpn.forward(b.graph, nil)
	if err := lap(&st.Graph); err != nil {
		return st, err
	}
	mu, logStd := m.latentParams(tree, graph)
	z := models.Reparameterize(mu, logStd)
	lt := int64(m.cfg.LatentTree)
	word, topo, _, _ := m.decoderLoss(z.Narrow(1, 0, lt), b)
	if err := lap(&st.Decoder); err != nil {
		return st, err
	}
	assm, _ := m.assemblyLoss(z.Narrow(1, lt, int64(m.cfg.LatentGraph())), b)
	if err := lap(&st.Assembly); err != nil {
		return st, err
	}
	total := word.Add(topo).Add(assm).Add(models.KL(mu, logStd).MulScalar(beta))
	if err := total.Backward(); err != nil {
		return st, err
	}
	if _, err := optim.ClipGradNorm(m.Parameters(), models.DefaultGradClip); err != nil {
		return st, err
	}
	if err := opt.Step(); err != nil {
		return st, err
	}
	if err := lap(&st.Backward); err != nil {
		return st, err
	}
	st.Loss, err = total.Item()
	return st, err
}
