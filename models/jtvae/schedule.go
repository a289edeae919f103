package jtvae

import (
	"slices"

	"github.com/tlbo-native/tlbo-native/torch"
)

// schedule is a set of GRU messages ordered by dependency level: row 0 of the
// message table is the zero message, message i (in row order) is row i+1.
// The levels run as one fused operator (levels); the synchronous sweeps
// (tests) as one block swept iterations times.
type schedule struct {
	labels     *torch.Tensor // distinct sender labels (embedding indices)
	levels     torch.GRUSchedule
	blocks     []block // the sweeps' block
	iterations int     // 1: the levels, in order; >1: blocks[0] swept synchronously
	rows       []int64 // message id -> table row (shared by identical messages)
	n          int     // distinct messages
}

// levelCount is the number of levels of a level schedule.
func (s *schedule) levelCount() int { return len(s.levels.Levels) - 1 }

// block is one level: messages start..start+count-1 (row order), with their
// incoming messages as (table row, message within the block) pairs sorted by
// message: in.idx are the rows, in.offsets each message's first pair and
// iota 0..pairs-1 (bags over gathered rows). label is each message's index
// among the schedule's labels and pairLabel that of each pair's message:
// the GRU gathers its label terms per block, so that backward touches
// label-sized gradients, not message-sized ones.
type block struct {
	start, count     int64
	in               agg
	iota             *torch.Tensor
	label, pairLabel *torch.Tensor
}

// makeBlock builds the block of messages start.. whose k-th message has
// label index label[k] and sums the table rows in[k].
func makeBlock(bd *builder, start int64, label []int64, in [][]int64) block {
	var from, to, iota, pairLabel []int64
	for k, rows := range in {
		for _, r := range rows {
			from, to = append(from, r), append(to, int64(k))
			iota, pairLabel = append(iota, int64(len(iota))), append(pairLabel, label[k])
		}
	}
	return block{start: start, count: int64(len(in)), in: bd.agg(from, to, len(in)), iota: bd.ints(iota),
		label: bd.ints(label), pairLabel: bd.ints(pairLabel)}
}

// msgSpec is a message before scheduling: the sender's embedding index and
// the ids of the messages it sums.
type msgSpec struct {
	wid int64
	in  []int64
}

// levels returns each message's dependency level: 1 without inputs, else 1 +
// the largest level of its inputs (the inputs form a DAG: tree messages from
// the other side, or earlier trace steps).
func levels(msgs []msgSpec) []int {
	lv := make([]int, len(msgs))
	var visit func(i int) int
	visit = func(i int) int {
		if lv[i] > 0 {
			return lv[i]
		}
		l := 1
		for _, j := range msgs[i].in {
			l = max(l, visit(int(j))+1)
		}
		lv[i] = l
		return l
	}
	for i := range msgs {
		visit(i)
	}
	return lv
}

// buildSchedule orders messages by level and keeps one of each set of
// identical messages (same sender label, same incoming messages: the same
// computation tree, so the same value in every sweep); every message's row is
// its representative's. With depth > 0 the messages take their values after
// depth synchronous sweeps (truncate), so no level exceeds depth; with
// depth < 0 it returns one block swept -depth times instead (tests: the
// sweeps themselves).
func buildSchedule(bd *builder, msgs []msgSpec, depth int) schedule {
	lv := levels(msgs)
	if depth < 0 {
		return sweptSchedule(bd, msgs, lv, -depth)
	}
	n := len(msgs)
	if depth > 0 && n > 0 && slices.Max(lv) > depth {
		msgs = truncate(msgs, lv, depth)
		lv = levels(msgs)
	}
	s, distinct, of := orderedSchedule(bd, msgs, lv)
	s.levels = s.fusedLevels(bd, msgs, distinct, of, lv)
	s.rows = s.rows[:n] // the truncated messages' partial values have no id
	return s
}

// sweptSchedule is the schedule of that many synchronous sweeps over the
// distinct messages.
func sweptSchedule(bd *builder, msgs []msgSpec, lv []int, sweeps int) schedule {
	s, distinct, of := orderedSchedule(bd, msgs, lv)
	s.iterations = sweeps
	s.blocks = []block{s.block(bd, msgs, distinct, of, 0, len(distinct))}
	return s
}

// truncate returns messages whose level schedule gives each message of msgs
// (levels lv) its value after depth synchronous sweeps from zero: after t
// sweeps a message of level l holds its final value if l <= t, else the GRU
// of its inputs' values after t-1 sweeps. The first len(msgs) entries are the
// messages themselves (those deeper than depth now summing their inputs'
// values after depth-1 sweeps); the partial values they need follow, each
// once. So a batch with a deep tree still computes each of its other
// messages once, instead of sweeping the whole batch depth times as the
// authors do.
func truncate(msgs []msgSpec, lv []int, depth int) []msgSpec {
	out := slices.Clone(msgs)
	partial := map[[2]int]int64{} // (message, sweeps) -> id
	var after func(m, t int) int64
	inputs := func(m, t int) []int64 { // m's inputs after t-1 sweeps
		if t == 1 {
			return nil // zero messages add nothing
		}
		in := make([]int64, len(msgs[m].in))
		for i, j := range msgs[m].in {
			in[i] = after(int(j), t-1)
		}
		return in
	}
	after = func(m, t int) int64 { // the id of message m's value after t < depth sweeps
		if t >= lv[m] {
			return int64(m) // final
		}
		key := [2]int{m, t}
		if id, ok := partial[key]; ok {
			return id
		}
		in := inputs(m, t)
		id := int64(len(out))
		out = append(out, msgSpec{wid: msgs[m].wid, in: in})
		partial[key] = id
		return id
	}
	for m := range msgs {
		if lv[m] > depth {
			in := inputs(m, depth)
			out[m].in = in
		}
	}
	return out
}

// orderedSchedule orders the messages by level lv and interns identical
// ones: the schedule's rows and labels, and the distinct messages
// (representatives, in row order) with their label indices.
func orderedSchedule(bd *builder, msgs []msgSpec, lv []int) (s schedule, distinct []int, of []int64) {
	order := make([]int, len(msgs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return lv[a] - lv[b] })
	s = schedule{rows: make([]int64, len(msgs)), iterations: 1}
	keys := newInterner(len(msgs))
	var wid []int64
	for _, id := range order {
		in := make([]int64, len(msgs[id].in))
		for i, j := range msgs[id].in {
			in[i] = s.rows[j]
		}
		slices.Sort(in)
		k, fresh := keys.id([]int64{msgs[id].wid}, in)
		if fresh {
			distinct = append(distinct, id)
			wid = append(wid, msgs[id].wid)
		}
		s.rows[id] = k + 1
	}
	s.n = len(distinct)
	labels, of := distinctLabels(wid)
	s.labels = bd.ints(labels)
	return s, distinct, of
}

// fusedLevels lays out the distinct messages order (label indices of) by
// level lv for torch.GraphGRU.
func (s *schedule) fusedLevels(bd *builder, msgs []msgSpec, order []int, of []int64, lv []int) torch.GRUSchedule {
	var src, dst []int64
	levels, pairs := []int64{0}, []int64{0}
	for lo := 0; lo < len(order); {
		hi := lo
		for hi < len(order) && lv[order[hi]] == lv[order[lo]] {
			hi++
		}
		for k, id := range order[lo:hi] {
			for _, j := range msgs[id].in {
				src, dst = append(src, s.rows[j]), append(dst, int64(k))
			}
		}
		levels, pairs = append(levels, int64(hi)), append(pairs, int64(len(src)))
		lo = hi
	}
	return torch.GRUSchedule{Label: bd.ints(of), Src: bd.ints(src), Dst: bd.ints(dst), Levels: levels, PairLevels: pairs}
}

// block is the block of the distinct messages order[lo:hi], whose label
// indices are of[lo:hi].
func (s *schedule) block(bd *builder, msgs []msgSpec, order []int, of []int64, lo, hi int) block {
	in := make([][]int64, hi-lo)
	for k, id := range order[lo:hi] {
		for _, j := range msgs[id].in {
			in[k] = append(in[k], s.rows[j])
		}
	}
	return makeBlock(bd, int64(lo), of[lo:hi], in)
}
