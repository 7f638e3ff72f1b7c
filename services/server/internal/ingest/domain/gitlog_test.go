package domain_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"bothy.example.com/server/internal/ingest/ingesttest"

	"bothy.example.com/server/internal/ingest/domain"
)

const (
	sha1 = "0123456789abcdef0123456789abcdef01234567"
	sha2 = "89abcdef0123456789abcdef0123456789abcdef"
	sha3 = "fedcba9876543210fedcba9876543210fedcba98"
)

// logRecord renders one commit as git log -z --pretty=format:LogFormat prints it.
func logRecord(c domain.RawCommit) string {
	return strings.Join([]string{"\x1e" + c.SHA, c.Parents, c.AuthoredAt, c.CommittedAt, c.AuthorName, c.AuthorEmail, c.Subject, c.Body}, "\x1f")
}

func TestLogFormatIsRawControlBytes(t *testing.T) {
	t.Parallel()
	if strings.Contains(domain.LogFormat, "%x") || strings.Count(domain.LogFormat, "\x1f") != 7 || domain.LogFormat[0] != domain.RecordStart {
		t.Fatalf("LogFormat = %q", domain.LogFormat)
	}
	if domain.NameOnlyFormat != "\x1e%H" {
		t.Fatalf("NameOnlyFormat = %q", domain.NameOnlyFormat)
	}
}

func TestParseLog(t *testing.T) {
	t.Parallel()
	first := domain.RawCommit{SHA: sha1, AuthoredAt: "2026-01-02T03:04:05+01:00", CommittedAt: "2026-01-02T03:04:05+01:00",
		AuthorName: "Alex", AuthorEmail: "alex@example.com", Subject: "First", Body: "Body line\n\nwith \x1f a separator"}
	second := domain.RawCommit{SHA: sha2, Parents: sha1, AuthorName: "Sam", AuthorEmail: "sam@example.com", Subject: "Second"}
	out := logRecord(first) + "\n\x00" + logRecord(second)
	got, errs := domain.ParseLog([]byte(out))
	if len(errs) != 0 {
		t.Fatalf("ParseLog errors: %v", errs)
	}
	first.Body = "Body line\n\nwith \x1f a separator"
	if !reflect.DeepEqual(got, []domain.RawCommit{first, second}) {
		t.Fatalf("ParseLog =\n %+v, want\n %+v", got, []domain.RawCommit{first, second})
	}
	// A trailing NUL and empty output are fine.
	if got, errs := domain.ParseLog([]byte(logRecord(second) + "\x00")); len(got) != 1 || len(errs) != 0 {
		t.Fatalf("trailing NUL: %+v %v", got, errs)
	}
	if got, errs := domain.ParseLog(nil); got != nil || errs != nil {
		t.Fatalf("empty output: %+v %v", got, errs)
	}
	// A record without its start or with too few fields is reported by position, never by text.
	got, errs = domain.ParseLog([]byte("garbage secret\x00\x1eonly\x1ftwo\x00" + logRecord(second)))
	if len(got) != 1 || got[0].SHA != sha2 || len(errs) != 2 {
		t.Fatalf("bad records: %+v %v", got, errs)
	}
	for _, err := range errs {
		if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "only") {
			t.Fatalf("error repeats the record: %v", err)
		}
	}
}

func TestParseNameOnly(t *testing.T) {
	t.Parallel()
	// As git 2.39 prints it for: a commit without files (a merge), one with one file, one with
	// two (one named with a space), and a file named like a record.
	out := "\x1e" + sha3 + "\x00" +
		"\x1e" + sha2 + "\nm\x00\x00" +
		"\x1e" + sha1 + "\nb c\x00\x1e" + sha3 + "\nfake\x00d/e\x00"
	got, errs := domain.ParseNameOnly([]byte(out))
	if len(errs) != 0 {
		t.Fatalf("ParseNameOnly errors: %v", errs)
	}
	want := map[string][]string{sha3: nil, sha2: {"m"}, sha1: {"b c", "\x1e" + sha3 + "\nfake", "d/e"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseNameOnly =\n %q, want\n %q", got, want)
	}
	got, errs = domain.ParseNameOnly([]byte("junk\x00\x00\x1enot-a-sha\nx\x00\x00\x1e" + sha1 + "\x00"))
	if len(errs) != 2 || !reflect.DeepEqual(got, map[string][]string{sha1: nil}) {
		t.Fatalf("bad tokens: %q %v", got, errs)
	}
}

// FuzzParseLog checks that no input makes the parser panic, that every record it returns
// carries exactly the bytes between separators, and that well-formed commits round-trip. Its
// seed corpus runs with every go test.
func FuzzParseLog(f *testing.F) {
	f.Add([]byte(logRecord(domain.RawCommit{SHA: sha1, Subject: "s", Body: "b"})))
	f.Add([]byte(logRecord(domain.RawCommit{SHA: sha1}) + "\x00" + logRecord(domain.RawCommit{SHA: sha2, Parents: sha1})))
	f.Add([]byte("\x1e\x1f\x1f\x1f\x1f\x1f\x1f\x1f"))
	f.Add([]byte("\x00\x00\x1e"))
	f.Add([]byte("\x1e" + sha1 + "\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1e\x1f\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		commits, errs := domain.ParseLog(data)
		records := 0
		for i, rec := range bytes.Split(data, []byte{0}) {
			if len(rec) > 0 || i == 0 && len(data) > 0 {
				records++
			}
		}
		if len(data) > 0 && len(commits)+len(errs) != records {
			t.Fatalf("%d commits and %d errors for %d records", len(commits), len(errs), records)
		}
		for _, c := range commits {
			for _, field := range []string{c.SHA, c.Parents, c.AuthoredAt, c.CommittedAt, c.AuthorName, c.AuthorEmail, c.Subject} {
				if strings.ContainsAny(field, "\x00\x1f") {
					t.Fatalf("a field holds a separator: %q", field)
				}
			}
			if m, _, err := domain.NewCommit(c, ingesttest.Masker()); err == nil && !domain.ValidSHA(m.SHA) {
				t.Fatalf("NewCommit accepted sha %q as %q", c.SHA, m.SHA)
			}
		}
		// Round trip: commits whose fields hold no separator come back as they went in.
		if !bytes.ContainsAny(data, "\x00\x1e\x1f") && utf8.Valid(data) {
			in := domain.RawCommit{SHA: sha1, AuthorName: string(data), Subject: string(data), Body: strings.TrimRight(string(data), "\n")}
			out, errs := domain.ParseLog([]byte(logRecord(in)))
			if len(errs) != 0 || len(out) != 1 || !reflect.DeepEqual(out[0], in) {
				t.Fatalf("round trip of %q: %+v %v", data, out, errs)
			}
		}
	})
}

// FuzzParseNameOnly checks that no input makes the touched-files parser panic and that it only
// keys valid commit ids.
func FuzzParseNameOnly(f *testing.F) {
	f.Add([]byte("\x1e" + sha1 + "\na\x00b\x00\x00\x1e" + sha2 + "\x00"))
	f.Add([]byte("\x1e" + sha1 + "\n\x00"))
	f.Add([]byte("\x00\x1e\n\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		files, _ := domain.ParseNameOnly(data)
		for sha, names := range files {
			if !domain.ValidSHA(sha) {
				t.Fatalf("keyed by %q", sha)
			}
			for _, n := range names {
				if n == "" || strings.Contains(n, "\x00") {
					t.Fatalf("file name %q", n)
				}
			}
		}
	})
}
