package external

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// newBatchDir creates the next array directory, Dir/array-NNNN, with its
// results/ and logs/.
func (s *Slurm) newBatchDir() (string, error) {
	entries, err := os.ReadDir(s.opts.Dir)
	if err != nil {
		return "", fmt.Errorf("external: %w", err)
	}
	n := 0
	for _, e := range entries {
		var k int
		if _, err := fmt.Sscanf(e.Name(), "array-%d", &k); err == nil && k >= n {
			n = k + 1
		}
	}
	for ; ; n++ {
		dir := filepath.Join(s.opts.Dir, fmt.Sprintf("array-%04d", n))
		err := os.Mkdir(dir, 0o755)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("external: %w", err)
		}
		for _, sub := range []string{"results", "logs"} {
			if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
				return "", fmt.Errorf("external: %w", err)
			}
		}
		return dir, nil
	}
}

// tokenFile, in an array's directory, holds its token (Job.Token),
// written before sbatch runs.
const tokenFile = "token"

// tagsFile, in an array's directory, holds the tag of each task's
// evaluation (ScoreTagged), one line per task ("" for none), written
// before sbatch runs.
const tagsFile = "tags"

// abandonedFile, in an array's directory, marks an array given up as never
// submitted, its objects submitted anew elsewhere: its job script evaluates
// nothing, should Slurm start it after all (an sbatch orphaned by a kill).
const abandonedFile = "abandoned"

// newToken returns a token for the array directory dir: its name and 16
// random hex digits, so that no other array, of this run or of a run
// directory removed and made again, has its job name.
func newToken(dir string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("external: token: %w", err)
	}
	return filepath.Base(dir) + "-" + hex.EncodeToString(b[:]), nil
}

// tokenJobName is the Slurm job name of the array with token.
func tokenJobName(token string) string { return "tlbo-" + token }

// abandon marks dir as never submitted (abandonedFile), saying why.
func abandon(dir, why string) error {
	return writeFileSync(filepath.Join(dir, abandonedFile), []byte(why+"\n"), 0o644)
}

// readToken returns the token of the array in dir (tokenFile); an array
// written before tokens has none (an error wrapping fs.ErrNotExist).
func readToken(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, tokenFile))
	return strings.TrimSpace(string(b)), err
}

// jobName is the Slurm job name of an array directory written before
// tokens (no token file): unique to the directory's path.
func jobName(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return "tlbo-" + filepath.Base(dir) + "-" + hex.EncodeToString(sum[:4])
}

// batchDirs returns Dir's array directories in order.
func (s *Slurm) batchDirs() ([]string, error) {
	entries, err := os.ReadDir(s.opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("external: %w", err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "array-") {
			if _, err := os.Stat(filepath.Join(s.opts.Dir, e.Name(), "manifest.jsonl")); err == nil {
				dirs = append(dirs, filepath.Join(s.opts.Dir, e.Name()))
			}
		}
	}
	return dirs, nil
}

func readJobID(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "job_id"))
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(b))
	if id == "" {
		return "", fmt.Errorf("%s: empty job_id", dir)
	}
	return id, nil
}

// readTags returns the tags of the n tasks of the array in dir, and
// whether it has none (written before tags: legacy).
func readTags(dir string, n int) ([]string, bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, tagsFile))
	if errors.Is(err, os.ErrNotExist) {
		return make([]string, n), true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("external: %w", err)
	}
	tags := strings.Split(string(b), "\n")
	if len(tags) != n+1 || tags[n] != "" {
		return nil, false, fmt.Errorf("external: %s has %d lines, want one per task (%d)", filepath.Join(dir, tagsFile), len(tags)-1, n)
	}
	return tags[:n], false, nil
}

// readManifest returns the objects of a manifest, in task order.
func readManifest(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("external: %w", err)
	}
	defer f.Close()
	var objs []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxLine)
	for sc.Scan() {
		var r request
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.ID != uint64(len(objs)) {
			return nil, fmt.Errorf("external: %s line %d is not request %d (%v)", path, len(objs)+1, len(objs), err)
		}
		objs = append(objs, r.Object)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("external: %s: %w", path, err)
	}
	return objs, nil
}

// hasEntries reports whether dir holds any file.
func hasEntries(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) > 0
}

// writeFileSync writes a file and syncs it, so that the nodes see it whole.
func writeFileSync(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return fmt.Errorf("external: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("external: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("external: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("external: %w", err)
	}
	return nil
}
