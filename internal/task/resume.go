package task

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tlbo-native/tlbo-native/models"
)

// savedSetting is one setting of a training as its checkpoint records it
// and as a request asks for it, both formatted as the train flag takes them.
type savedSetting struct {
	// flags set it; the first names it.
	flags        []string
	saved, asked string
}

// given reports whether req gives any of flags.
func given(req TrainRequest, flags ...string) bool {
	if req.Given == nil {
		return false
	}
	for _, f := range flags {
		if req.Given(f) {
			return true
		}
	}
	return false
}

// savedSettings lists the settings a resumed training keeps from its
// checkpoint's state st beside the request's values; those st does not
// record (it was written before they were kept) are left out.
func savedSettings(req TrainRequest, st models.TrainingState) []savedSetting {
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	onOff := func(on bool) string { return map[bool]string{true: "on", false: "off"}[on] }
	e, a := st.ELBO, req.Opts.ELBO
	sb, ab := st.Beta, req.Opts.Beta
	s := []savedSetting{
		{flags: []string{"elbo"}, saved: e.Name, asked: a.Name},
		{flags: []string{"metric-weight"}, saved: g(e.MetricWeight), asked: g(a.MetricWeight)},
		{flags: []string{"pred-weight"}, saved: g(e.PredWeight), asked: g(a.PredWeight)},
		{flags: []string{"eta"}, saved: g(e.Metric.Eta), asked: g(a.Metric.Eta)},
		{flags: []string{"nu"}, saved: g(e.Metric.Nu), asked: g(a.Metric.Nu)},
		{flags: []string{"margin"}, saved: g(e.Metric.Margin), asked: g(a.Metric.Margin)},
		{flags: []string{"beta-init"}, saved: g(sb.Init), asked: g(ab.Init)},
		{flags: []string{"beta-final"}, saved: g(sb.Final), asked: g(ab.Final)},
		{flags: []string{"beta-warmup"}, saved: fmt.Sprint(sb.Warmup), asked: fmt.Sprint(ab.Warmup)},
		{flags: []string{"beta-every"}, saved: fmt.Sprint(sb.Every), asked: fmt.Sprint(ab.Every)},
		{flags: []string{"beta-step"}, saved: g(sb.Step), asked: g(ab.Step)},
		{flags: []string{"beta-factor"}, saved: g(sb.Factor), asked: g(ab.Factor)},
		{flags: []string{"batch-size"}, saved: fmt.Sprint(st.BatchSize), asked: fmt.Sprint(req.Opts.BatchSize)},
		{flags: []string{"grad-clip"}, saved: g(st.GradClip), asked: g(req.Opts.GradClip)},
		{flags: []string{"seed"}, saved: fmt.Sprint(st.Seed), asked: fmt.Sprint(req.Opts.Seed)},
		{flags: []string{"lr-plateau", "lr-factor", "lr-patience", "min-lr"}, saved: onOff(st.Plateau != nil), asked: onOff(req.Plateau != nil)},
	}
	if p, q := st.Plateau, req.Plateau; p != nil && q != nil {
		s = append(s,
			savedSetting{flags: []string{"lr-factor"}, saved: g(p.Factor), asked: g(q.Factor)},
			savedSetting{flags: []string{"lr-patience"}, saved: fmt.Sprint(p.Patience), asked: fmt.Sprint(q.Patience)},
			savedSetting{flags: []string{"min-lr"}, saved: g(p.MinLR), asked: g(q.MinLR)})
	}
	every := func(d *models.StepDecay) string {
		if d == nil {
			return "0"
		}
		return fmt.Sprint(d.Every)
	}
	s = append(s, savedSetting{flags: []string{"lr-decay-every"}, saved: every(st.Decay), asked: every(req.Decay)})
	if st.Decay != nil && req.Decay != nil {
		s = append(s, savedSetting{flags: []string{"lr-decay"}, saved: g(st.Decay.Factor), asked: g(req.Decay.Factor)})
	}
	if st.LRInit > 0 {
		s = append(s, savedSetting{flags: []string{"lr"}, saved: g(st.LRInit), asked: g(req.Opts.LR)})
	}
	if st.Augment != nil {
		s = append(s, savedSetting{flags: []string{"augment"}, saved: fmt.Sprint(*st.Augment), asked: fmt.Sprint(req.Augment)})
	}
	if d := st.Data; d != nil {
		s = append(s,
			savedSetting{flags: []string{"k"}, saved: d.K.String(), asked: models.RankK(req.K).String()},
			savedSetting{flags: []string{"val-fraction"}, saved: g(d.ValFraction), asked: g(req.ValFraction)},
			savedSetting{flags: []string{"labelled-fraction"}, saved: g(d.LabelledFraction), asked: g(req.LabelledFraction)})
	}
	return s
}

// resumeSettings reconciles a request to resume the training saved at
// req.Out with what its checkpoint records: a setting the request gives
// (req.Given) must equal the checkpoint's, so that no flag is silently
// ignored, and the settings it leaves to the defaults are the checkpoint's,
// so that a resumed training draws from the same examples (data split,
// labelled subset and rank weights, which the task makes from the seed and
// the data settings). It returns the environment and request the resumed
// training runs with, and the checkpoint's training state.
func resumeSettings(env *Env, req TrainRequest) (*Env, TrainRequest, *models.TrainingState, error) {
	from := resumeFrom(req.Out)
	h, err := models.ReadHeader(from, "")
	if err != nil {
		return env, req, nil, fmt.Errorf("resume: %w", err)
	}
	if h.Training == nil {
		return env, req, nil, fmt.Errorf("resume: checkpoint configuration %s: field training is missing (not written by a trainer)", models.HeaderPath(from))
	}
	st := *h.Training
	if err := checkGiven(env, req, st, from); err != nil {
		return env, req, nil, err
	}
	resumed := *env
	req.Opts.Seed = st.Seed
	if d := st.Data; d != nil {
		resumed.Seed, req.K, req.ValFraction, req.LabelledFraction = d.Seed, float64(d.K), d.ValFraction, d.LabelledFraction
	} else {
		fmt.Fprintf(env.Stderr, "note: %s does not record its data settings: the resumed training uses this run's (seed %d, k %s, "+
			"validation fraction %g, labelled fraction %g), which must be the ones it started with\n",
			from, env.Seed, models.RankK(req.K), req.ValFraction, req.LabelledFraction)
	}
	if st.Augment != nil {
		req.Augment = *st.Augment
	}
	return &resumed, req, &st, nil
}

// checkGiven refuses the settings req gives that differ from those of the
// training state st (of checkpoint from), naming each with both values,
// and notes on env.Stderr the given ones st does not record (the data
// settings resumeSettings notes).
func checkGiven(env *Env, req TrainRequest, st models.TrainingState, from string) error {
	var conflicts []string
	for _, s := range savedSettings(req, st) {
		if given(req, s.flags...) && s.saved != s.asked {
			conflicts = append(conflicts, fmt.Sprintf("--%s %s (the training's: %s)", s.flags[0], s.asked, s.saved))
		}
	}
	if len(conflicts) > 0 {
		return fmt.Errorf("resume: %s was trained with other settings than this run gives: %s; a resumed training keeps "+
			"its own settings: give the same or leave them out (--init %s starts a new training from its weights with new ones)",
			from, strings.Join(conflicts, ", "), from)
	}
	if st.LRInit == 0 && given(req, "lr") {
		fmt.Fprintf(env.Stderr, "note: %s does not record the rate it started at, so --lr is not checked: the training continues at its rate, %g\n",
			from, st.LR)
	}
	if st.Augment == nil && given(req, "augment") {
		fmt.Fprintf(env.Stderr, "note: %s does not record --augment: the resumed training uses this run's values, which must be the ones it started with\n",
			from)
	}
	return nil
}
