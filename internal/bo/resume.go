package bo

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tlbo-native/tlbo-native/internal/rusage"
)

// open prepares the run directory (new or resumed), selects the labelled
// start and replays the journal into the runner's state.
func (r *runner[O]) open(data Data[O]) error {
	cpu0 := rusage.CPUSecondsWithChildren() // the journal's first cpu_s counts from here, the replay included
	dir := r.opts.Dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("bo: run directory: %w", err)
	}
	cfgPath := filepath.Join(dir, ConfigFile)
	jPath := filepath.Join(dir, JournalFile)
	_, cfgErr := os.Stat(cfgPath)
	exists := cfgErr == nil
	if !exists {
		if _, err := os.Stat(jPath); err == nil {
			return fmt.Errorf("bo: %s has a journal but no %s; cannot tell which run it belongs to", dir, ConfigFile)
		}
	}
	var recs []record
	var size int64
	switch {
	case exists && !r.opts.Resume:
		return fmt.Errorf("bo: %s already holds a run; pass --resume to continue it or choose another directory", dir)
	case exists:
		stored, err := ReadConfigFields(dir)
		if err != nil {
			return fmt.Errorf("bo: resume: %w", err)
		}
		if d := diffFields(upgradeFields(stored), r.cfg.Fields()); d != "" {
			return fmt.Errorf("bo: cannot resume %s with a different configuration: %s", dir, d)
		}
		var torn string
		recs, size, torn, err = readJournal(jPath)
		if err != nil {
			return fmt.Errorf("bo: resume: %w", err)
		}
		if torn != "" {
			r.logf("warning: %s", torn)
		}
		if err := writeConfig(dir, r.cfg); err != nil { // the budget may have changed
			return fmt.Errorf("bo: %w", err)
		}
	default:
		if r.opts.Resume {
			// checkResume let it through: the caller started the run
			// (its lock is there) and was stopped before it began.
			r.logf("note: %s holds no journal yet; starting the run's loop", dir)
		}
		if err := writeConfig(dir, r.cfg); err != nil {
			return fmt.Errorf("bo: %w", err)
		}
	}
	if err := writeFlags(dir, r.opts.Flags); err != nil {
		return fmt.Errorf("bo: %w", err)
	}
	r.start(data)
	if err := r.replay(recs); err != nil {
		return fmt.Errorf("bo: resume %s: %w", dir, err)
	}
	j, err := openJournal(jPath, size, cpu0)
	if err != nil {
		return fmt.Errorf("bo: %w", err)
	}
	r.journal.file = j
	if err := r.attachJobs(); err != nil {
		j.close()
		return fmt.Errorf("bo: resume %s: %w", dir, err)
	}
	// results.npz may lag the journal by the query a kill interrupted.
	if err := r.writeResults(); err != nil {
		j.close()
		return err
	}
	return nil
}

// replay applies the journal's records to the runner's state: versions,
// stops and jobs here, queries, rounds and evaluations through the loop
// policy.
func (r *runner[O]) replay(recs []record) error {
	for _, rec := range recs {
		switch {
		case rec.Version != nil:
			v := *rec.Version
			if v.Version != r.version.current+1 {
				return fmt.Errorf("journal has version %d after version %d", v.Version, r.version.current)
			}
			if len(r.round.open) > 0 {
				return fmt.Errorf("journal has version %d before %d rounds are complete", v.Version, len(r.round.open))
			}
			r.journal.versions = append(r.journal.versions, v)
			r.version.begin(v.Version, len(r.journal.queries))
		case rec.Stop != nil:
			if rec.Stop.Version != r.version.current {
				return fmt.Errorf("journal stops version %d during version %d", rec.Stop.Version, r.version.current)
			}
			r.version.stopped = true
		case rec.Job != nil:
			r.journal.addJob(*rec.Job)
		default: // a query, a round or an evaluation
			if err := r.policy.replay(rec); err != nil {
				return err
			}
		}
	}
	r.journal.resumed = len(r.complete())
	r.journal.reported = r.journal.resumed
	return nil
}
