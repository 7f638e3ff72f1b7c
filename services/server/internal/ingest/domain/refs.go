package domain

import (
	"regexp"
	"strconv"
	"strings"
)

// RefKind tells the forms of a reference apart.
type RefKind int

// The reference grammar of spec 08.
const (
	// RefNumber is #123: an issue or pull request of the same repository.
	RefNumber RefKind = iota + 1
	// RefRepoNumber is owner/repo#123: an issue or pull request of a named repository.
	RefRepoNumber
	// RefCommit is a commit id, full (40 or 64 characters) or abbreviated (7 or more).
	RefCommit
)

// Reference is one mention of another record in a record's text.
type Reference struct {
	// Kind is the form.
	Kind RefKind
	// Repo is the owner/name of RefRepoNumber, lower case; empty otherwise.
	Repo string
	// Number is the number of RefNumber and RefRepoNumber.
	Number int
	// SHA is the (possibly abbreviated) commit id of RefCommit, lower case.
	SHA string
}

// Full reports whether a commit reference names a full commit id.
func (r Reference) Full() bool { return r.Kind == RefCommit && ValidSHA(r.SHA) }

// Label is how a message names the reference: #12, owner/repo#12, or a commit id of at most
// 12 characters.
func (r Reference) Label() string {
	switch r.Kind {
	case RefNumber:
		return "#" + strconv.Itoa(r.Number)
	case RefRepoNumber:
		return r.Repo + "#" + strconv.Itoa(r.Number)
	}
	return TruncateRunes(r.SHA, 12)
}

var (
	// numberRef finds #123 and owner/repo#123. The character before must not continue a word,
	// a path or an HTML entity (&#123;); the number is 1 to 9 digits not followed by a word
	// character. Owners are GitHub's (letters, digits, hyphens), names GitHub's (also . and _).
	numberRef = regexp.MustCompile(`(^|[^A-Za-z0-9_&/#.-])(?:([A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}))?#([1-9][0-9]{0,8})\b`)
	// shaRef finds runs of 7 to 64 lower-case hex characters standing alone.
	shaRef = regexp.MustCompile(`(^|[^A-Za-z0-9_])([0-9a-f]{7,64})\b`)
	// mergeSubject is the subject of GitHub's merge commits.
	mergeSubject = regexp.MustCompile(`^Merge pull request #([1-9][0-9]{0,8}) from `)
)

// References returns the references in text, in order of first appearance, each once.
// Abbreviated commit ids need at least one digit and one letter, so that words such as
// "deadbeef" or numbers such as "1234567" are not taken for commits.
func References(text string) []Reference {
	type found struct {
		at  int
		ref Reference
	}
	var all []found
	for _, m := range numberRef.FindAllStringSubmatchIndex(text, -1) {
		n, err := strconv.Atoi(text[m[6]:m[7]])
		if err != nil {
			continue
		}
		ref := Reference{Kind: RefNumber, Number: n}
		if m[4] >= 0 {
			ref.Kind, ref.Repo = RefRepoNumber, strings.ToLower(text[m[4]:m[5]])
		}
		all = append(all, found{m[2], ref})
	}
	for _, m := range shaRef.FindAllStringSubmatchIndex(text, -1) {
		sha := text[m[4]:m[5]]
		full := len(sha) == 40 || len(sha) == 64
		mixed := strings.ContainsAny(sha, "0123456789") && strings.ContainsAny(sha, "abcdef")
		if !full && (len(sha) > 40 || !mixed) {
			continue
		}
		all = append(all, found{m[4], Reference{Kind: RefCommit, SHA: sha}})
	}
	// Insertion sort by position: references per record are few.
	for i := 1; i < len(all); i++ {
		for j := i; j > 0 && all[j].at < all[j-1].at; j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
	seen := map[Reference]bool{}
	var out []Reference
	for _, f := range all {
		if !seen[f.ref] {
			seen[f.ref] = true
			out = append(out, f.ref)
		}
	}
	return out
}

// MergedPullRequest returns the number of the pull request a merge commit's subject names
// ("Merge pull request #12 from ..."), or 0.
func MergedPullRequest(subject string) int {
	m := mergeSubject.FindStringSubmatch(subject)
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0
	}
	return n
}
