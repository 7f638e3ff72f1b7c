package domain

import (
	"bytes"
	"fmt"
)

// The control bytes of the git log format. They are written into the format string as raw
// bytes (not git's %xHH escapes) and the format is passed as one argument, never through a
// shell, so git prints them verbatim.
const (
	// RecordStart begins every commit record.
	RecordStart = '\x1e'
	// FieldSep separates the fields of a record.
	FieldSep = '\x1f'
)

// LogFormat is the --pretty=format of the metadata pass, used with -z (records separated by
// NUL, which a commit message cannot hold). The fields git computes come first and the free text
// last, so a separator byte inside a name or message can only shift text among text fields;
// the body is last and may hold separators of its own.
const LogFormat = "\x1e%H\x1f%P\x1f%aI\x1f%cI\x1f%an\x1f%ae\x1f%s\x1f%b"

// logFields is the number of fields of LogFormat.
const logFields = 8

// NameOnlyFormat is the --pretty=format of the touched-files pass (git log -z --name-only): a
// record start and the commit id; git then prints a line break and the file names, each ended
// by NUL, and one more NUL between commits.
const NameOnlyFormat = "\x1e%H"

// ParseLog reads the output of git log -z --pretty=format:LogFormat. It returns the records in
// output order and an error for each record it could not read (one that does not begin with
// RecordStart or has too few fields); such errors name the record's position, never its text.
// The fields are returned raw: NewCommit checks and masks them.
func ParseLog(out []byte) ([]RawCommit, []error) {
	var commits []RawCommit
	var errs []error
	if len(out) == 0 {
		return nil, nil
	}
	for i, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 && i > 0 {
			// A trailing NUL (some git versions end the output with one).
			continue
		}
		if len(rec) == 0 || rec[0] != RecordStart {
			errs = append(errs, fmt.Errorf("git log record %d: does not start a record", i+1))
			continue
		}
		parts := bytes.SplitN(rec[1:], []byte{FieldSep}, logFields)
		if len(parts) < logFields {
			errs = append(errs, fmt.Errorf("git log record %d: %d of %d fields", i+1, len(parts), logFields))
			continue
		}
		commits = append(commits, RawCommit{
			SHA:         string(parts[0]),
			Parents:     string(parts[1]),
			AuthoredAt:  string(parts[2]),
			CommittedAt: string(parts[3]),
			AuthorName:  string(parts[4]),
			AuthorEmail: string(parts[5]),
			Subject:     string(parts[6]),
			Body:        string(bytes.TrimRight(parts[7], "\n")),
		})
	}
	return commits, errs
}

// ParseNameOnly reads the output of git log -z --name-only --pretty=format:NameOnlyFormat into
// the files each commit touched, by commit id. The output is a sequence of NUL-ended tokens: a
// record is RecordStart, the id and, when the commit touched files, a line break and the first
// name; the names follow one per token, and an empty token ends the commit's list. A record is
// recognised only where one may begin (at the start or after an empty token), so a file name
// that imitates a record cannot start one. Records it cannot read are reported by position.
func ParseNameOnly(out []byte) (map[string][]string, []error) {
	files := map[string][]string{}
	var errs []error
	inFiles := false
	var current string
	tokens := bytes.Split(out, []byte{0})
	for i, tok := range tokens {
		if inFiles {
			if len(tok) == 0 {
				inFiles = false
				continue
			}
			files[current] = append(files[current], string(tok))
			continue
		}
		if len(tok) == 0 {
			if i == len(tokens)-1 {
				break
			}
			continue
		}
		if tok[0] != RecordStart {
			errs = append(errs, fmt.Errorf("git log --name-only token %d: does not start a record", i+1))
			continue
		}
		sha, first, hasFiles := bytes.Cut(tok[1:], []byte{'\n'})
		if !ValidSHA(string(sha)) {
			errs = append(errs, fmt.Errorf("git log --name-only token %d: not a commit id", i+1))
			continue
		}
		current = string(sha)
		if _, ok := files[current]; !ok {
			files[current] = nil
		}
		if hasFiles {
			if len(first) > 0 {
				files[current] = append(files[current], string(first))
			}
			inFiles = true
		}
	}
	return files, errs
}
