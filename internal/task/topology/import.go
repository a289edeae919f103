package topology

import (
	"fmt"

	"github.com/tlbo-native/tlbo-native/torch"
)

// lastEncoderBias is the encoder's last layer: its 2*latent outputs give the
// latent size of a checkpoint.
const lastEncoderBias = "encoder.20.bias"

// importedLatent returns the latent size of an authors' checkpoint (bare or
// Lightning) from the shape of its encoder's last bias.
func importedLatent(path string) (int, error) {
	sd, err := torch.Load(path)
	if err != nil {
		return 0, fmt.Errorf("import: %w", err)
	}
	defer torch.CloseNamed(sd)
	for _, n := range sd {
		if n.Name == lastEncoderBias || n.Name == "state_dict."+lastEncoderBias {
			s := n.Tensor.Shape()
			if len(s) != 1 || s[0] < 2 || s[0]%2 != 0 {
				return 0, fmt.Errorf("import %s: %s has shape %v, want (2*latent)", path, n.Name, s)
			}
			return int(s[0] / 2), nil
		}
	}
	return 0, fmt.Errorf("import %s: no tensor %s: not a checkpoint of the authors' topology VAE", path, lastEncoderBias)
}
