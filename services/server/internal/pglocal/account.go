package pglocal

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// serverAccounts are tried in order when the process is root: PostgreSQL refuses to run as
// root, and Debian's postgresql package creates the first one.
var serverAccounts = []string{"postgres", "nobody"}

// account is the unprivileged system user the server runs as when bothy is root.
type account struct {
	name     string
	uid, gid uint32
}

// serverAccount returns the account to run the server as, or nil when the process is not
// root and runs the server as itself.
func serverAccount() (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	var errs []error
	for _, name := range serverAccounts {
		u, err := user.Lookup(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		uid, uerr := strconv.ParseUint(u.Uid, 10, 32)
		gid, gerr := strconv.ParseUint(u.Gid, 10, 32)
		if err := errors.Join(uerr, gerr); err != nil {
			return nil, fmt.Errorf("account %s: %w", name, err)
		}
		return &account{name: name, uid: uint32(uid), gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("running as root needs one of the system users %v to run postgresql: %w",
		serverAccounts, errors.Join(errs...))
}

// checkTraversable reports an error naming the first ancestor directory of path that the
// account (uid, gid) cannot enter, since the server could not reach its data directory.
// Supplementary groups are not considered, so the check errs on the side of failing.
func checkTraversable(path, name string, uid, gid uint32) error {
	if uid == 0 {
		return nil
	}
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("check access to %s: %w", dir, err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("check access to %s: no unix file owner", dir)
		}
		var bit os.FileMode
		switch {
		case st.Uid == uid:
			bit = 0o100
		case st.Gid == gid:
			bit = 0o010
		default:
			bit = 0o001
		}
		if fi.Mode().Perm()&bit == 0 {
			return fmt.Errorf("user %s cannot traverse %s (mode %o, owner uid %d): "+
				"run chmod o+x on it or choose a data directory elsewhere", name, dir, fi.Mode().Perm(), st.Uid)
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
}
