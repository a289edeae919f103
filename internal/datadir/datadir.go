// Package datadir locates the data directory that holds the data sets
// (ZINC250K, the expression grammar's set, a generated topology set): the
// one owner of where they are looked for, imported by every task and by the
// command line's --data-dir flag.
//
// The order: the directory given with --data-dir, else $TLBO_DATA, and only
// that one when either is given; else shared/data in the working directory
// and each directory above it, then shared/data in the directory of the
// running binary and each directory above it. The last finds ../shared/data
// beside a checkout (bin/tlbo-native's checkout) from any working directory.
package datadir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Env names the data directory when no --data-dir is given.
const Env = "TLBO_DATA"

// Dirs returns the directories the data sets are looked for in, in order
// (see the package doc). given says which setting named the one directory
// returned ("--data-dir" or "$TLBO_DATA"), "" when they are searched for; a
// given directory that does not exist is an error naming it and its setting.
func Dirs(dir string) (dirs []string, given string, err error) {
	switch {
	case dir != "":
		given = "--data-dir"
	case os.Getenv(Env) != "":
		dir, given = os.Getenv(Env), "$"+Env
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
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		exe = "" // no binary's directory to search: the working directory's still are
	}
	return searched(wd, exe), "", nil
}

// searched returns the shared/data directories searched from the working
// directory wd and the running binary exe ("" for none), in order.
func searched(wd, exe string) []string {
	dirs := upwards(wd, nil)
	if exe != "" {
		dirs = upwards(filepath.Dir(exe), dirs)
	}
	return dirs
}

// upwards appends shared/data of start and of each directory above it to
// dirs, leaving out those already there.
func upwards(start string, dirs []string) []string {
	seen := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		seen[d] = true
	}
	for d := filepath.Clean(start); ; d = filepath.Dir(d) {
		if p := filepath.Join(d, "shared", "data"); !seen[p] {
			seen[p] = true
			dirs = append(dirs, p)
		}
		if filepath.Dir(d) == d {
			return dirs
		}
	}
}

// FindFile returns the first of names (paths relative to a data directory,
// in order of preference) that exists in the directories of Dirs(dir),
// searched in order. The error names every place looked at.
func FindFile(dir string, names ...string) (string, error) {
	dirs, given, err := Dirs(dir)
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
	where := "give the directory with --data-dir or $" + Env
	if given != "" {
		where = "the data directory is given by " + given
	}
	return "", fmt.Errorf("%s not found (looked for %s; %s)", strings.Join(names, " or "), strings.Join(looked, ", "), where)
}

// FindDir returns the directory of Dirs(dir) that holds marker (a path
// relative to it): a given directory as it is, else the first searched one
// that holds marker.
func FindDir(dir, marker string) (string, error) {
	dirs, given, err := Dirs(dir)
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
	return "", fmt.Errorf("no data directory: give --data-dir or $%s (a directory holding %s); none of %s holds it", Env, marker,
		strings.Join(dirs, ", "))
}
