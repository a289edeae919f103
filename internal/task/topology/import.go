package topology

import (
	"fmt"
	"strings"

	conv "github.com/tlbo-native/tlbo-native/models/topology"
	"github.com/tlbo-native/tlbo-native/torch"
)

// The encoder's dense layers: the first one's outputs give a checkpoint's
// dense width, the last one's 2*latent outputs its latent size.
const (
	denseEncoderBias = "encoder.18.bias"
	lastEncoderBias  = "encoder.20.bias"
)

// importedConfig returns the shape of an authors' checkpoint (bare or
// Lightning) from the shapes of its encoder's dense biases.
func importedConfig(path string) (conv.Config, error) {
	sd, err := torch.Load(path)
	if err != nil {
		return conv.Config{}, fmt.Errorf("import: %w", err)
	}
	defer torch.CloseNamed(sd)
	var cfg conv.Config
	for _, n := range sd {
		switch strings.TrimPrefix(n.Name, "state_dict.") { // Lightning's prefix
		case lastEncoderBias:
			s := n.Tensor.Shape()
			if len(s) != 1 || s[0] < 2 || s[0]%2 != 0 {
				return conv.Config{}, fmt.Errorf("import %s: %s has shape %v, want (2*latent)", path, n.Name, s)
			}
			cfg.Latent = int(s[0] / 2)
		case denseEncoderBias:
			s := n.Tensor.Shape()
			if len(s) != 1 || s[0] < 1 {
				return conv.Config{}, fmt.Errorf("import %s: %s has shape %v, want (dense width)", path, n.Name, s)
			}
			cfg.DenseWidth = int(s[0])
		}
	}
	if cfg.Latent == 0 {
		return conv.Config{}, fmt.Errorf("import %s: no tensor %s: not a checkpoint of the authors' topology VAE", path, lastEncoderBias)
	}
	return cfg, nil
}
