package pglocal

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// binaries are the absolute paths of the PostgreSQL programs pglocal runs, all from one
// directory so that their versions agree.
type binaries struct {
	initdb, pgCtl, postgres string
}

// findBinaries looks for a directory holding initdb, pg_ctl and postgres: first the entries of
// pathEnv in order, then the directories matching glob, highest version first. It returns
// ErrNotInstalled when none has all three.
func findBinaries(pathEnv, glob string) (binaries, error) {
	dirs := filepath.SplitList(pathEnv)
	versioned, _ := filepath.Glob(glob) // the pattern is constant or test-made; ErrBadPattern cannot happen
	sort.SliceStable(versioned, func(i, j int) bool {
		return versionOf(versioned[i]) > versionOf(versioned[j])
	})
	dirs = append(dirs, versioned...)
	for _, d := range dirs {
		if d == "" {
			continue
		}
		b := binaries{
			initdb:   filepath.Join(d, "initdb"),
			pgCtl:    filepath.Join(d, "pg_ctl"),
			postgres: filepath.Join(d, "postgres"),
		}
		if executable(b.initdb) && executable(b.pgCtl) && executable(b.postgres) {
			return b, nil
		}
	}
	return binaries{}, ErrNotInstalled
}

// versionOf extracts the major version from .../<version>/bin; unknown layouts sort last.
func versionOf(binDir string) int {
	v, err := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	if err != nil {
		return -1
	}
	return v
}

func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
