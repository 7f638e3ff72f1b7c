package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
)

// kernelFacts are the facts of the machine beyond its core count that decide what a round
// trip costs here: every figure over HTTP or to PostgreSQL is a chain of system calls and
// wake-ups between processes. Read from /proc and /sys on Linux; empty elsewhere.
type kernelFacts struct {
	// Virtual is the CPU's hypervisor flag: a virtual machine, whose idle cores are woken
	// by the host.
	Virtual bool `json:"virtual_machine"`
	// Meltdown is the kernel's Meltdown line (/sys/devices/system/cpu/vulnerabilities).
	// "Mitigation: PTI" is kernel page table isolation: every entry to the kernel switches
	// page tables.
	Meltdown string `json:"meltdown"`
	// PCID is the CPU's pcid flag; without it each of those switches flushes the TLB.
	PCID bool `json:"pcid"`
	// CPUIdle is the cpuidle driver ("none": an idle core halts).
	CPUIdle string `json:"cpuidle_driver"`
	// SyscallNs is what one system call (getppid) takes here, the best of a few runs.
	SyscallNs float64 `json:"syscall_ns"`
}

// readKernelFacts reads the facts; a file that is missing leaves its fact empty.
func readKernelFacts() kernelFacts {
	var k kernelFacts
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		flags := cpuFlags(b)
		k.Virtual, k.PCID = slices.Contains(flags, "hypervisor"), slices.Contains(flags, "pcid")
	}
	k.Meltdown = readLine("/sys/devices/system/cpu/vulnerabilities/meltdown")
	k.CPUIdle = readLine("/sys/devices/system/cpu/cpuidle/current_driver")
	k.SyscallNs = syscallCost()
	return k
}

// cpuFlags returns the flags of the first processor of a /proc/cpuinfo.
func cpuFlags(cpuinfo []byte) []string {
	s := bufio.NewScanner(bytes.NewReader(cpuinfo))
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		name, value, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(name) == "flags" {
			return strings.Fields(value)
		}
	}
	return nil
}

// readLine returns a one-line file's text, "" when it cannot be read.
func readLine(path string) string {
	b, err := os.ReadFile(path) //nolint:gosec // G304: fixed paths of /sys.
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// syscallCost times getppid, a system call that does nothing else, in five runs of
// syscallRuns calls and returns the best run's time per call.
func syscallCost() float64 {
	const syscallRuns = 200_000
	best := time.Duration(1<<63 - 1)
	for range 5 {
		began := time.Now()
		for range syscallRuns {
			syscall.Getppid()
		}
		best = min(best, time.Since(began))
	}
	return Round1(float64(best.Nanoseconds()) / syscallRuns)
}

// markdown is the facts as the Machine line of the report goes on: nothing for a machine
// that exposes none.
func (k kernelFacts) markdown() string {
	var parts []string
	if k.Virtual {
		parts = append(parts, "a virtual machine")
	}
	if strings.Contains(k.Meltdown, "PTI") {
		if k.PCID {
			parts = append(parts, "kernel page table isolation (PTI) with PCID")
		} else {
			parts = append(parts, "kernel page table isolation (PTI) without PCID, so every entry to the kernel flushes the TLB")
		}
	}
	if k.CPUIdle != "" {
		parts = append(parts, "cpuidle driver "+k.CPUIdle)
	}
	if k.SyscallNs > 0 {
		parts = append(parts, fmt.Sprintf("one system call (getppid) takes %.0f ns", k.SyscallNs))
	}
	return strings.Join(parts, "; ")
}
