// Package external evaluates an objective that is a user's program, on this
// machine (Command) or as Slurm job arrays (Slurm).
//
// # Protocol
//
// The program reads one JSON object per line on its standard input,
//
//	{"id": 17, "object": "CC(=O)Oc1ccccc1C(=O)O"}
//
// and writes one line per object on its standard output, in any order:
//
//	{"id": 17, "score": 0.53}
//	{"id": 18, "error": "RDKit cannot parse the molecule"}
//
// The object is the task's text form: a SMILES, an expression, or for a
// design the path of a .npy file (ObjectFile). Objects reach the program only
// in these lines (or files), never through a shell or its command line, so
// #, \, (, [, %, quotes, blanks and non-ASCII characters arrive as they are:
// the request is plain JSON (UTF-8, no HTML escaping), and a shell script
// needs to undo only \\ and \" (and \n, \t, \uXXXX for control characters).
// The id is a number; a reply may give it as a number or a string. Output
// lines that are not replies (a banner, progress, a reply to another id)
// are skipped. A failure is a reply with "error", a score that is not a
// finite number (null, a string, NaN or Infinity as Python's json module
// writes them), no reply within the timeout, or a program that keeps
// exiting; it is returned as a *Failure whose message the loop journals,
// and the loop gives the object the task's failure score.
//
// # Command
//
// Command keeps a pool of Workers processes of the program, started on
// demand, each evaluating one object at a time; N concurrent Score calls use
// N processes. A pool rather than one process answering several ids at once
// because most objectives are written as a loop over lines, which a single
// process would run one object at a time; and because a pool confines a
// crash or a hang to one evaluation: a timed-out program is killed (its
// whole process group) and restarted, a program that exits while
// evaluating is restarted and the object sent again, at most Retries times.
// A program that exits after each reply (one object per run) works as
// well. The command line is split into arguments by SplitCommand, without a
// shell.
//
// Each program runs in a process group of its own, so that a timeout or
// Close kills what it started too (the commands of a shell script), and on
// Linux it is killed when the process running Command ends, kill -9
// included (a parent-death signal; processes the program started itself
// are not signalled then: only the group kill reaches them, which
// KillGroups sends to every running program at once). Slurm arrays are
// left running: they are re-attached on resume.
//
// # Fail fast
//
// A broken program (a typo in its path, a library it cannot import, a
// licence server down) fails every evaluation, and would spend a run's
// whole budget on failures. FailFast tells it from objects that fail: the
// program is broken when it cannot be started (at once, at any time), or
// when its first k evaluations all fail, whatever the reasons (error
// replies, crashes after their retries, timeouts, scores that are not
// numbers; k is DefaultFailFast unless the caller says otherwise, 0 turns
// the rule off). Once one evaluation has succeeded, failures are the
// objects' again. The error, a *Broken, names the program and each
// reason: exit status or signal with the last lines of its standard
// error, the timeout, the error reply. The count starts afresh in each
// process (a resumed run gives the program, perhaps fixed, k more tries).
//
// # Slurm
//
// Slurm submits each batch of objects as one job array (sbatch --array
// 0-(n-1)) in a directory of its own, Dir/array-NNNN, which must be on a
// filesystem that the compute nodes share (and so must the files of
// ObjectFile): manifest.jsonl (the requests, one per array task), job.sh
// (runs the command on line SLURM_ARRAY_TASK_ID+1 of the manifest: the
// same protocol as Command, one object per program run), token (the
// array's name and random digits, unique to it), results/ (per task: the
// program's output, standard error and exit status, the last written when
// the task is done), logs/ (Slurm's output of each task), job_id, and
// abandoned when the array was given up as never submitted (its job
// script then evaluates nothing). Tasks are polled by their result files,
// then with squeue -r -t all (no accounting database needed); a task that
// ends, or leaves the queue, without a result gets a FailSlurm failure
// naming its Slurm state (FAILED, CANCELLED, TIMEOUT, ...). The arrays
// outlive the executor: Close leaves them running.
//
// # Never twice
//
// Every evaluation costs money, so an array is submitted once whatever
// happens to the process. Its directory, manifest and token are on disk,
// and OnIntent has journaled the token, before sbatch runs; the array is
// submitted with job name "tlbo-" + token. When the process dies between
// sbatch and OnSubmit (the id journaled), AttachToken finds the array by
// that name (squeue -t all), or, once Slurm has forgotten it, by its
// results and logs; only an array of which neither Slurm nor its directory
// knows anything is declared never submitted (ErrNotSubmitted), after it is
// marked abandoned so that an sbatch orphaned by the kill cannot still run
// it. When squeue does not answer, AttachToken says that it cannot tell,
// and the caller must not submit the objects again. An sbatch that fails
// is followed by the same look-up before anything is retried (a reply
// lost after Slurm took the array).
//
// # Typical use
//
// The loop calls Score from as many goroutines as evaluations run at once:
//
//	obj, err := external.NewCommand(cmdline, external.CommandOptions{Workers: n, Timeout: t})
//	defer obj.Close()
//	score, err := obj.Score(smiles) // err: a *Failure, the reason to journal
//
// On Slurm, Score calls made within BatchWindow of each other share one
// array. The caller journals each array's token when OnIntent reports it
// (before sbatch) and its job id when OnSubmit does (before any of its
// results come back), and on --resume re-attaches to the arrays its
// journal has before evaluating their objects again:
//
//	s, err := external.NewSlurm(cmdline, external.SlurmOptions{Dir: runDir + "/slurm", Args: slurmArgs,
//		OnIntent: func(j external.Job) error { return journal(j.Token, "") },
//		OnSubmit: func(j external.Job) { journal(j.Token, j.ID) }})
//	for _, j := range journaledJobs { // id "" for an intent only
//		_, err := s.AttachToken(j.Token, j.ID)
//		if err != nil && !errors.Is(err, external.ErrNotSubmitted) {
//			return err // cannot tell whether Slurm has it: do not submit again
//		}
//	}
//	score, err := s.Score(smiles) // an attached object's result, not a new array task
//
// An attached object's result is kept until one Score call takes it.
//
// A caller that evaluates an object again on purpose (a stochastic
// objective: each evaluation a replicate) names each evaluation with a tag
// unique to it, ScoreTagged(ctx, tag, obj) (the BO loop's tag is its query
// index). The tags are kept in the array's directory (tags, one line per
// task) before sbatch runs, and an attached array's task then goes to the
// evaluation of its tag only: the evaluation in flight at a kill gets its
// result back after the restart, while a later evaluation of the same
// object, or an untagged Score, is submitted anew instead of taking an
// earlier evaluation's result. An array whose results were all used before
// the kill is attached without feeding anyone. (An array written before
// tags has no tags file; its tasks are matched by object, as before.)
// Attach re-attaches by job id alone. AttachAll attaches every array in
// Dir instead, including one submitted just before a crash whose id no
// journal holds (found by its token); it suits a caller that evaluates
// each object at most once and journals no intents (the labelled start).
package external
