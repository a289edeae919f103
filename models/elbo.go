package models

import (
	"fmt"
	"sort"
	"strings"
)

// ELBO is a training objective: the weighted ELBO plus, optionally, a metric
// loss and a target-prediction term (docs/design.md section 4). The total loss of a
// mini-batch is rec + beta * KL + PredWeight * pred + MetricWeight * metric;
// the sample weights act through weighted sampling of the mini-batches.
type ELBO struct {
	// Name is the short name given to ParseELBO, e.g. "t".
	Name string `json:"name"`
	// Metric is the metric loss (Kind MetricNone for none).
	Metric Metric `json:"metric"`
	// MetricWeight is beta_metric.
	MetricWeight float64 `json:"metric_weight"`
	// PredictTarget adds the target-prediction head (TP-LBO).
	PredictTarget bool `json:"predict_target"`
	// PredWeight is beta_TP.
	PredWeight float64 `json:"pred_weight"`
}

// DefaultEta is the paper's threshold between positives and negatives.
const DefaultEta = 0.1

// DefaultMargin is the margin of the hard triplet loss.
const DefaultMargin = 1.0

// elboKinds maps ELBO names to their metric loss ("tp" and "lbo" have none).
var elboKinds = map[string]MetricKind{
	"lbo":    MetricNone,
	"w":      MetricNone, // W-LBO's: LBO's objective (its input warping is the GP's: optimize --warp)
	"tp":     MetricNone,
	"s":      MetricSimple,
	"c":      MetricContrastive,
	"c-hard": MetricHardContrastive,
	"lr":     MetricLogRatio,
	"t":      MetricTriplet,
	"t-hard": MetricHardTriplet,
}

// ELBONames lists the names ParseELBO accepts.
func ELBONames() []string {
	names := make([]string, 0, len(elboKinds))
	for n := range elboKinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ParseELBO returns the ELBO of a name: lbo, w, tp, s, c, c-hard, lr, t or
// t-hard, with eta = 0.1, margin 1, no nu and both weights 1.
func ParseELBO(name string) (ELBO, error) {
	kind, ok := elboKinds[strings.ToLower(name)]
	if !ok {
		return ELBO{}, fmt.Errorf("unknown ELBO %q (want one of %s)", name, strings.Join(ELBONames(), ", "))
	}
	e := ELBO{Name: strings.ToLower(name), Metric: Metric{Kind: kind}, MetricWeight: 1, PredWeight: 1}
	switch kind {
	case MetricContrastive, MetricHardContrastive, MetricTriplet:
		e.Metric.Eta = DefaultEta
	case MetricHardTriplet:
		e.Metric.Eta, e.Metric.Margin = DefaultEta, DefaultMargin
	}
	e.PredictTarget = e.Name == "tp"
	return e, nil
}

// NeedsLabels reports whether the objective uses labels.
func (e ELBO) NeedsLabels() bool { return e.PredictTarget || e.Metric.Kind != MetricNone }

// Validate checks the weights and the metric loss.
func (e ELBO) Validate() error {
	if !(e.MetricWeight >= 0) || !(e.PredWeight >= 0) {
		return fmt.Errorf("ELBO %q: weights must be >= 0 (metric %v, prediction %v)", e.Name, e.MetricWeight, e.PredWeight)
	}
	if err := e.Metric.Validate(); err != nil {
		return fmt.Errorf("ELBO %q: %w", e.Name, err)
	}
	return nil
}
