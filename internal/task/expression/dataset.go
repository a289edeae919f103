package expression

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/datadir"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// Data set file and its public origin (shared/data/README.md).
const (
	// DataFileName is the data set's file name (Kusner et al. 2017, 100,000 expressions).
	DataFileName = "equation2_15_dataset.txt"
	// DataURL is the data set's public origin.
	DataURL = "https://raw.githubusercontent.com/cambridge-mlg/weighted-retraining/master/assets/data/expr/equation2_15_dataset.txt"
	// DataSHA256 is the sha256 of the file at DataURL.
	DataSHA256 = "ae9850311e884f888491f56dca57ef3c2f9880899e63d26b5da3b71840591ca2"
	// DefaultGenerateN is the number of expressions generated when no file can be had.
	DefaultGenerateN = 100000
)

// Dataset is a set of expressions with their scores.
type Dataset struct {
	// Exprs are the expressions in the data set's spaced text form, in file order.
	Exprs []string
	// Scores are the expressions' scores against Target (lower is better).
	Scores []float64
	// Target is the target expression the scores were computed against.
	Target string
	// Source says where the expressions came from: a file, a download or generation.
	Source string
}

// LoadOptions configures Load. The zero value searches the default places, scores
// against DefaultTarget and reports fallbacks on os.Stderr.
type LoadOptions struct {
	// DataDir is the data directory (flag --data-dir); "" means $TLBO_DATA, then
	// shared/data in the working directory or one of its parents (i.e. ../shared/data
	// beside a checkout), as task.DataDirs finds them. The file is
	// DataDir/expression/DataFileName or DataDir/DataFileName.
	DataDir string
	// Target is the target expression (see NewObjective); "" means DefaultTarget.
	Target string
	// Seed seeds generation (Synthetic).
	Seed uint64
	// Synthetic generates GenerateN expressions by sampling the grammar when
	// no data file can be had; without it a missing data set is an error.
	Synthetic bool
	// GenerateN is the number of expressions to generate; 0 means DefaultGenerateN.
	GenerateN int
	// Log receives messages about fallbacks (download, generation); nil means os.Stderr.
	Log io.Writer
	// URL and SHA256 override the download origin and its checksum (tests).
	URL, SHA256 string
	// Timeout bounds the download; 0 means one minute.
	Timeout time.Duration
}

// Load returns the data set and its scores. A data directory given explicitly (DataDir
// or $TLBO_DATA) must exist and hold the file or receive it by download; otherwise Load looks for
// shared/data upwards from the working directory, then in the user cache directory,
// then downloads into the cache. When all of that fails, it generates GenerateN
// expressions by sampling the grammar (seeded) if opts.Synthetic allows it, saying so on
// Log, and otherwise returns an error naming the places it looked and how to get the data.
func Load(opts LoadOptions) (*Dataset, error) {
	obj, err := NewObjective(opts.Target)
	if err != nil {
		return nil, err
	}
	logw := opts.Log
	if logw == nil {
		logw = os.Stderr
	}
	exprs, source, err := findExpressions(opts, logw)
	if err != nil {
		return nil, err
	}
	return &Dataset{Exprs: exprs, Scores: obj.ScoreAll(exprs), Target: obj.Target(), Source: source}, nil
}

func findExpressions(opts LoadOptions, logw io.Writer) ([]string, string, error) {
	dirs, given, err := datadir.Dirs(opts.DataDir)
	if err != nil {
		return nil, "", err
	}
	if given != "" {
		dir := dirs[0]
		exprs, source, err := readOrDownload(dir, opts, logw)
		if err == nil || !opts.Synthetic {
			if err != nil {
				err = missingDataError([]string{dir}, err)
			}
			return exprs, source, err
		}
		return generate(opts, logw)
	}
	for _, d := range dirs {
		if path, ok := findFile(d); ok {
			exprs, err := ReadExpressions(path)
			return exprs, "file " + path, err
		}
	}
	looked := dirs
	var fetchErr error
	if cache, err := os.UserCacheDir(); err == nil {
		dir := filepath.Join(cache, "tlbo-native")
		looked = append(looked, dir)
		exprs, source, err := readOrDownload(dir, opts, logw)
		if err == nil {
			return exprs, source, nil
		}
		fetchErr = err
	}
	if !opts.Synthetic {
		return nil, "", missingDataError(looked, fetchErr)
	}
	return generate(opts, logw)
}

// generate samples the grammar (the --synthetic-data fallback).
func generate(opts LoadOptions, logw io.Writer) ([]string, string, error) {
	n := opts.GenerateN
	if n <= 0 {
		n = DefaultGenerateN
	}
	fmt.Fprintf(logw, "expression data: no %s found; generating %d expressions by sampling the grammar (seed %d)\n", DataFileName, n, opts.Seed)
	return Generate(n, opts.Seed), fmt.Sprintf("generated (%d expressions, seed %d)", n, opts.Seed), nil
}

// missingDataError says where the data set was looked for and how to get it.
func missingDataError(looked []string, fetchErr error) error {
	msg := fmt.Sprintf("expression data set %s not found: looked in %s", DataFileName, strings.Join(looked, ", "))
	if fetchErr != nil {
		msg += fmt.Sprintf("; the download failed (%v)", fetchErr)
	}
	return fmt.Errorf("%s. Give the directory holding expression/%s with --data-dir or $%s "+
		"(shared/data/README.md names its origin and sha256), or pass --synthetic-data to sample expressions from the grammar instead",
		msg, DataFileName, datadir.Env)
}

// readOrDownload reads the data file from dir, downloading it into dir/expression first
// when it is missing.
func readOrDownload(dir string, opts LoadOptions, logw io.Writer) ([]string, string, error) {
	if path, ok := findFile(dir); ok {
		exprs, err := ReadExpressions(path)
		return exprs, "file " + path, err
	}
	path := filepath.Join(dir, "expression", DataFileName)
	fmt.Fprintf(logw, "expression data: %s not found in %s; downloading it\n", DataFileName, dir)
	if err := Download(path, opts.URL, opts.SHA256, opts.Timeout); err != nil {
		return nil, "", fmt.Errorf("%s not found in %s, and %w", DataFileName, dir, err)
	}
	exprs, err := ReadExpressions(path)
	return exprs, "downloaded to " + path, err
}

// findFile returns the data file in dir/expression or dir, if either exists.
func findFile(dir string) (string, bool) {
	for _, p := range []string{filepath.Join(dir, "expression", DataFileName), filepath.Join(dir, DataFileName)} {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, true
		}
	}
	return "", false
}

// ReadExpressions reads a data set file: one expression of the grammar per line, within
// MaxRules rules. Surrounding spaces are trimmed; the expressions are returned in the
// data set's spaced form. A bad line gives an error naming the file and the line.
func ReadExpressions(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("expression data: %w", err)
	}
	defer f.Close()
	var exprs []string
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			return nil, fmt.Errorf("expression data %s:%d: empty line", path, line)
		}
		rules, err := Parse(text)
		if err != nil {
			return nil, fmt.Errorf("expression data %s:%d: %w", path, line, err)
		}
		canon, err := Decode(rules)
		if err != nil {
			return nil, fmt.Errorf("expression data %s:%d: %w", path, line, err)
		}
		exprs = append(exprs, canon)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("expression data %s: %w", path, err)
	}
	if len(exprs) == 0 {
		return nil, fmt.Errorf("expression data %s: no expressions", path)
	}
	return exprs, nil
}

// Download fetches url ("" means DataURL) into path atomically, verifying its sha256
// (hex; "" means DataSHA256); timeout 0 means one minute.
func Download(path, url, sum string, timeout time.Duration) error {
	if url == "" {
		url, sum = DataURL, DataSHA256
	}
	if timeout <= 0 {
		timeout = time.Minute
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("download %s: %w", url, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("download %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("download failed: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("download %s failed: %s", url, resp.Status)
	}
	h := sha256.New()
	return numpy.AtomicWriteFile(path, func(w io.Writer) error {
		if _, err := io.Copy(io.MultiWriter(w, h), resp.Body); err != nil {
			return fmt.Errorf("download %s: %w", url, err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(got, sum) {
			return fmt.Errorf("download %s: sha256 %s, want %s", url, got, sum)
		}
		return nil
	})
}
