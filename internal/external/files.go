package external

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// ObjectFile writes an object that has no text form (a design) as a .npy
// file in dir and returns its path, which is then the object a program
// receives. The file is named by a digest of key (the object's identity,
// as the task's Key gives it), so that the same object always gets the
// same path, and an existing file is kept: a resumed run finds the files of
// its pending evaluations where it left them.
func ObjectFile(dir, key string, a numpy.Array) (string, error) {
	sum := sha256.Sum256([]byte(key))
	path, err := filepath.Abs(filepath.Join(dir, hex.EncodeToString(sum[:12])+".npy"))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("external: %w", err)
	}
	if err := numpy.WriteNPY(path, a); err != nil {
		return "", fmt.Errorf("external: %s: %w", path, err)
	}
	return path, nil
}
