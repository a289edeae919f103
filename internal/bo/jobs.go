package bo

import (
	"errors"
	"fmt"
)

// addJob records a journaled job: a submission completes the intent
// with its token.
func (s *journalState) addJob(j Job) {
	if j.Token != "" {
		for k := range s.jobs {
			if s.jobs[k].Token == j.Token {
				if j.ID != "" {
					s.jobs[k].ID = j.ID
				}
				return
			}
		}
	}
	s.jobs = append(s.jobs, j)
}

// attachJobs lets a Submitter task journal its jobs and re-attaches it to
// the jobs journaled before a resume, whose results it then reads back
// instead of submitting their objects again. A job journaled as an intent
// only is looked up by its token; one that provably never reached the
// scheduler (ErrNotSubmitted) is left, its evaluations submitted anew,
// and one the task cannot tell about stops the resume.
func (r *runner[O]) attachJobs() error {
	s, ok := any(r.task).(Submitter)
	if !ok {
		return nil
	}
	s.OnSubmit(func(j Job) error {
		if err := r.journal.file.append(record{Job: &j}); err != nil {
			r.logf("warning: job %s: %v", jobName(j), err)
			return err
		}
		return nil
	})
	for _, j := range r.journal.jobs {
		err := s.Attach(j)
		switch {
		case err == nil:
		case errors.Is(err, ErrNotSubmitted):
			r.logf("note: job %s: %v; its evaluations are submitted now", jobName(j), err)
		case j.Token == "":
			// Journaled by its id, after its submission: no intent to
			// resolve (a job from before tokens).
			r.logf("note: job %s: %v; its unfinished evaluations are submitted again", jobName(j), err)
		default:
			return fmt.Errorf("job %s was submitted or about to be when the run stopped, and whether the scheduler "+
				"has it cannot be told (%w); its evaluations are not submitted again: resume once it can", jobName(j), err)
		}
	}
	return nil
}

// jobName names a journaled job in messages.
func jobName(j Job) string {
	switch {
	case j.ID == "":
		return "with token " + j.Token
	case j.Token == "":
		return j.ID
	}
	return j.ID + " (token " + j.Token + ")"
}
