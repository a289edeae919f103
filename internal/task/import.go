package task

import (
	"fmt"
	"strings"

	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

// lightningPrefix prefixes the model's tensors in a PyTorch Lightning
// checkpoint (a dict with state_dict, hyper_parameters, optimizer states...;
// torch.Load joins nested names with dots).
const lightningPrefix = "state_dict."

// ImportStateDict converts a checkpoint written by the authors' code — a
// Lightning .ckpt or a bare state dict — into one of ours for net: the model
// tensors are renamed by rename (false: unused, dropped with a note on
// env.Stderr), loaded into net (a missing or mis-shaped tensor is an error
// naming it, and nothing is written) and saved with net's header at out.
func ImportStateDict(env *Env, from, out string, net models.Network, rename func(string) (string, bool)) error {
	sd, err := torch.Load(from)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	defer torch.CloseNamed(sd)
	lightning := false
	for _, n := range sd {
		if strings.HasPrefix(n.Name, lightningPrefix) {
			lightning = true
			break
		}
	}
	var mapped []torch.Named
	var dropped []string
	for _, n := range sd {
		name := n.Name
		if lightning {
			var ok bool
			if name, ok = strings.CutPrefix(name, lightningPrefix); !ok {
				continue // optimiser states, loops, callbacks
			}
		}
		ours, ok := rename(name)
		if !ok {
			dropped = append(dropped, name)
			continue
		}
		mapped = append(mapped, torch.Named{Name: ours, Tensor: n.Tensor})
	}
	if len(dropped) > 0 {
		fmt.Fprintf(env.Stderr, "import %s: dropped %d unused tensors: %s\n", from, len(dropped), strings.Join(dropped, ", "))
	}
	if err := net.LoadStateDict(mapped); err != nil {
		return fmt.Errorf("import %s: %w", from, err)
	}
	if err := models.SaveNetwork(out, net); err != nil {
		return err
	}
	kind, _ := net.Describe()
	fmt.Fprintf(env.Stdout, "imported %d tensors of %s from %s: %s (+ %s)\n", len(mapped), kind, from, out, models.HeaderPath(out))
	return nil
}
