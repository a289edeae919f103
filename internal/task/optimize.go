package task

import (
	"errors"
	"fmt"
	"maps"
	"strconv"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

// Optimize runs the BO loop on the task: the run directory is checked
// first (bo.CheckRunDir) and locked (bo.LockDir, held to the end, the
// labelled start's evaluations included), then the checkpoint req.Model.Path is
// loaded and bound (for molecules, featurisation then uses the
// checkpoint's vocabulary), the data set read, and bo.Run given the task's
// objective and model as they are, typed. Files are identified by content,
// so that a moved run or data directory still resumes: the run's
// configuration records the checkpoint's digest (bo adds the data's), the
// data's source and the objective's description. When the data set's
// scores are oracle calls of the run (Spec.InitialCalls: the PMO protocol's
// starting molecules), their keys and scores go to bo.InitialFile and their
// number to the configuration, so that analyze pmo and plot count them
// first. After a successful run the task draws its pictures of the req.Top
// best objects into the run directory. env.Ctx, when set, stops the run
// (bo.Options.Context, unless req sets its own), the labelled start's
// evaluations included: a program objective's running programs are killed.
// When the run ends, however it ends, what the task made on demand is
// written (Spec.Flush).
func (d *Defined[O, E]) Optimize(env *Env, req OptimizeRequest) (res *bo.Result, err error) {
	if err := bo.CheckRunDir(req.Options); err != nil {
		return nil, err
	}
	if req.Options.Context == nil {
		req.Options.Context = env.Ctx
	}
	if err := checkProgramOptions(env, d.s.Options); err != nil {
		return nil, err
	}
	if IsManual(env) {
		if err := checkManual(req.Config); err != nil {
			return nil, err
		}
		if req.Manual == nil {
			req.Manual = &ManualRequest{}
		}
	}
	// One lock from the first evaluation (a labelled start scored by the
	// objective) to the loop's end: a second process fails here, before
	// it evaluates anything.
	if req.Options.Lock == nil {
		lock, err := bo.LockDir(req.Options.Dir)
		if err != nil {
			return nil, err
		}
		defer lock.Unlock()
		req.Options.Lock = lock
	}
	if IsManual(env) {
		if err := writeSetUpFlags(req.Options); err != nil {
			return nil, err
		}
	}
	if d.s.Flush != nil {
		defer func() {
			if ferr := d.s.Flush(); ferr != nil {
				err = errors.Join(err, ferr)
			}
		}()
	}
	own := d.ownEnv(env)
	obj, err := d.s.Objective(own)
	if err != nil {
		return nil, err
	}
	m, err := d.openModel(own, req.Model, obj)
	if err != nil {
		return nil, fmt.Errorf("--vae: %w", err)
	}
	defer m.Close()
	ds, err := d.Dataset(own)
	if err != nil {
		return nil, err
	}
	evaluators := req.Config.Workers()
	if IsProgram(env) {
		ext, err := d.programObjective(env, req.Options.Dir, obj, evaluators)
		if err != nil {
			return nil, err
		}
		defer ext.Close()
		obj = ext
		m.key = obj.Key
	}
	var mo *manualObjective[O]
	if IsManual(env) {
		if mo, err = d.newManualObjective(env, req.Options.Dir, obj); err != nil {
			return nil, err
		}
		if err := keepSetUpDirection(req.Options, mo.maximize); err != nil {
			return nil, err
		}
		obj = mo
		m.key = obj.Key
	}
	sum, err := FileDigest(req.Model.Path)
	if err != nil {
		return nil, fmt.Errorf("--vae: %w", err)
	}
	cfg := req.Config
	extra := d.runIdentity(env, req, sum)
	extra["data-source"] = ds.Source
	maps.Copy(extra, obj.Describe())
	var initial []bo.Evaluation
	switch {
	case d.drawsStart(env):
		if ds, initial, err = d.drawStart(env, req.Options.Dir, obj, ds, evaluators); err != nil {
			if mo != nil && errors.Is(err, bo.ErrDeferred) {
				// The start is measured first: nothing to propose yet.
				if req.Manual.Result, err = d.handOut(env, mo, req.Manual, startPending(mo)); err == nil {
					req.Manual.Result.Start = true
				}
				return nil, err
			}
			return nil, err
		}
		extra["data-source"] = ds.Source
		extra[bo.InitialCallsField] = strconv.Itoa(len(initial))
	case d.s.InitialCalls != nil && d.s.InitialCalls(own):
		initial = make([]bo.Evaluation, len(ds.Objects))
		for i, o := range ds.Objects {
			initial[i] = bo.Evaluation{Object: obj.Key(o), Score: ds.Scores[i]}
		}
		extra[bo.InitialCallsField] = strconv.Itoa(len(initial))
	}
	cfg.Extra = extra
	if err := torch.ManualSeed(cfg.Seed); err != nil {
		return nil, err
	}
	if initial != nil {
		if err := bo.WriteInitial(req.Options.Dir, initial); err != nil {
			return nil, err
		}
	}
	if mo != nil {
		return d.manualRun(env, mo, req, cfg, m, ds.Data)
	}
	res, err = bo.Run[O](cfg, obj, m, ds.Data, req.Options)
	if err != nil || d.s.Plots == nil || req.Top < 1 {
		return res, err
	}
	var best []Scored[O]
	for _, q := range res.Top(req.Top) {
		// Query numbers are 1-based wherever a person reads them.
		if o, err := obj.Parse(q.Object); err == nil {
			best = append(best, Scored[O]{Object: o, Score: q.Score, Query: q.Index + 1})
		}
	}
	return res, d.s.Plots(env, req.Options.Dir, best)
}

// EncodeDataset returns the encoder means of the task's labelled data (the
// points that rows picks, or all) under the checkpoint vae, with their
// scores and the data's source. Picking before featurising matters on
// molecules: an analysis of 10,000 of ZINC's 210,770 would otherwise encode
// them all under every network.
func (d *Defined[O, E]) EncodeDataset(env *Env, vae string, rows func(n int) []int) (Encoded, error) {
	net, _, err := d.loadNetwork(env, vae)
	if err != nil {
		return Encoded{}, err
	}
	defer net.Close()
	ds, err := d.Dataset(env)
	if err != nil {
		return Encoded{}, err
	}
	objs, scores := ds.Objects, ds.Scores
	if idx := pickRows(rows, len(objs)); idx != nil {
		objs, scores = make([]O, len(idx)), make([]float64, len(idx))
		for i, j := range idx {
			if j < 0 || j >= len(ds.Objects) {
				return Encoded{}, fmt.Errorf("encode: row %d of %d labelled points", j, len(ds.Objects))
			}
			objs[i], scores[i] = ds.Objects[j], ds.Scores[j]
		}
	}
	ex, err := d.examples(objs, nil, nil)
	if err != nil {
		return Encoded{}, fmt.Errorf("encode: %w", err)
	}
	z, err := models.EncodeMeans(net, ex)
	if err != nil {
		return Encoded{}, fmt.Errorf("encode: %w", err)
	}
	return Encoded{Z: z, Scores: scores, Total: len(ds.Objects), Source: ds.Source}, nil
}

// pickRows is rows(n), or nil (all n points) when rows is nil.
func pickRows(rows func(n int) []int, n int) []int {
	if rows == nil {
		return nil
	}
	return rows(n)
}

// runIdentity returns the settings of a run that the task layer owns, as
// config.json records them beside the loop's own and resume compares them
// (bo.Config.Extra): the task, the caller's extra fields, the retraining's
// objective and batches, the device, the decoder's attempts and the
// checkpoint's digest vaeSum. Optimize adds the data's source, the
// objective's description and the start's calls; bo.Run the direction and
// the data's digest.
func (d *Defined[O, E]) runIdentity(env *Env, req OptimizeRequest, vaeSum string) map[string]string {
	e, m := req.Model.ELBO, req.Model
	id := maps.Clone(req.Config.Extra)
	if id == nil {
		id = map[string]string{}
	}
	maps.Copy(id, map[string]string{
		"task": d.s.Name,
		"elbo": elboField(e, req.Config.Warp),
		"elbo-params": fmt.Sprintf("metric-weight=%g pred-weight=%g eta=%g nu=%g margin=%g", e.MetricWeight, e.PredWeight,
			e.Metric.Eta, e.Metric.Nu, e.Metric.Margin),
		"retrain":         fmt.Sprintf("batch=%d clip=%g", m.BatchSize, m.GradClip),
		"device":          env.Device.String(),
		"decode-attempts": strconv.Itoa(m.Decode.Attempts),
		"vae-sha256":      vaeSum[:16],
	})
	return id
}

// elboField is the objective a run's configuration records (its "elbo"
// field): w, W-LBO's name, for LBO's objective with a warped GP (as runs
// made with --elbo w, and optimize --elbo lbo --warp, record it, so that
// both spellings are the same run), else the objective's name.
func elboField(e models.ELBO, warp bool) string {
	if warp && (e.Name == "lbo" || e.Name == "w") {
		return "w"
	}
	return e.Name
}
