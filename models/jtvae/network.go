// Package jtvae is the junction-tree VAE of Jin et al. (2018) in the fast_jtnn
// variant that weighted retraining and T-LBO use (the authors' JTNNVAE inside
// their Lightning class JTVAE), with the authors' state-dict names and shapes,
// so that their checkpoints load unchanged (Import).
//
// A molecule comes in as an Example: its junction tree (cluster labels and
// ordered adjacency), its molecular graph (atom and bond features) and, for
// each non-leaf cluster with several ways to attach its neighbours, the
// candidate attachments' graphs. Collate turns examples into a Batch of index
// tensors; the network never loops over nodes in Go on the hot path.
//
// Message passing follows dependency levels instead of the authors'
// synchronous sweeps. The tree encoder runs depthT synchronous GRU
// iterations over every directed tree edge; a message depends only on the
// messages into its sender from the other side, so after t iterations every
// message whose dependency chain is at most t long is final. Computing each
// message once, in order of its chain length (leaves to root and root to
// leaves), therefore gives the same result whenever the longest chain (the
// tree's longest path, in edges) is at most depthT; a message with a longer
// chain takes the GRU of its inputs' values after depthT-1 sweeps, computed
// the same way, so the encoder is exact for any tree and a deep tree costs
// its own partial values only, not depthT sweeps of its batch. The
// decoder's teacher-forced depth-first trace is grouped the same way: messages
// whose inputs are known are computed together, across molecules and trace
// steps.
//
// The authors' checkpoints were trained with three switches (their JTVAE
// sets them) that Config records: no tanh on the summed message in the tree
// encoder's GRU, no ReLU after U_i in the stop predictor, and candidates
// scored as G_mean(candidate vector) . z_graph instead of the bilinear A_assm
// (which stays in the state dict, unused).
package jtvae

import (
	"fmt"
	"math"

	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
	"github.com/tlbo-native/tlbo-native/torch/nn"
)

// NetworkKind names the JT-VAE in checkpoint headers.
const NetworkKind = "molecule-jtvae"

// Feature sizes of the authors' featurisation.
const (
	AtomFeatures     = 39 // MPN: element 23, degree 6, formal charge 5, chiral tag 4, aromatic 1
	BondFeatures     = 11 // MPN: type 4, in ring 1, stereo 6
	CandAtomFeatures = 35 // JTMPN: element 23, degree 6, formal charge 5, aromatic 1
	CandBondFeatures = 5  // JTMPN: type 4, in ring 1
)

// Config is the network's configuration, recorded in checkpoint headers.
type Config struct {
	// Vocab is the cluster vocabulary (SMILES); VocabSize its length, which
	// alone fixes the weights' shapes.
	Vocab      []string `json:"vocab,omitempty"`
	VocabSize  int      `json:"vocab_size"`
	Hidden     int      `json:"hidden"`
	Latent     int      `json:"latent"`      // tree + graph
	LatentTree int      `json:"latent_tree"` // the first LatentTree columns of z
	DepthT     int      `json:"depth_tree"`
	DepthG     int      `json:"depth_graph"`
	// The authors' compatibility switches; their checkpoints use false,
	// false, false (the defaults here).
	EncoderGRUTanh   bool `json:"encoder_gru_tanh"`
	StopInputReLU    bool `json:"decoder_u_i_relu"`
	BilinearAssembly bool `json:"assembly_bilinear"`
}

// DefaultConfig is the authors' molecule network: hidden 450, latent 56 (28
// tree + 28 graph), depthT 20, depthG 3, their compatibility switches.
func DefaultConfig(vocab []string) Config {
	return Config{Vocab: vocab, VocabSize: len(vocab), Hidden: 450, Latent: 56, LatentTree: 28, DepthT: 20, DepthG: 3}
}

// LatentGraph is the number of graph columns of z.
func (c Config) LatentGraph() int { return c.Latent - c.LatentTree }

// Validate checks the sizes.
func (c Config) Validate() error {
	switch {
	case c.Vocab != nil && len(c.Vocab) != c.VocabSize:
		return fmt.Errorf("jtvae config: vocab has %d entries, vocab_size is %d", len(c.Vocab), c.VocabSize)
	case c.VocabSize < 1 || c.Hidden < 1 || c.DepthT < 1 || c.DepthG < 1:
		return fmt.Errorf("jtvae config: vocab_size %d, hidden %d, depth_tree %d and depth_graph %d must be >= 1",
			c.VocabSize, c.Hidden, c.DepthT, c.DepthG)
	case c.LatentTree < 1 || c.LatentGraph() < 1:
		return fmt.Errorf("jtvae config: latent %d and latent_tree %d leave no tree or no graph columns", c.Latent, c.LatentTree)
	}
	return nil
}

// xavier returns an (out, in) matrix drawn from the xavier-normal law with
// libtorch's seeded generator, the authors' initialisation.
func xavier(out, in int) *torch.Tensor {
	t := torch.Zeros([]int64{int64(out), int64(in)}, torch.Float32, torch.CPU)
	if err := t.Normal_(0, math.Sqrt(2/float64(in+out))); err != nil {
		t.Close()
		return torch.ErrTensor(err)
	}
	return t
}

// linear is nn.Linear with the authors' initialisation (zero bias), with or
// without a bias.
func linear(in, out int, bias bool) *nn.Linear {
	l := &nn.Linear{}
	l.Weight = l.RegisterParameter("weight", xavier(out, in))
	if bias {
		l.Bias = l.RegisterParameter("bias", torch.Zeros([]int64{int64(out)}, torch.Float32, torch.CPU))
	}
	return l
}

func embedding(n, dim int) *nn.Embedding {
	e := &nn.Embedding{}
	e.Weight = e.RegisterParameter("weight", xavier(n, dim))
	return e
}

// gru holds the four linears of the authors' graph GRU (their nnutils.GRU and
// GraphGRU); which of W_r and U_r has the bias differs between the encoder
// and the decoder.
type gru struct {
	nn.Base
	Wz, Wr, Ur, Wh *nn.Linear
}

// register adds the linears under the authors' names in the given order.
func (g *gru) register(b *nn.Base, order ...string) {
	by := map[string]*nn.Linear{"W_z": g.Wz, "W_r": g.Wr, "U_r": g.Ur, "W_h": g.Wh}
	for _, name := range order {
		b.RegisterModule(name, by[name])
	}
}

// treeEncoder is the authors' JTNNEncoder ("jtnn").
type treeEncoder struct {
	nn.Base
	emb    *nn.Embedding
	output *nn.Sequential
	gru    *gru
}

func newTreeEncoder(c Config) *treeEncoder {
	h := c.Hidden
	e := &treeEncoder{
		emb:    embedding(c.VocabSize, h),
		output: nn.NewSequential(linear(2*h, h, true), nn.ReLU()),
		gru:    &gru{Wz: linear(2*h, h, true), Wr: linear(h, h, false), Ur: linear(h, h, true), Wh: linear(2*h, h, true)},
	}
	e.gru.register(&e.gru.Base, "W_z", "W_r", "U_r", "W_h")
	e.RegisterModule("embedding", e.emb)
	e.RegisterModule("outputNN", e.output)
	e.RegisterModule("GRU", e.gru)
	return e
}

// treeDecoder is the authors' JTNNDecoder ("decoder").
type treeDecoder struct {
	nn.Base
	emb      *nn.Embedding
	gru      *gru
	W, U, Ui *nn.Linear
	Wo, Uo   *nn.Linear
	stopReLU bool
}

func newTreeDecoder(c Config) *treeDecoder {
	h, lt := c.Hidden, c.LatentTree
	d := &treeDecoder{
		emb: embedding(c.VocabSize, h),
		gru: &gru{Wz: linear(2*h, h, true), Ur: linear(h, h, false), Wr: linear(h, h, true), Wh: linear(2*h, h, true)},
		W:   linear(h+lt, h, true), U: linear(h+lt, h, true), Ui: linear(2*h, h, true),
		Wo: linear(h, c.VocabSize, true), Uo: linear(h, 1, true),
		stopReLU: c.StopInputReLU,
	}
	d.RegisterModule("embedding", d.emb)
	d.gru.register(&d.Base, "W_z", "U_r", "W_r", "W_h")
	for _, m := range []struct {
		name string
		l    *nn.Linear
	}{{"W", d.W}, {"U", d.U}, {"U_i", d.Ui}, {"W_o", d.Wo}, {"U_o", d.Uo}} {
		d.RegisterModule(m.name, m.l)
	}
	return d
}

// mpn is the authors' MPN ("mpn") and, with candidate feature sizes, their
// JTMPN ("jtmpn"): bond messages, depthG iterations (the batch's levels),
// mean atom vector.
type mpn struct {
	nn.Base
	Wi, Wh, Wo *nn.Linear
}

func newMPN(hidden, atomF, bondF int) *mpn {
	m := &mpn{Wi: linear(atomF+bondF, hidden, false), Wh: linear(hidden, hidden, false), Wo: linear(atomF+hidden, hidden, true)}
	m.RegisterModule("W_i", m.Wi)
	m.RegisterModule("W_h", m.Wh)
	m.RegisterModule("W_o", m.Wo)
	return m
}

// Model is the JT-VAE. It implements models.VAE[Example].
type Model struct {
	nn.Base
	cfg                      Config
	enc                      *treeEncoder
	dec                      *treeDecoder
	jtmpn, mpn               *mpn
	aAssm                    *nn.Linear
	tMean, tVar, gMean, gVar *nn.Linear
}

// New returns a network with the authors' initialisation (xavier-normal
// matrices, zero vectors) from libtorch's generator (seed it with
// torch.ManualSeed), on the CPU.
func New(cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h, lt, lg := cfg.Hidden, cfg.LatentTree, cfg.LatentGraph()
	m := &Model{
		cfg: cfg, enc: newTreeEncoder(cfg), dec: newTreeDecoder(cfg),
		jtmpn: newMPN(h, CandAtomFeatures, CandBondFeatures),
		mpn:   newMPN(h, AtomFeatures, BondFeatures),
		aAssm: linear(lg, h, false),
		tMean: linear(h, lt, true), tVar: linear(h, lt, true),
		gMean: linear(h, lg, true), gVar: linear(h, lg, true),
	}
	for _, c := range []struct {
		name string
		m    nn.Module
	}{{"jtnn", m.enc}, {"decoder", m.dec}, {"jtmpn", m.jtmpn}, {"mpn", m.mpn}, {"A_assm", m.aAssm},
		{"T_mean", m.tMean}, {"T_var", m.tVar}, {"G_mean", m.gMean}, {"G_var", m.gVar}} {
		m.RegisterModule(c.name, c.m)
	}
	if err := m.Err(); err != nil {
		m.Close()
		return nil, fmt.Errorf("jtvae: %w", err)
	}
	return m, nil
}

// Config returns the network's configuration.
func (m *Model) Config() Config { return m.cfg }

// LatentDim returns the latent dimension (tree + graph).
func (m *Model) LatentDim() int { return m.cfg.Latent }

// EncodeBatchSize bounds the batches of models.EncodeMeans: it keeps a
// batch's activations small (a thousand molecules encoded by synchronous
// sweeps, as before truncate, ran past 20 GB).
func (m *Model) EncodeBatchSize() int { return 64 }

// Describe returns the network kind and its configuration.
func (m *Model) Describe() (string, any) { return NetworkKind, m.cfg }

func init() { models.RegisterConfig(NetworkKind, New) }

// Load reads a JT-VAE checkpoint (written by SaveNetwork, a trainer or
// Import followed by SaveNetwork) onto dev.
func Load(path string, dev torch.Device) (*Model, models.Header, error) {
	return models.LoadNetwork[*Model](path, dev, NetworkKind)
}
