package pglocal_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/internal/pglocal"
)

// TestProgressCounter: the --verbose lines of pg_dump and pg_restore are counted as steps only
// when they are one (a table's data, an entry created, filled or run); Done never passes a
// known Total; Finish reports the whole way.
func TestProgressCounter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		step      string
		total     int
		lines     []string
		wantDone  []int // Done after each report
		wantItems []string
		wantFinal pglocal.Progress
	}{
		{
			name:  "dump counts the tables whose data it writes",
			step:  "dump",
			total: 3,
			lines: []string{
				"pg_dump: last built-in OID is 16383",
				"pg_dump: reading extensions",
				`pg_dump: dumping contents of table "instance.instance"`,
				"pg_dump: saving encoding = UTF8",
				`pg_dump: dumping contents of table "sync.event_log_default"`,
			},
			wantDone:  []int{1, 2, 3},
			wantItems: []string{"instance.instance", "sync.event_log_default", ""},
			wantFinal: pglocal.Progress{Step: "dump", Done: 3, Total: 3},
		},
		{
			name:  "restore counts the entries it creates, fills and runs, never past the total",
			step:  "restore",
			total: 4,
			lines: []string{
				"pg_restore: connecting to database for restore",
				`pg_restore: creating SCHEMA "instance"`,
				`pg_restore: creating TABLE "instance.instance"`,
				`pg_restore: processing data for table "instance.instance"`,
				`pg_restore: creating FK CONSTRAINT "chat.messages messages_thread_fkey"`,
				`pg_restore: executing SEQUENCE SET seq`,
				"pg_restore: implied data-only restore",
			},
			wantDone:  []int{1, 2, 3, 4, 4, 4},
			wantItems: []string{"instance", "instance.instance", "instance.instance", "chat.messages messages_thread_fkey", "seq", ""},
			wantFinal: pglocal.Progress{Step: "restore", Done: 4, Total: 4},
		},
		{
			name:      "an unknown total becomes the count at the end",
			step:      "dump",
			lines:     []string{`pg_dump: dumping contents of table "a.b"`, `pg_dump: dumping contents of table "a.c"`},
			wantDone:  []int{1, 2, 2},
			wantItems: []string{"a.b", "a.c", ""},
			wantFinal: pglocal.Progress{Step: "dump", Done: 2, Total: 2},
		},
		{
			name:      "a run with no step still ends complete",
			step:      "restore",
			total:     2,
			lines:     []string{"pg_restore: connecting to database for restore"},
			wantDone:  []int{2},
			wantItems: []string{""},
			wantFinal: pglocal.Progress{Step: "restore", Done: 2, Total: 2},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []pglocal.Progress
			c := pglocal.NewProgressCounter(tc.step, tc.total, func(p pglocal.Progress) { got = append(got, p) })
			for _, l := range tc.lines {
				c.Line(l)
			}
			c.Finish()
			var done []int
			var items []string
			for _, p := range got {
				done = append(done, p.Done)
				items = append(items, p.Item)
				if p.Step != tc.step {
					t.Errorf("report of step %q, want %q", p.Step, tc.step)
				}
			}
			if !slices.Equal(done, tc.wantDone) || !slices.Equal(items, tc.wantItems) {
				t.Errorf("reports done %v items %q, want %v %q", done, items, tc.wantDone, tc.wantItems)
			}
			if c.Progress() != tc.wantFinal {
				t.Errorf("final %+v, want %+v", c.Progress(), tc.wantFinal)
			}
		})
	}
	// Without a receiver, counting still works.
	c := pglocal.NewProgressCounter("dump", 0, nil)
	if !c.Line(`pg_dump: dumping contents of table "a.b"`) || c.Line("pg_dump: reading schemas") {
		t.Error("Line misjudged a step")
	}
}

// TestParseList reads pg_restore --list: the entries, the schemas, the time and the database.
func TestParseList(t *testing.T) {
	t.Parallel()
	out := strings.Join([]string{
		";",
		"; Archive created at 2026-12-01 20:40:05 UTC",
		";     dbname: bothy",
		";     TOC Entries: 5",
		";",
		"; Selected TOC Entries:",
		";",
		"5; 2615 16385 SCHEMA - instance bothy",
		"6; 2615 16386 SCHEMA - sync bothy",
		"215; 1259 16387 TABLE instance instance bothy",
		"3400; 0 16387 TABLE DATA instance instance bothy",
		"3250; 2606 16400 CONSTRAINT instance instance instance_pkey bothy",
		"",
	}, "\n")
	got := pglocal.ParseList(out)
	want := pglocal.Archive{
		Entries:   5,
		Schemas:   []string{"instance", "sync"},
		CreatedAt: time.Date(2026, 12, 1, 20, 40, 5, 0, time.UTC),
		Database:  "bothy",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseList = %+v, want %+v", got, want)
	}
	if a := pglocal.ParseList("; no header\n"); a.Entries != 0 || !a.CreatedAt.IsZero() || a.Schemas != nil {
		t.Errorf("ParseList of nothing = %+v", a)
	}
}

func TestParseCopy(t *testing.T) {
	t.Parallel()
	script := "--\n-- PostgreSQL database dump\n--\n\nSET statement_timeout = 0;\n\n" +
		"COPY example.things (id, name, sync_epoch, \"version\") FROM stdin;\n" +
		"01a252c2-1ee3-7024-8695-e7737cd78da8\tbothy\t01a252c2-1ee3-7025-99ec-f688c05873a4\t\\N\n" +
		"\\.\n\nCOPY other.t (a) FROM stdin;\nx\n\\.\n"
	for _, tc := range []struct {
		name, script string
		want         []map[string]string
	}{
		{name: "no data", script: "SET statement_timeout = 0;\n"},
		{name: "the first block", script: script, want: []map[string]string{{
			"id": "01a252c2-1ee3-7024-8695-e7737cd78da8", "name": "bothy",
			"sync_epoch": "01a252c2-1ee3-7025-99ec-f688c05873a4", "version": `\N`,
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := pglocal.ParseCopy(tc.script); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseCopy = %v, want %v", got, tc.want)
			}
		})
	}
}
