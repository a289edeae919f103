package molecule

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/internal/task/molecule/objectives"
)

// DefaultObjective is the objective of --objective's default: the paper's
// penalised logP.
const DefaultObjective = "plogp"

// ObjectiveNames lists the names --objective takes: plogp first, then the
// objectives package's (qed and the 19 PMO tasks), sorted.
func ObjectiveNames() []string {
	return append([]string{DefaultObjective}, objectives.Names()...)
}

// pmoNames lists the PMO tasks among the objectives (all but qed).
func pmoNames() []string {
	return slices.DeleteFunc(objectives.Names(), func(n string) bool { return n == "qed" })
}

// ParseObjective returns the objective named by --objective ("" is
// DefaultObjective). An unknown name is refused with the known ones listed.
// This is the one place that reads the option. A user's program
// (task.CommandPrefix, "command:...") is optimize's alone, where the task
// package wraps the default objective (keys, parsing) and this task never
// sees it; score and analyze refuse it.
func ParseObjective(name string) (Objective, error) {
	switch {
	case name == "" || name == DefaultObjective:
		return Objective{}, nil
	case strings.HasPrefix(name, task.CommandPrefix):
		return Objective{}, fmt.Errorf("--%s %s: a program is an objective of optimize only (here: %s)",
			optObjective, name, strings.Join(ObjectiveNames(), ", "))
	}
	o, err := objectives.Lookup(name)
	if err != nil {
		return Objective{}, fmt.Errorf("--%s: unknown objective %q (known: %s)", optObjective, name, strings.Join(ObjectiveNames(), ", "))
	}
	return Objective{f: o}, nil
}

// Objective is the molecule task's black box: penalised logP (the zero
// value, the paper's) or one of the objectives package's (QED, the PMO
// tasks), maximised. A molecule that cannot be scored gets FailureScore.
type Objective struct {
	f *objectives.Objective // nil: penalised logP
	// keys, when set, holds the keys of the data set's molecules, made
	// beforehand (keys.go).
	keys *keyMemo
}

// Name is the objective's name on the command line.
func (o Objective) Name() string {
	if o.f == nil {
		return DefaultObjective
	}
	return o.f.Name
}

// Score returns the objective of a SMILES string.
func (o Objective) Score(smiles string) (float64, error) {
	if o.f == nil {
		return Score(smiles)
	}
	v, err := o.f.Score(smiles)
	if err != nil {
		return o.FailureScore(), err
	}
	return v, nil
}

// FailureScore is the score of a molecule that cannot be scored: the
// authors' -4 for penalised logP; 0 for QED and the PMO tasks, the score
// TDC's oracles (which the PMO benchmark calls) give an invalid molecule.
func (o Objective) FailureScore() float64 {
	if o.f == nil {
		return FailureScore
	}
	return 0
}

// Deterministic is true: every objective is a function of the molecule.
func (Objective) Deterministic() bool { return true }

// Maximize is true: every objective is maximised.
func (Objective) Maximize() bool { return true }

// Key is the canonical SMILES without stereo (the authors'
// standardize_smiles); a SMILES RDKit rejects is its own key. A data-set
// molecule's is the one made when the data set was read.
func (o Objective) Key(smiles string) string {
	if k, ok := o.keys.get(smiles); ok {
		return k
	}
	return standardKey(smiles)
}

// Parse returns the SMILES of a key (a key is a SMILES).
func (Objective) Parse(key string) (string, error) { return key, nil }

// Describe records the objective: its name, so that a run cannot be resumed
// with another. Penalised logP keeps the description of runs made before
// --objective existed (which it names), so that they still resume.
func (o Objective) Describe() map[string]string {
	if o.f == nil {
		return map[string]string{"objective": "penalised logP (Crippen logP, SA score, cycle term; normalised over ZINC250K)"}
	}
	what := "GuacaMol / PMO goal-directed task, in [0, 1]"
	if o.f.Name == "qed" {
		what = "RDKit's QED, in [0, 1]"
	}
	return map[string]string{"objective": o.f.Name + " (" + what + ")"}
}
