package main

import (
	"io"
	"testing"
	"time"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
)

func TestParseFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		wantErr bool
		check   func(bench.Options) bool
	}{
		{name: "defaults", check: func(o bench.Options) bool {
			return o.Duration == 5*time.Second && len(o.Writers) == 3 && len(o.Batches) == 2 && o.Rate == 1000 && o.Out == "" &&
				o.SyncEvents == 1_000_000 && o.SyncChannels == 1000 && o.SearchMessages == 1_000_000 && len(o.Cases) == len(caseGroups)
		}},
		{name: "lists", args: []string{"-writers", "2, 8", "-events", "5", "-out", "docs"}, check: func(o bench.Options) bool {
			return len(o.Writers) == 2 && o.Writers[1] == 8 && o.Batches[0] == 5 && o.Out == "docs"
		}},
		{name: "bad list", args: []string{"-writers", "1,x"}, wantErr: true},
		{name: "zero writers", args: []string{"-writers", "0"}, wantErr: true},
		{name: "zero duration", args: []string{"-duration", "0s"}, wantErr: true},
		{name: "stray argument", args: []string{"now"}, wantErr: true},
		{name: "cases", args: []string{"-cases", "sync, authz"}, check: func(o bench.Options) bool {
			return len(o.Cases) == 2 && o.Cases["sync"] && o.Cases["authz"] && !o.Cases["append"]
		}},
		{name: "unknown case", args: []string{"-cases", "sink"}, wantErr: true},
		{name: "small sync world", args: []string{"-sync-channels", "5"}, wantErr: true},
		{name: "fewer search messages than threads", args: []string{"-search-messages", "9999"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o, err := parseFlags(tc.args, io.Discard)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseFlags(%v) = %v, want error %v", tc.args, err, tc.wantErr)
			}
			if tc.check != nil && !tc.check(o) {
				t.Fatalf("parseFlags(%v) = %+v", tc.args, o)
			}
		})
	}
}

func TestRunUsage(t *testing.T) {
	t.Parallel()
	if code := run(t.Context(), []string{"-writers", "none"}, io.Discard, io.Discard); code != 2 {
		t.Fatalf("run with a bad flag = %d, want 2", code)
	}
	if code := run(t.Context(), []string{"-h"}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("run -h = %d, want 0", code)
	}
}

func TestParseIngestFlags(t *testing.T) {
	t.Parallel()
	o, err := parseFlags([]string{"-cases", "ingest", "-ingest-commits", "6000"}, io.Discard)
	if err != nil || !o.Cases["ingest"] || len(o.Cases) != 1 || o.IngestCommits != 6000 {
		t.Fatalf("parseFlags = %+v, %v", o, err)
	}
	if o, err := parseFlags(nil, io.Discard); err != nil || o.IngestCommits != 5000 || !o.Cases["ingest"] {
		t.Fatalf("defaults = %+v, %v; want 5,000 commits and the ingest case", o, err)
	}
	if _, err := parseFlags([]string{"-ingest-commits", "0"}, io.Discard); err == nil {
		t.Fatal("-ingest-commits 0: no error")
	}
}
