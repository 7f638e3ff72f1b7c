package domain

import (
	"path"
	"regexp"
	"strings"
)

// RawRepository is what the git adapter reads of a clone, raw.
type RawRepository struct {
	// RemoteURL is the URL of the remote origin; empty without one.
	RemoteURL string
	// TopLevel is the absolute path of the work tree.
	TopLevel string
	// Branch is HEAD's branch name; empty when HEAD is detached.
	Branch string
	// HasCommits reports whether HEAD names a commit (a new repository has none).
	HasCommits bool
}

// Repository is a clone past its masking boundary.
type Repository struct {
	// Name is the repository's name in natural keys: owner/name (or name) in lower case.
	Name string
	// Branch is HEAD's branch, masked; "HEAD" when detached.
	Branch string
	// HasCommits reports whether there is anything to walk.
	HasCommits bool
}

// namePart is one segment of a repository name, as GitHub allows it.
var namePart = regexp.MustCompile(`^[a-z0-9._-]{1,100}$`)

// NewRepository derives the repository's name and branch. The name is the last two segments
// of the origin URL's path (owner/name, without .git), whatever the URL's form (https, ssh,
// scp-like, a path); without a usable origin, the work tree's directory name. Anything outside
// GitHub's name characters is replaced by hyphens, so no credential in the URL and no other
// text can reach a key.
func NewRepository(raw RawRepository, m Masker) Repository {
	name := nameFromURL(raw.RemoteURL, m)
	if name == "" {
		name = sanitizeSegment(path.Base(strings.ReplaceAll(strings.TrimSpace(raw.TopLevel), "\\", "/")))
	}
	if name == "" || name == "." || name == "/" {
		name = "repository"
	}
	branch := m.CleanLine(raw.Branch)
	if branch == "" {
		branch = "HEAD"
	}
	return Repository{Name: name, Branch: TruncateRunes(branch, 100), HasCommits: raw.HasCommits}
}

// nameFromURL returns owner/name of a remote URL, or "".
func nameFromURL(u string, m Masker) string {
	u = strings.TrimSpace(u)
	if u == "" {
		return ""
	}
	// Drop the scheme and the user information: what follows the last @ before the path.
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
		if slash := strings.Index(u, "/"); slash >= 0 {
			hostPart := u[:slash]
			if at := strings.LastIndex(hostPart, "@"); at >= 0 {
				hostPart = hostPart[at+1:]
			}
			u = hostPart + u[slash:]
		}
	} else if colon := strings.Index(u, ":"); colon >= 0 && !strings.Contains(u[:colon], "/") {
		// scp-like: user@host:owner/name.git
		u = u[colon+1:]
	}
	u = strings.TrimSuffix(strings.TrimRight(strings.ReplaceAll(u, "\\", "/"), "/"), ".git")
	segs := strings.Split(u, "/")
	var keep []string
	for i := max(0, len(segs)-2); i < len(segs); i++ {
		if s := sanitizeSegment(segs[i]); s != "" {
			keep = append(keep, s)
		}
	}
	if len(keep) == 0 {
		return ""
	}
	name := strings.Join(keep, "/")
	if m.ContainsSecret(name) {
		return ""
	}
	return name
}

// sanitizeSegment lower-cases s and replaces every character GitHub does not allow in a name
// by a hyphen; "" when nothing usable is left.
func sanitizeSegment(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '-'
	}, s)
	s = strings.Trim(s, "-.")
	if !namePart.MatchString(s) {
		return ""
	}
	return s
}
