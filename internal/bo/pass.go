package bo

import (
	"fmt"
	"time"
)

// passPoint is one acquisition step of a pass, before its decode is
// classified.
type passPoint struct {
	q       Query
	z, u    []float64
	slot    int     // index into the pass's open slots
	fantasy float64 // the believer's posterior mean at u when u was chosen
	row     int     // u's row in the believer's data, -1 while not added
}

// slot is a proposal still to be found: the acquisition steps it has spent
// on known objects, invalid decodes and objects already chosen, and its
// last point (where the ball fallback starts).
type slot struct {
	tries int
	u     []float64
}

// fill chooses the round's remaining proposals in passes. A pass maximises
// the acquisition once for every open slot, each maximiser conditioning the
// GP with its fantasy before the next is chosen (kriging believer), then
// decodes the pass's points as one batch, which a task's model decodes in
// parallel, and classifies them in order. A known object or an invalid
// decode replaces its fantasy by the real score and leaves its slot open
// for the next pass; a slot that has spent RepeatTries steps goes to the
// ball fallback. With one slot a pass is one acquisition step and one
// decode, as q = 1 has always been.
func (b *roundBuilder[O]) fill() (*Stop, error) {
	slots := make([]slot, b.n-len(b.pending))
	for len(slots) > 0 {
		props, stop, err := b.acquirePass(slots)
		if err != nil || stop != nil {
			return stop, err
		}
		if slots, err = b.classifyPass(slots, props); err != nil {
			return nil, err
		}
		if slots, err = b.fallBack(slots); err != nil || b.exhausted != "" {
			return nil, err
		}
	}
	return nil, nil
}

// acquirePass makes one acquisition step for each open slot. Every point
// but the last conditions the GP on its fantasy at once, so that the next
// maximiser moves away from it; the last is conditioned after its decode
// (classifyPass), so that a pass of one costs one posterior update.
func (b *roundBuilder[O]) acquirePass(slots []slot) ([]passPoint, *Stop, error) {
	r := b.r
	props := make([]passPoint, 0, len(slots))
	for i, s := range slots {
		q := Query{Index: b.start + len(b.queries) + i, Version: r.version.current, Round: b.start, Tries: s.tries}
		a := b.attempt
		b.attempt++
		if a == 0 {
			q.GP, q.GPKept, q.Timing.GPFit = b.gpRec, b.gpKept, b.fit.dur.Seconds()
			r.version.chargeEncoding(&q.Timing)
		}
		z, u, stop, err := b.acquire(&q, a)
		if err != nil || stop != nil {
			return nil, stop, err
		}
		q.Z = z
		p := passPoint{q: q, z: z, u: u, slot: i, row: -1}
		if b.bel != nil {
			p.fantasy = b.bel.mean(u)
			if i < len(slots)-1 {
				p.row = b.bel.rows()
				if err := b.bel.add(u, p.fantasy, false); err != nil {
					r.logf("query %d: %v", q.Index+1, err)
					p.row = -1
				}
			}
		}
		props = append(props, p)
	}
	return props, nil, nil
}

// classifyPass decodes the pass's points as one batch and classifies them
// in order: an invalid decode or a known object is journaled with the
// failure or the known score, which replaces its fantasy in the GP's data;
// an object already chosen in the round keeps its fantasy; a novel object
// is chosen. It returns the slots still open.
func (b *roundBuilder[O]) classifyPass(slots []slot, props []passPoint) ([]slot, error) {
	r := b.r
	zs := make([][]float64, len(props))
	for i, p := range props {
		zs[i] = p.z
	}
	t := time.Now()
	objs, ok, err := r.decode(zs, attemptSeed(r.cfg.Seed, streamDecode, uint64(b.start), b.attempt-len(props)))
	share := time.Since(t).Seconds() / float64(len(props))
	if err != nil {
		return nil, err
	}
	var update beliefUpdate
	open := slots[:0:0]
	for i, p := range props {
		p.q.Index = b.start + len(b.queries)
		p.q.Timing.Decode = share
		y, real, novel := p.fantasy, false, false
		key := ""
		if ok[i] {
			key = r.task.Key(objs[i])
		}
		switch {
		case !ok[i]:
			p.q.Valid, p.q.Score, p.q.Failure = false, r.task.FailureScore(), "invalid decode"
			b.queries = append(b.queries, p.q)
			real = true
		case r.isKnown(key):
			p.q.Valid, p.q.Object, p.q.Known, p.q.Score = true, key, true, r.data.known[key]
			b.queries = append(b.queries, p.q)
			real = true
		case b.picked[key]: // chosen earlier in the round: its fantasy stays
		default:
			b.pick(p.q, key, objs[i], nil)
			novel = true
		}
		if real && b.bel != nil {
			y = b.bel.standardize(r.sign * p.q.Score)
		}
		update.record(p, y, real)
		if !novel {
			open = append(open, slot{tries: slots[p.slot].tries + 1, u: p.u})
		}
	}
	return open, b.applyBelief(update)
}

// beliefUpdate is what a pass's classification changes in the believer:
// fantasies replaced by real scores and points not yet added.
type beliefUpdate struct {
	set     map[int]float64 // row -> real standardised score
	xs      [][]float64
	ys      []float64
	realAdd []bool
}

func (w *beliefUpdate) record(p passPoint, y float64, real bool) {
	switch {
	case p.row >= 0 && real:
		if w.set == nil {
			w.set = map[int]float64{}
		}
		w.set[p.row] = y
	case p.row < 0 && p.u != nil:
		w.xs, w.ys, w.realAdd = append(w.xs, p.u), append(w.ys, y), append(w.realAdd, real)
	}
}

// applyBelief conditions the round's GP on a pass's outcome with one
// posterior update. A failed update of fantasies only is logged and leaves
// the GP as it was (the next passPoint may then decode to a chosen object
// and is skipped); a failed update with a real score is an error.
func (b *roundBuilder[O]) applyBelief(w beliefUpdate) error {
	if b.bel == nil || (len(w.set) == 0 && len(w.xs) == 0) {
		return nil
	}
	err := b.bel.update(w.set, w.xs, w.ys, w.realAdd)
	if err == nil {
		return nil
	}
	if len(w.set) > 0 {
		return err
	}
	for _, real := range w.realAdd {
		if real {
			return err
		}
	}
	b.r.logf("query %d: %v", b.start+len(b.queries), err)
	return nil
}

// fallBack sends every slot that has spent RepeatTries acquisition steps to
// the ball fallback, in order; it returns the slots still open, or stops
// at the first slot for which nothing novel is within reach (b.exhausted).
func (b *roundBuilder[O]) fallBack(slots []slot) ([]slot, error) {
	open := slots[:0]
	for _, s := range slots {
		if s.tries < b.r.cfg.RepeatTries {
			open = append(open, s)
			continue
		}
		if s.u == nil { // RepeatTries 0 is refused by Validate; keep the loop honest
			return nil, fmt.Errorf("bo: no acquisition step was made for query %d", b.start+len(b.queries)+1)
		}
		found, _, err := b.ballFallback(s.u)
		if err != nil || !found {
			return nil, err
		}
	}
	return open, nil
}
