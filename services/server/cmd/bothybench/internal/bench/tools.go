package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// webBuild is the web client's build, relative to the repository's root.
const webBuild = "services/web/dist"

// RepoRoot returns the repository's root: the nearest directory above the working directory
// with a go.work (make bench runs from the root, go test from the package's directory).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.work above the working directory: run from the repository")
		}
		dir = parent
	}
}

// NeedFile fails when path (under root) is missing, naming the make target that makes it.
func NeedFile(root, path, what, target string) error {
	if _, err := os.Stat(filepath.Join(root, path)); err != nil {
		return fmt.Errorf("%s missing (%s): run %s", what, path, target)
	}
	return nil
}

// WebBuildDir returns the web client's build the sidebar case serves (web.dir), or an error
// naming make web-build when there is none.
func WebBuildDir() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", fmt.Errorf("sidebar: %w", err)
	}
	if err := NeedFile(root, webBuild+"/index.html", "sidebar: the web client's build", "make web-build"); err != nil {
		return "", err
	}
	return filepath.Join(root, webBuild), nil
}
