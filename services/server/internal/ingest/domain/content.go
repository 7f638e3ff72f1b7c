package domain

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Limits bound what the ingester writes into one thread title and one message; wire fills
// them from chat's title rule and the keys ingest.max_body_bytes and ingest.max_listed_files.
// The functions that build titles and messages are its methods.
type Limits struct {
	// TitleRunes is the longest thread title chat accepts (chat's title rule); a title of the
	// ingester is cut to it rather than refused.
	TitleRunes int
	// BodyBytes bounds the body text of one record in its message (ingest.max_body_bytes), so
	// an ordinary long pull request fits chat.max_message_bytes with its header, file list and
	// references. A longer body is cut with TruncatedMark.
	BodyBytes int
	// Files is how many touched files a commit's message lists by name
	// (ingest.max_listed_files); the rest are counted.
	Files int
	// Mask masks what the pass writes or reports that came from the repository or its host
	// (ingest.mask_min_token_length, ingest.mask_min_entropy_millibits).
	Mask Masker
}

// TruncatedMark ends a body that was cut.
const TruncatedMark = "\n\n[truncated]"

// fullwidthAt replaces an @ that would start a mention: a GitHub login is not a bothy handle,
// so an imported "@sam" must not notify whoever is @sam here, and a history import must not
// notify anyone at all.
const fullwidthAt = "\uFF20"

// NeutralizeMentions replaces every @ that chat would read as the start of a mention (an @
// not preceded by a letter, digit, _ . - or @, and followed by a letter or digit) by a
// full-width at sign, which reads the same and mentions nobody. Email addresses keep their @.
func NeutralizeMentions(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := range len(s) {
		c := s[i]
		if c == '@' && (i == 0 || !handleByte(s[i-1])) && i+1 < len(s) && alnum(s[i+1]) {
			b.WriteString(fullwidthAt)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func handleByte(c byte) bool {
	return alnum(c) || c == '_' || c == '.' || c == '-' || c == '@'
}

// Link is a resolved reference: the record it names and where chat put it.
type Link struct {
	// Ref is the reference as written.
	Ref Reference
	// Kind is the kind of the record it names.
	Kind Kind
	// ThreadID is the record's thread.
	ThreadID uuid.UUID
	// MessageID is the record's message (a thread's first message).
	MessageID uuid.UUID
}

// String renders the link: the reference, what it names and where, as ids a client can open.
func (l Link) String() string {
	if l.Kind == KindCommit {
		return fmt.Sprintf("%s (commit, message %s in thread %s)", l.Ref.Label(), l.MessageID, l.ThreadID)
	}
	return fmt.Sprintf("%s (%s, thread %s)", l.Ref.Label(), l.Kind.Noun(), l.ThreadID)
}

// ReferencesLine is the last line of a record's message listing its resolved references; ""
// for none.
func ReferencesLine(links []Link) string {
	if len(links) == 0 {
		return ""
	}
	parts := make([]string, len(links))
	for i, l := range links {
		parts[i] = l.String()
	}
	return "References: " + strings.Join(parts, ", ")
}

// LaterReferences is the reply posted in a record's thread for its references to records
// written after it in the same pass.
func LaterReferences(source string, links []Link) string {
	return fmt.Sprintf("References of %s to records written after it: %s", source,
		strings.TrimPrefix(ReferencesLine(links), "References: "))
}

// stamp renders a time for a message; "" for the zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// body prepares a masked body for a message: mentions neutralized, cut to l.BodyBytes.
func (l Limits) body(s string) string {
	return Truncate(NeutralizeMentions(s), l.BodyBytes, TruncatedMark)
}

// title makes a thread title of a prefix and a masked one-line text, cut to l.TitleRunes.
func (l Limits) title(prefix, text string) string {
	if text == "" {
		return TruncateRunes(prefix, l.TitleRunes)
	}
	return TruncateRunes(prefix+": "+NeutralizeMentions(text), l.TitleRunes)
}

// join writes the non-empty parts separated by sep.
func join(sep string, parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, sep)
}

// PRTitle is the title of a pull request's thread.
func (l Limits) PRTitle(p PR) string { return l.title("PR #"+strconv.Itoa(p.Number), p.Title) }

// PRContent is the first message of a pull request's thread; refs is ReferencesLine's.
func (l Limits) PRContent(p PR, refs string) string {
	var meta []string
	if p.State != "" {
		meta = append(meta, "State: "+string(p.State))
	}
	if p.Author != "" {
		meta = append(meta, "author: "+NeutralizeMentions(p.Author))
	}
	if p.HeadRef != "" || p.BaseRef != "" {
		meta = append(meta, fmt.Sprintf("branch %s into %s", orUnknown(p.HeadRef), orUnknown(p.BaseRef)))
	}
	times := join(", ",
		prefixed("opened ", stamp(p.CreatedAt)), prefixed("updated ", stamp(p.UpdatedAt)),
		prefixed("merged ", stamp(p.MergedAt)), prefixed("closed ", stamp(p.ClosedAt)))
	head := join("\n",
		fmt.Sprintf("**Pull request #%d**: %s", p.Number, NeutralizeMentions(p.Title)),
		join(", ", meta...),
		capital(times),
		prefixed("Labels: ", NeutralizeMentions(strings.Join(p.Labels, ", "))),
		p.URL)
	return join("\n\n", head, l.body(p.Body), refs)
}

// IssueTitle is the title of an issue's thread.
func (l Limits) IssueTitle(i Issue) string { return l.title("Issue #"+strconv.Itoa(i.Number), i.Title) }

// IssueContent is the first message of an issue's thread; refs is ReferencesLine's.
func (l Limits) IssueContent(i Issue, refs string) string {
	var meta []string
	if i.State != "" {
		state := "State: " + string(i.State)
		if i.StateReason != "" {
			state += " (" + i.StateReason + ")"
		}
		meta = append(meta, state)
	}
	if i.Author != "" {
		meta = append(meta, "author: "+NeutralizeMentions(i.Author))
	}
	times := join(", ",
		prefixed("opened ", stamp(i.CreatedAt)), prefixed("updated ", stamp(i.UpdatedAt)),
		prefixed("closed ", stamp(i.ClosedAt)))
	head := join("\n",
		fmt.Sprintf("**Issue #%d**: %s", i.Number, NeutralizeMentions(i.Title)),
		join(", ", meta...),
		capital(times),
		prefixed("Labels: ", NeutralizeMentions(strings.Join(i.Labels, ", "))),
		i.URL)
	return join("\n\n", head, l.body(i.Body), refs)
}

// BranchTitle is the title of a branch's "commits" thread.
func (l Limits) BranchTitle(branch string) string { return l.title("Commits on "+branch, "") }

// CommitContent is a commit's message; files are the masked names of the files it touched
// (at most l.Files listed), refs is ReferencesLine's.
func (l Limits) CommitContent(c Commit, files []string, refs string) string {
	author := c.Author
	if c.Email != "" {
		author = join(" ", author, "<"+c.Email+">")
	}
	head := join("\n",
		fmt.Sprintf("**Commit %s**: %s", c.Short(), NeutralizeMentions(c.Subject)),
		join(", ", prefixed("Author: ", NeutralizeMentions(author)), stamp(c.AuthoredAt)),
		"Commit id: "+c.SHA)
	var list string
	if len(files) > 0 {
		shown := files
		if len(shown) > l.Files {
			shown = shown[:l.Files]
		}
		list = fmt.Sprintf("Files (%d): %s", len(files), NeutralizeMentions(strings.Join(shown, ", ")))
		if rest := len(files) - len(shown); rest > 0 {
			list += fmt.Sprintf(" and %d more", rest)
		}
	}
	return join("\n\n", head, l.body(c.Body), list, refs)
}

// CleanFiles masks the file names of a commit for its message.
func (m Masker) CleanFiles(raw []string) []string {
	out := make([]string, 0, len(raw))
	for _, f := range raw {
		if f = m.CleanLine(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func capital(s string) string {
	if s == "" {
		return ""
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}
