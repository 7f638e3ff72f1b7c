package domain_test

import (
	"strings"
	"testing"

	"bothy.example.com/server/internal/ingest/domain"
	"bothy.example.com/server/internal/ingest/ingesttest"
)

func TestMaskCatchesEveryFamily(t *testing.T) {
	t.Parallel()
	for _, s := range ingesttest.Secrets() {
		t.Run(s.Family, func(t *testing.T) {
			t.Parallel()
			for _, text := range []string{s.Value, "before " + s.Value + " after", "(" + s.Value + ")", "line one\n" + s.Value + "\nline three"} {
				got := ingesttest.Masker().Mask(text)
				if leaks := ingesttest.Leaks(got); len(leaks) > 0 {
					t.Fatalf("Mask(%q) = %q still holds %v", text, got, leaks)
				}
				if !strings.Contains(got, domain.Masked) {
					t.Fatalf("Mask(%q) = %q has no marker", text, got)
				}
				if !ingesttest.Masker().ContainsSecret(text) {
					t.Fatalf("ContainsSecret(%q) = false", text)
				}
				if again := ingesttest.Masker().Mask(got); again != got {
					t.Fatalf("Mask is not idempotent: %q then %q", got, again)
				}
			}
		})
	}
}

func TestMaskKeepsWhatIsNoSecret(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"Fix the flaky test in internal/ingest/adapters/postgres",
		"Reverts 0123456789abcdef0123456789abcdef01234567 and 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"Message 0190a5b2-4f6e-7c1a-9d0e-2f5c3b8a1e77 in thread 0190A5B2-4F6E-7C1A-9D0E-2F5C3B8A1E77",
		"See https://example.com/alex/bothy/pull/12 for details",
		"Mail alex@example.com or @sam",
		"Use basic authentication on the proxy",
		"TestIngestPassStallsAtTheFirstFailure and TestIngestBudgetStopsAfterThreeItems",
		"Bump version to 1.2.3; abc1234 was the old one",
		"",
		domain.Masked,
	} {
		if got := ingesttest.Masker().Mask(text); got != text {
			t.Errorf("Mask(%q) = %q, want it unchanged", text, got)
		}
	}
}

func TestMaskPairsKeepTheirName(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"password=" + "hunter-two-fake":                       "password=[masked]",
		"DB_PASS" + "WORD: 'fake value here'":                 "DB_PASSWORD: [masked]",
		`"client_sec` + `ret": "fake-json-value"`:             `"client_secret": [masked]`,
		"https://sam:" + "fakepw@example.com/x":               "https://sam:[masked]@example.com/x",
		"Authorization: Bearer " + "abcdefghijklmnopqrstuvwx": "Authorization: Bearer [masked]",
	}
	for in, want := range tests {
		if got := ingesttest.Masker().Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMaskLongHex(t *testing.T) {
	t.Parallel()
	for n, masked := range map[int]bool{31: false, 32: true, 39: true, 40: false, 41: true, 64: false, 80: true} {
		hex := strings.Repeat("0123456789abcdef", 6)[:n]
		if got := ingesttest.Masker().ContainsSecret("key " + hex); got != masked {
			t.Errorf("hex run of %d: ContainsSecret = %v, want %v", n, got, masked)
		}
	}
}

func TestCleanText(t *testing.T) {
	t.Parallel()
	secret := ingesttest.Secrets()[1].Value
	split := secret[:6] + "\u200b" + secret[6:]
	tests := []struct {
		name, in, want string
	}{
		{"line ends", "a\r\nb\rc", "a\nb\nc"},
		{"controls", "a\x1b[31mred\x00\x07", "a[31mred"},
		{"tabs stay", "a\tb\n", "a\tb\n"},
		{"format characters", "a\u200bb\u202ec\ufeff", "abc"},
		{"invalid utf-8", "a\xffb", "a\uFFFDb"},
		{"a secret split by a zero-width space", "x " + split, "x " + domain.Masked},
		{"a secret split by a control byte", "x " + secret[:6] + "\x01" + secret[6:], "x " + domain.Masked},
	}
	for _, tc := range tests {
		if got := ingesttest.Masker().CleanText(tc.in); got != tc.want {
			t.Errorf("%s: CleanText(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
	if got := ingesttest.Masker().CleanLine("  a\n\tb   c  "); got != "a b c" {
		t.Errorf("CleanLine = %q", got)
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	if got := domain.Truncate("abc", 3, "!"); got != "abc" {
		t.Errorf("Truncate fitting = %q", got)
	}
	// "é" is two bytes: a cut inside it rolls back to its start.
	if got := domain.Truncate("aé", 2, "!"); got != "a!" {
		t.Errorf("Truncate inside a character = %q", got)
	}
	if got := domain.Truncate("€€", 4, ""); got != "€" {
		t.Errorf("Truncate of a three-byte character = %q", got)
	}
	if got := domain.TruncateRunes("ééé", 2); got != "éé" {
		t.Errorf("TruncateRunes = %q", got)
	}
	if got := domain.TruncateRunes("ab", 2); got != "ab" {
		t.Errorf("TruncateRunes fitting = %q", got)
	}
}

// TestMaskerThresholds shows that the entropy rule's two thresholds are the masker's, not
// constants: the same runs are masked or kept as the configured length and entropy say.
func TestMaskerThresholds(t *testing.T) {
	t.Parallel()
	// A 24-character mixed run of high entropy (about 4.6 bits per character), and a
	// 40-character CamelCase identifier with digits of lower entropy (about 3.5).
	const shortKey = "q7Xk2LmP9vRt4WzB8nHc3JdF"
	const identifier = "ServerConfig2ServerConfig2ServerConfig2X"
	for _, tc := range []struct {
		name                 string
		minLen, minMillibits int
		text                 string
		masked               bool
	}{
		{"a short key below the length is kept", 32, 4200, shortKey, false},
		{"a short key at a lower length is masked", 16, 4200, shortKey, true},
		{"an identifier below the entropy is kept", 16, 4200, identifier, false},
		{"an identifier above a lower entropy is masked", 16, 2000, identifier, true},
		{"the same identifier under the length is kept", 64, 0, identifier, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := domain.NewMasker(tc.minLen, tc.minMillibits)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.ContainsSecret("see " + tc.text + " here"); got != tc.masked {
				t.Fatalf("ContainsSecret with length %d, entropy %d millibits = %v, want %v (Mask: %q)", tc.minLen, tc.minMillibits, got, tc.masked, m.Mask(tc.text))
			}
		})
	}
}

func TestNewMaskerRefusesMeaninglessThresholds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ minLen, minMillibits int }{{0, 4200}, {-1, 4200}, {32, -1}, {32, 8001}} {
		if _, err := domain.NewMasker(tc.minLen, tc.minMillibits); err == nil {
			t.Errorf("NewMasker(%d, %d) = nil error", tc.minLen, tc.minMillibits)
		}
	}
	for _, tc := range []struct{ minLen, minMillibits int }{{1, 0}, {32, 8000}} {
		if _, err := domain.NewMasker(tc.minLen, tc.minMillibits); err != nil {
			t.Errorf("NewMasker(%d, %d) = %v", tc.minLen, tc.minMillibits, err)
		}
	}
}
