package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParsePPID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		line    string
		want    int
		wantErr bool
	}{
		{name: "postgres backend", line: "4242 (postgres) S 4100 4100 4100 0 -1 4194560 512 0 0 0 7 3 0 0 20 0 1 0 100 0 0", want: 4100},
		{name: "command with spaces and parentheses", line: "77 (post (gres) x) R 12 77 77 0 -1 0 0 0 0 0 1 1", want: 12},
		{name: "no command", line: "77 postgres S 12", wantErr: true},
		{name: "cut after the state", line: "77 (postgres) S", wantErr: true},
		{name: "ppid not a number", line: "77 (postgres) S x 1 1", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := parsePPID([]byte(tc.line + "\n"))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("parsePPID(%q) = %d, want an error", tc.line, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parsePPID(%q) = %d, %v; want %d", tc.line, got, err, tc.want)
			}
		})
	}
}

func TestParseSchedstat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line    string
		want    time.Duration
		wantErr bool
	}{
		{line: "206412590 28173383 562\n", want: 206412590},
		{line: "0 0 0", want: 0},
		{line: "", wantErr: true},
		{line: "many 1 2", wantErr: true},
	} {
		got, err := parseSchedstat([]byte(tc.line))
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("parseSchedstat(%q) = %v, %v; want %v (error %v)", tc.line, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestCPUMeterCountsTheCluster reads a /proc written by the test: the postmaster (100) and
// its children (101, 102) are the cluster; a process of another parent (200), a child of a
// child (103) and an entry that is not a process are not.
func TestCPUMeterCountsTheCluster(t *testing.T) {
	t.Parallel()
	proc := t.TempDir()
	for _, p := range []struct {
		pid, ppid string
		onCPU     string
	}{
		{"100", "1", "1000"},
		{"101", "100", "20000"},
		{"102", "100", "300000"},
		{"103", "101", "4000000"},
		{"200", "1", "50000000"},
	} {
		dir := filepath.Join(proc, p.pid)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		stat := p.pid + " (postgres: bothy idle) S " + p.ppid + " 1 1 0 -1 0 0 0 0 0 1 1\n"
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "schedstat"), []byte(p.onCPU+" 5 6\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(proc, "sys"), 0o700); err != nil {
		t.Fatal(err)
	}
	m := CPUMeter{proc: proc, postmaster: 100}
	got, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	if got.postgres != 321000 {
		t.Fatalf("postgres = %d ns, want 321000 (the postmaster and its two children)", got.postgres)
	}
	if got.process <= 0 {
		t.Fatalf("process = %v, want this test's CPU so far", got.process)
	}
}

func TestCPUTallyPerAnswer(t *testing.T) {
	t.Parallel()
	var tally CPUTally
	if got := tally.PerAnswer(); got != (SideCPU{}) {
		t.Fatalf("an empty tally = %+v, want zeros", got)
	}
	tally.Add(CPUSpent{process: time.Second, postgres: 2 * time.Second}, CPUSpent{process: 1500 * time.Millisecond, postgres: 3 * time.Second}, 400)
	tally.Add(CPUSpent{process: 0, postgres: 0}, CPUSpent{process: 500 * time.Millisecond, postgres: time.Second}, 600)
	if got, want := tally.PerAnswer(), (SideCPU{ProcessMs: 1, PostgresMs: 2}); got != want {
		t.Fatalf("perAnswer = %+v, want %+v", got, want)
	}
}

func TestCPUFlags(t *testing.T) {
	t.Parallel()
	info := "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu vme hypervisor pti\n\nprocessor\t: 1\nflags\t\t: fpu pcid\n"
	if got := strings.Join(cpuFlags([]byte(info)), ","); got != "fpu,vme,hypervisor,pti" {
		t.Fatalf("cpuFlags = %q, want the first processor's", got)
	}
	if got := cpuFlags([]byte("processor\t: 0\n")); got != nil {
		t.Fatalf("cpuFlags without flags = %q, want none", got)
	}
}

func TestKernelFactsMarkdown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		facts kernelFacts
		want  string
	}{
		{name: "nothing known", facts: kernelFacts{}, want: ""},
		{
			name:  "virtual, PTI without PCID",
			facts: kernelFacts{Virtual: true, Meltdown: "Mitigation: PTI", CPUIdle: "none", SyscallNs: 1227.4},
			want:  "a virtual machine; kernel page table isolation (PTI) without PCID, so every entry to the kernel flushes the TLB; cpuidle driver none; one system call (getppid) takes 1227 ns",
		},
		{
			name:  "PTI with PCID",
			facts: kernelFacts{Meltdown: "Mitigation: PTI", PCID: true},
			want:  "kernel page table isolation (PTI) with PCID",
		},
		{
			name:  "not affected",
			facts: kernelFacts{Meltdown: "Not affected", PCID: true, SyscallNs: 80},
			want:  "one system call (getppid) takes 80 ns",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.facts.markdown(); got != tc.want {
				t.Fatalf("markdown = %q, want %q", got, tc.want)
			}
		})
	}
}
