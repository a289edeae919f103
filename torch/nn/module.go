// Package nn holds neural-network modules over package torch, shaped like
// PyTorch's: parameters and buffers with hierarchical names ("encoder.0.weight"),
// train/eval modes, state dicts and moving to a device.
//
// A module embeds Base and registers its parameters, buffers and children in
// its constructor, in the order PyTorch would, so that state dicts match.
package nn

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tlbo-native/tlbo-native/torch"
)

// Module is anything that embeds Base.
type Module interface {
	base() *Base
}

// Layer is a module with a single-tensor forward pass, usable in Sequential.
type Layer interface {
	Module
	Forward(x *torch.Tensor) *torch.Tensor
}

type namedModule struct {
	name string
	m    Module
}

// Base carries the parameters, buffers and children of a module.
type Base struct {
	params   []torch.Named
	buffers  []torch.Named
	children []namedModule
	eval     bool          // zero value: training mode, as a new PyTorch module
	device   *torch.Device // nil: the CPU, where modules are made
}

func (b *Base) base() *Base { return b }

// RegisterParameter adds a trainable tensor (gradients on) and returns it.
func (b *Base) RegisterParameter(name string, t *torch.Tensor) *torch.Tensor {
	b.params = append(b.params, torch.Named{Name: name, Tensor: t.SetRequiresGrad(true)})
	return t
}

// RegisterBuffer adds a non-trainable state tensor (e.g. running statistics).
func (b *Base) RegisterBuffer(name string, t *torch.Tensor) *torch.Tensor {
	b.buffers = append(b.buffers, torch.Named{Name: name, Tensor: t})
	return t
}

// RegisterModule adds a child module whose names are prefixed by name.
func (b *Base) RegisterModule(name string, m Module) {
	b.children = append(b.children, namedModule{name: name, m: m})
}

// IsTraining reports whether the module is in training mode.
func (b *Base) IsTraining() bool { return !b.eval }

// SetTraining switches the module and its children to training (true) or evaluation mode.
func (b *Base) SetTraining(on bool) {
	b.eval = !on
	for _, c := range b.children {
		c.m.base().SetTraining(on)
	}
}

// walk visits the module tree in PyTorch's state-dict order: own parameters,
// own buffers, then children.
func (b *Base) walk(prefix string, visit func(name string, t *torch.Tensor, isParam bool)) {
	for _, p := range b.params {
		visit(prefix+p.Name, p.Tensor, true)
	}
	for _, p := range b.buffers {
		visit(prefix+p.Name, p.Tensor, false)
	}
	for _, c := range b.children {
		c.m.base().walk(prefix+c.name+".", visit)
	}
}

// NamedParameters returns the trainable tensors with their full names.
func (b *Base) NamedParameters() []torch.Named {
	var out []torch.Named
	b.walk("", func(name string, t *torch.Tensor, isParam bool) {
		if isParam {
			out = append(out, torch.Named{Name: name, Tensor: t})
		}
	})
	return out
}

// Parameters returns the trainable tensors.
func (b *Base) Parameters() []*torch.Tensor {
	var out []*torch.Tensor
	for _, n := range b.NamedParameters() {
		out = append(out, n.Tensor)
	}
	return out
}

// StateDict returns parameters and buffers by name, in PyTorch's order. The
// tensors are the module's own: do not close them.
func (b *Base) StateDict() []torch.Named {
	var out []torch.Named
	b.walk("", func(name string, t *torch.Tensor, _ bool) {
		out = append(out, torch.Named{Name: name, Tensor: t})
	})
	return out
}

// LoadStateDict copies the tensors of sd into the module's parameters and
// buffers, matched by name. A missing or unexpected name or a shape mismatch
// is an error and nothing is copied.
func (b *Base) LoadStateDict(sd []torch.Named) error {
	own := b.StateDict()
	byName := make(map[string]*torch.Tensor, len(sd))
	for _, n := range sd {
		byName[n.Name] = n.Tensor
	}
	var missing, mismatched []string
	for _, n := range own {
		src, ok := byName[n.Name]
		if !ok {
			missing = append(missing, n.Name)
			continue
		}
		delete(byName, n.Name)
		if want, got := n.Tensor.Shape(), src.Shape(); !slices.Equal(want, got) {
			mismatched = append(mismatched, fmt.Sprintf("%s (want %v, got %v)", n.Name, want, got))
		}
	}
	var problems []string
	if len(missing) > 0 {
		problems = append(problems, "missing keys: "+strings.Join(missing, ", "))
	}
	if len(byName) > 0 {
		var extra []string
		for k := range byName {
			extra = append(extra, k)
		}
		sort.Strings(extra)
		problems = append(problems, "unexpected keys: "+strings.Join(extra, ", "))
	}
	if len(mismatched) > 0 {
		problems = append(problems, "shape mismatch: "+strings.Join(mismatched, "; "))
	}
	if len(problems) > 0 {
		return fmt.Errorf("load state dict: %s", strings.Join(problems, "; "))
	}
	return copyState(own, sd)
}

func copyState(own, sd []torch.Named) error {
	src := make(map[string]*torch.Tensor, len(sd))
	for _, n := range sd {
		src[n.Name] = n.Tensor
	}
	var err error
	torch.NoGrad(func() {
		for _, n := range own {
			if e := n.Tensor.Copy_(src[n.Name]); e != nil && err == nil {
				err = fmt.Errorf("load state dict: %s: %w", n.Name, e)
			}
		}
	})
	return err
}

// Device returns the device of the module's tensors: where To last moved
// them, the CPU before.
func (b *Base) Device() torch.Device {
	if b.device == nil {
		return torch.CPU
	}
	return *b.device
}

// To moves every parameter and buffer to dev in place (their identity, and so
// optimiser references, are kept). Move a model before building its optimiser.
func (b *Base) To(dev torch.Device) error {
	defer func() { b.device = &dev }()
	var err error
	b.walk("", func(name string, t *torch.Tensor, _ bool) {
		if err != nil || t.Device() == dev {
			return
		}
		moved := t.To(dev)
		if e := t.SetData(moved); e != nil {
			err = fmt.Errorf("move %s to %s: %w", name, dev, e)
		}
		moved.Close()
	})
	return err
}

// ZeroGrad drops the gradients of every parameter.
func (b *Base) ZeroGrad() error {
	for _, p := range b.NamedParameters() {
		if err := p.Tensor.ZeroGrad(); err != nil {
			return fmt.Errorf("zero grad %s: %w", p.Name, err)
		}
	}
	return nil
}

// Close releases every parameter and buffer of the module tree.
func (b *Base) Close() {
	b.walk("", func(_ string, t *torch.Tensor, _ bool) { t.Close() })
}

// Err returns the first error carried by a parameter or buffer (e.g. from a
// failed initialisation), so constructors can report it.
func (b *Base) Err() error {
	var err error
	b.walk("", func(name string, t *torch.Tensor, _ bool) {
		if e := t.Err(); e != nil && err == nil {
			err = fmt.Errorf("%s: %w", name, e)
		}
	})
	return err
}
