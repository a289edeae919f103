package external

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kinds of Failure.
const (
	// FailError: the program replied {"id": ..., "error": "..."}.
	FailError = "error"
	// FailTimeout: no reply within the timeout.
	FailTimeout = "timeout"
	// FailNotANumber: the reply's score is not a number (a string, null, an object, missing).
	FailNotANumber = "not-a-number"
	// FailNaN: the reply's score is NaN or infinite.
	FailNaN = "nan"
	// FailCrash: the program exited while evaluating, more often than the retries allow.
	FailCrash = "crash"
	// FailStart: the program could not be started.
	FailStart = "start"
	// FailSlurm: a Slurm array task ended without a result (FAILED, CANCELLED, TIMEOUT, ...).
	FailSlurm = "slurm"
	// FailClosed: the executor was closed before the evaluation finished.
	FailClosed = "closed"
)

// Failure is the error of an evaluation that produced no score. Its message
// is the reason that the loop journals.
type Failure struct {
	Kind   string // one of the Fail* constants
	Reason string
}

func (f *Failure) Error() string { return f.Reason }

func fail(kind, format string, args ...any) *Failure {
	return &Failure{Kind: kind, Reason: fmt.Sprintf(format, args...)}
}

// FailureKind returns the kind of err when it is (or wraps) a *Failure, else "".
func FailureKind(err error) string {
	var f *Failure
	if errors.As(err, &f) {
		return f.Kind
	}
	return ""
}

// request is one line written to the program.
type request struct {
	ID     uint64 `json:"id"`
	Object string `json:"object"`
}

// encodeRequest returns the JSON line of a request, newline included. HTML
// characters are not escaped (a SMILES keeps its < and &), and non-ASCII
// text stays UTF-8, so that a shell or awk script sees the object as it is
// except for JSON's own escapes (\" and \\, and \n, \t, \uXXXX for control
// characters).
func encodeRequest(id uint64, obj string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(request{ID: id, Object: obj}); err != nil {
		panic(err) // a struct of an integer and a string always encodes
	}
	return buf.Bytes()
}

// reply is a parsed line of the program's output.
type reply struct {
	id     string // the id as text: 17, or "17" unquoted
	score  float64
	failed *Failure // an error reply or a bad score; nil when score holds
}

// parseReply parses one output line. It returns ok false for a line that is
// not a JSON object with an id (noise: a banner, a progress line), which the
// caller skips; a line with an id whose score is missing or bad is a reply
// carrying its Failure. Python's json module writes NaN and Infinity as
// bare words, which JSON does not allow: they are read as such and fail.
func parseReply(line []byte) (r reply, ok bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return r, false
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		if err := json.Unmarshal(quoteBareNumbers(line), &raw); err != nil {
			return r, false
		}
	}
	id, has := raw["id"]
	if !has {
		return r, false
	}
	r.id = idText(id)
	if r.id == "" {
		return r, false
	}
	if e, has := raw["error"]; has && string(e) != "null" {
		var msg string
		if json.Unmarshal(e, &msg) != nil {
			msg = string(e)
		}
		if msg == "" {
			msg = "(empty error message)"
		}
		r.failed = fail(FailError, "objective: %s", msg)
		return r, true
	}
	s, has := raw["score"]
	if !has {
		r.failed = fail(FailNotANumber, "objective replied without a score or an error: %s", clip(string(line), 200))
		return r, true
	}
	r.score, r.failed = parseScore(s)
	return r, true
}

// parseScore reads a score: a JSON number, finite.
func parseScore(s json.RawMessage) (float64, *Failure) {
	text := string(s)
	switch text {
	case `"NaN"`, `"nan"`:
		return 0, fail(FailNaN, "objective's score is NaN")
	case `"Infinity"`, `"-Infinity"`, `"inf"`, `"-inf"`:
		return 0, fail(FailNaN, "objective's score is %s, not finite", strings.Trim(text, `"`))
	}
	if len(text) == 0 || !(text[0] == '-' || (text[0] >= '0' && text[0] <= '9')) {
		return 0, fail(FailNotANumber, "objective's score is not a number: %s", clip(text, 100))
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fail(FailNotANumber, "objective's score is not a number: %s", clip(text, 100))
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fail(FailNaN, "objective's score %s is not finite", clip(text, 100))
	}
	return v, nil
}

// idText returns a reply's id as text: a number as written, a string
// unquoted; "" for anything else.
func idText(id json.RawMessage) string {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(id, &n) == nil {
		// 17.0 and 1.7e1 are the id 17 as well.
		if v, err := strconv.ParseFloat(n.String(), 64); err == nil && v == math.Trunc(v) && v >= 0 && v < 1<<53 {
			return strconv.FormatUint(uint64(v), 10)
		}
		return n.String()
	}
	return ""
}

// quoteBareNumbers rewrites the bare words NaN, Infinity and -Infinity
// outside strings as strings, so that a line Python's json.dumps wrote
// parses.
func quoteBareNumbers(line []byte) []byte {
	var out []byte
	inStr, esc := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
			out = append(out, c)
			continue
		}
		matched := false
		for _, w := range []string{"NaN", "-Infinity", "Infinity"} {
			if bytes.HasPrefix(line[i:], []byte(w)) {
				out = append(out, '"')
				out = append(out, w...)
				out = append(out, '"')
				i += len(w) - 1
				matched = true
				break
			}
		}
		if !matched {
			out = append(out, c)
		}
	}
	return out
}

// clip shortens s to at most n bytes, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
