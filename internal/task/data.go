package task

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DataEnv names the data directory when no --data-dir is given.
const DataEnv = "TLBO_DATA"

// DataDirs returns the directories the data sets are looked for in, in
// order, the one locator of every task: the directory given with --data-dir
// (dir), else the one of $TLBO_DATA, and only it (given names which: a given
// directory that does not exist is an error naming it); else shared/data in
// the working directory and in each directory above it (../shared/data
// beside a checkout), given "".
func DataDirs(dir string) (dirs []string, given string, err error) {
	switch {
	case dir != "":
		given = "--data-dir"
	case os.Getenv(DataEnv) != "":
		dir, given = os.Getenv(DataEnv), "$"+DataEnv
	}
	if given != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, given, fmt.Errorf("data directory %s (%s): not a directory", dir, given)
		}
		return []string{dir}, given, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, "", fmt.Errorf("data directory: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		dirs = append(dirs, filepath.Join(d, "shared", "data"))
		if filepath.Dir(d) == d {
			return dirs, "", nil
		}
	}
}

// FindDataFile returns the first of names (paths relative to a data
// directory, in order of preference) that exists in the data directories of
// DataDirs(dir), searched in order. The error names every place looked at.
func FindDataFile(dir string, names ...string) (string, error) {
	dirs, given, err := DataDirs(dir)
	if err != nil {
		return "", err
	}
	var looked []string
	for _, d := range dirs {
		for _, n := range names {
			p := filepath.Join(d, n)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p, nil
			}
			looked = append(looked, p)
		}
	}
	where := "give the directory with --data-dir or $" + DataEnv
	if given != "" {
		where = "the data directory is given by " + given
	}
	return "", fmt.Errorf("%s not found (looked for %s; %s)", strings.Join(names, " or "), strings.Join(looked, ", "), where)
}

// FindDataDir returns the data directory of DataDirs(dir) that holds marker
// (a path relative to it): a given directory as it is, else the first
// shared/data that holds marker.
func FindDataDir(dir, marker string) (string, error) {
	dirs, given, err := DataDirs(dir)
	if err != nil {
		return "", err
	}
	if given != "" {
		return dirs[0], nil
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("no data directory: give --data-dir or $%s (a directory holding %s); none of %s holds it", DataEnv, marker,
		strings.Join(dirs, ", "))
}
