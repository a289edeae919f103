package external

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultRetries is how many times Command restarts a program that exits
// while evaluating an object before the evaluation fails, when
// CommandOptions.Retries is 0.
const DefaultRetries = 2

// maxLine is the longest output line read whole; longer lines are skipped.
const maxLine = 4 << 20

// CommandOptions configures a Command.
type CommandOptions struct {
	// Workers is the number of processes, hence of concurrent evaluations
	// (default 1). Score calls beyond it wait for a free process.
	Workers int
	// Timeout bounds one attempt at an evaluation (0: none). A program that
	// has not replied by then is killed (its process group) and restarted
	// for the next evaluation; the evaluation fails with FailTimeout.
	Timeout time.Duration
	// Retries is how many times an evaluation is retried on a fresh process
	// after the program exited while evaluating it (0: DefaultRetries;
	// negative: none).
	Retries int
	// Dir is the program's working directory (default: the caller's).
	Dir string
	// Env is added to the caller's environment. Each process also gets
	// TLBO_WORKER, its slot's index 0..Workers-1 (e.g. to pick a GPU).
	Env []string
	// Stderr receives the programs' standard error (default: discarded).
	// The last lines are kept either way for the reason of a crash.
	Stderr io.Writer
	// Logf, when set, reports restarts and output lines that are not
	// replies.
	Logf func(format string, args ...any)
	// Negate makes Score return the negated score, for a program whose
	// direction is not the task's.
	Negate bool
	// StopGrace is how long Close waits for a program to exit after its
	// standard input is closed before killing it (default 5 s).
	StopGrace time.Duration
}

// CommandStats counts a Command's work.
type CommandStats struct {
	Evaluations int64 // Score calls that reached a program
	Failures    int64 // of which failed
	Starts      int64 // processes started
	Crashes     int64 // processes that exited while evaluating
	Timeouts    int64 // evaluations that timed out
	Noise       int64 // output lines that were not replies to the evaluation in progress
}

// Command is an objective computed by a user's program: see the package
// documentation for the protocol. It keeps a pool of Workers processes,
// each evaluating one object at a time, and is safe for concurrent use.
type Command struct {
	argv   []string
	opts   CommandOptions
	free   chan *slot
	nextID atomic.Uint64
	closed chan struct{}
	once   sync.Once
	stderr io.Writer

	mu    sync.Mutex
	procs map[*proc]bool // live processes, for Close

	evaluations, failures, starts, crashes, timeouts, noise atomic.Int64
}

// slot is one worker: the process it currently holds, started on demand.
type slot struct {
	index int
	p     *proc
}

// NewCommand returns the objective of the program that cmdline names,
// split by SplitCommand. Processes start on the first evaluations.
func NewCommand(cmdline string, opts CommandOptions) (*Command, error) {
	argv, err := SplitCommand(cmdline)
	if err != nil {
		return nil, err
	}
	return NewCommandArgv(argv, opts)
}

// NewCommandArgv is NewCommand with the program and its arguments given.
func NewCommandArgv(argv []string, opts CommandOptions) (*Command, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("external: no program given")
	}
	if opts.Workers <= 0 {
		opts.Workers = 1
	}
	switch {
	case opts.Retries == 0:
		opts.Retries = DefaultRetries
	case opts.Retries < 0:
		opts.Retries = 0
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = 5 * time.Second
	}
	c := &Command{argv: append([]string(nil), argv...), opts: opts, free: make(chan *slot, opts.Workers),
		closed: make(chan struct{}), procs: map[*proc]bool{}, stderr: io.Discard}
	if opts.Stderr != nil {
		c.stderr = &lockedWriter{w: opts.Stderr}
	}
	for i := range opts.Workers {
		c.free <- &slot{index: i}
	}
	return c, nil
}

// Argv returns the program and its arguments.
func (c *Command) Argv() []string { return append([]string(nil), c.argv...) }

// Stats returns the counts so far.
func (c *Command) Stats() CommandStats {
	return CommandStats{Evaluations: c.evaluations.Load(), Failures: c.failures.Load(), Starts: c.starts.Load(),
		Crashes: c.crashes.Load(), Timeouts: c.timeouts.Load(), Noise: c.noise.Load()}
}

// Score evaluates obj. It returns a *Failure when the program replied an
// error, a score that is not a finite number, did not reply in time, or
// kept exiting.
func (c *Command) Score(obj string) (float64, error) {
	return c.ScoreContext(context.Background(), obj)
}

// ScoreContext is Score, given up when ctx is done (the process evaluating
// obj is then killed).
func (c *Command) ScoreContext(ctx context.Context, obj string) (float64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var s *slot
	select {
	case s = <-c.free:
	case <-c.closed:
		return 0, fail(FailClosed, "objective: closed")
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	defer func() { c.free <- s }()
	c.evaluations.Add(1)
	v, err := c.evaluate(ctx, s, obj)
	if err != nil {
		c.failures.Add(1)
		return 0, err
	}
	if c.opts.Negate {
		v = -v
	}
	return v, nil
}

func (c *Command) logf(format string, args ...any) {
	if c.opts.Logf != nil {
		c.opts.Logf(format, args...)
	}
}

// evaluate runs obj on slot s's process, restarting a process that exits.
func (c *Command) evaluate(ctx context.Context, s *slot, obj string) (float64, error) {
	for attempt := 0; ; attempt++ {
		if s.p != nil && s.p.dead() {
			c.logf("objective: %s (worker %d) exited between evaluations (%s); restarting it", c.argv[0], s.index, s.p.status())
			c.drop(s.p)
			s.p = nil
		}
		if s.p == nil {
			p, err := c.start(s.index)
			if err != nil {
				return 0, err
			}
			s.p = p
		}
		id := c.nextID.Add(1)
		out := s.p.ask(ctx, c, id, obj, c.opts.Timeout)
		switch {
		case out.replied:
			return out.score, nil
		case out.err != nil:
			return 0, out.err
		case out.timedOut:
			c.timeouts.Add(1)
			tail := s.p.stderrTail()
			c.kill(s)
			reason := fmt.Sprintf("objective: no reply within %v (the program was killed)", c.opts.Timeout)
			if tail != "" {
				reason += "; its last standard error: " + tail
			}
			return 0, fail(FailTimeout, "%s", reason)
		case out.cancelled != nil:
			c.kill(s)
			return 0, out.cancelled
		}
		// The process exited while evaluating obj.
		c.crashes.Add(1)
		p := s.p
		c.drop(p)
		s.p = nil
		if attempt >= c.opts.Retries {
			reason := fmt.Sprintf("objective: the program exited (%s) while evaluating, %d time(s)", p.status(), attempt+1)
			if t := p.stderrTail(); t != "" {
				reason += "; its last standard error: " + t
			}
			return 0, fail(FailCrash, "%s", reason)
		}
		c.logf("objective: %s (worker %d) exited (%s) while evaluating; restarting it (retry %d of %d)",
			c.argv[0], s.index, p.status(), attempt+1, c.opts.Retries)
	}
}

// kill stops slot s's process and forgets it.
func (c *Command) kill(s *slot) {
	if s.p != nil {
		s.p.terminate(0)
		c.drop(s.p)
		s.p = nil
	}
}

func (c *Command) drop(p *proc) {
	c.mu.Lock()
	delete(c.procs, p)
	c.mu.Unlock()
	p.release()
}

// start starts a process for slot index.
func (c *Command) start(index int) (*proc, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.closed:
		return nil, fail(FailClosed, "objective: closed")
	default:
	}
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Dir = c.opts.Dir
	cmd.Env = append(append(os.Environ(), c.opts.Env...), "TLBO_WORKER="+strconv.Itoa(index))
	// Its own process group, so that a timeout or Close also stops the
	// children it started (a shell script's commands); on Linux it is
	// killed when this process ends (procAttr).
	cmd.SysProcAttr = procAttr()
	cmd.WaitDelay = 2 * time.Second
	p := &proc{lines: make(chan []byte), exited: make(chan struct{}), quit: make(chan struct{}), tail: &tailBuffer{max: 2048}}
	cmd.Stderr = io.MultiWriter(p.tail, c.stderr)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fail(FailStart, "objective: %v", err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fail(FailStart, "objective: %v", err)
	}
	cmd.Stdout = pw
	p.cmd, p.stdin, p.out = cmd, stdin, pr
	err = p.run()
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, fail(FailStart, "objective: cannot start %s: %v", strings.Join(c.argv, " "), err)
	}
	c.starts.Add(1)
	go p.read()
	c.procs[p] = true
	return p, nil
}

// run starts the process and reaps it (wait) on a goroutine locked to its
// OS thread. Linux sends the parent-death signal (procAttr) when the
// thread that started the child ends, not the process, and Go ends a
// thread only when a goroutine exits while locked to it: this goroutine
// holds its thread until the process has exited, so that the signal comes
// only when the whole run ends (kill -9 included), never because another
// goroutine retired the thread.
func (p *proc) run() error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := p.cmd.Start(); err != nil {
			started <- err
			return
		}
		addGroup(p.cmd.Process.Pid)
		started <- nil
		p.wait()
	}()
	return <-started
}

// Close closes the programs' standard input, waits up to StopGrace for them
// to exit and kills those still running. Evaluations in progress fail with
// FailClosed. Close is idempotent.
func (c *Command) Close() error {
	c.once.Do(func() {
		c.mu.Lock()
		close(c.closed)
		procs := make([]*proc, 0, len(c.procs))
		for p := range c.procs {
			procs = append(procs, p)
		}
		c.procs = map[*proc]bool{}
		c.mu.Unlock()
		var wg sync.WaitGroup
		for _, p := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.terminate(c.opts.StopGrace)
				p.release()
			}()
		}
		wg.Wait()
	})
	return nil
}

// proc is one running program.
type proc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	out     *os.File
	lines   chan []byte   // output lines; closed at end of output
	exited  chan struct{} // closed when the process has exited
	waitErr error         // set before exited is closed
	tail    *tailBuffer
	quit    chan struct{} // closed when the process is given up: nobody reads its lines
	once    sync.Once
}

// release stops the delivery of output lines (nobody will read them).
func (p *proc) release() { p.once.Do(func() { close(p.quit) }) }

// read sends the output lines to p.lines until the output ends.
func (p *proc) read() {
	defer close(p.lines)
	r := bufio.NewReaderSize(p.out, 64<<10)
	var long []byte
	skipping := false
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if !skipping {
				long = append(long, chunk...)
				if len(long) > maxLine {
					long, skipping = nil, true
				}
			}
			continue
		case err != nil && len(chunk) == 0:
			return
		}
		if !skipping {
			line := append(long, chunk...)
			select {
			case p.lines <- append([]byte(nil), line...):
			case <-p.quit:
				return
			}
		}
		long, skipping = nil, false
		if err != nil {
			return
		}
	}
}

// wait reaps the process, then kills what is left of its process group
// (which ends its output) and stops reading after a grace period in case a
// process outside the group holds the output open.
func (p *proc) wait() {
	err := p.cmd.Wait()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	dropGroup(p.cmd.Process.Pid)
	p.waitErr = err
	close(p.exited)
	time.AfterFunc(2*time.Second, func() { p.out.Close() })
}

func (p *proc) dead() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// status describes how the process ended.
func (p *proc) status() string {
	if !p.dead() {
		return "running"
	}
	if p.waitErr == nil {
		return "exit status 0"
	}
	return p.waitErr.Error()
}

func (p *proc) stderrTail() string { return p.tail.String() }

// terminate closes standard input, waits up to grace for the process to
// exit, then kills its process group and waits for it.
func (p *proc) terminate(grace time.Duration) {
	p.stdin.Close()
	if grace > 0 {
		select {
		case <-p.exited:
			return
		case <-time.After(grace):
		}
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
}

// outcome is the end of one attempt.
type outcome struct {
	replied   bool
	score     float64
	err       error // the program's Failure (error reply, bad score)
	timedOut  bool
	cancelled error // ctx's error, or FailClosed
	// none of the above: the process exited
}

// ask writes obj's request and waits for its reply.
func (p *proc) ask(ctx context.Context, c *Command, id uint64, obj string, timeout time.Duration) outcome {
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	if _, err := p.stdin.Write(encodeRequest(id, obj)); err != nil {
		// The process is gone (or closing): wait for its status.
		select {
		case <-p.exited:
		case <-time.After(time.Second):
			p.terminate(0)
		}
		return outcome{}
	}
	want := strconv.FormatUint(id, 10)
	lines, exited := p.lines, p.exited
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				lines = nil // output ended: the process has exited or is about to
				if exited == nil {
					return outcome{}
				}
				// No reply can come any more: a program that closed its
				// output but goes on running is stopped.
				go func() {
					select {
					case <-p.exited:
					case <-time.After(2 * time.Second):
						p.terminate(0)
					}
				}()
				continue
			}
			r, isReply := parseReply(line)
			switch {
			case !isReply:
				c.noise.Add(1)
				c.logf("objective: skipped an output line that is not a reply: %q", clip(string(line), 200))
				continue
			case r.id != want:
				c.noise.Add(1)
				c.logf("objective: skipped a reply to id %s while waiting for %s", r.id, want)
				continue
			case r.failed != nil:
				return outcome{err: r.failed}
			}
			return outcome{replied: true, score: r.score}
		case <-exited:
			// Replies written before exiting are still in the pipe: read
			// them until the output ends.
			exited = nil
			if lines == nil {
				return outcome{}
			}
		case <-timer:
			return outcome{timedOut: true}
		case <-ctx.Done():
			return outcome{cancelled: ctx.Err()}
		case <-c.closed:
			return outcome{cancelled: fail(FailClosed, "objective: closed while evaluating")}
		}
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(b), nil
}

// String returns the kept text's last lines, at most 500 bytes, on one line.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.buf))
	if len(s) > 500 {
		s = "..." + s[len(s)-500:]
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " | ")), " ")
}

// lockedWriter serialises writes of several processes.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
