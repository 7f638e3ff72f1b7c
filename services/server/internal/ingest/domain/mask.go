// Package domain holds the ingester's rules, free of I/O: natural keys, the masking of
// credential-shaped values and the constructors that apply it once per record type, the
// reference grammar, the budget, the paging decision, the git log format and its parser, and
// the narrow classifier of git failures.
package domain

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Masked replaces every credential-shaped value before it can reach a message, a thread title,
// a cursor, a warning, a log line or a report. It is fixed, so a reader learns that something
// was removed and nothing about it.
const Masked = "[masked]"

// Masker applies the masking rules with the entropy rule's two thresholds, which are
// configuration (ingest.mask_min_token_length and ingest.mask_min_entropy_millibits): the rule
// trades masked words against missed keys, and an operator whose history holds other kinds of
// identifiers tunes it without a release. Build one with NewMasker; the zero Masker masks nearly every
// word (every run holding a digit or a letter a to f), which errs on the safe side.
type Masker struct {
	// minTokenLen is the shortest run of token characters the entropy rule looks at: shorter
	// runs are words and identifiers far more often than secrets.
	minTokenLen int
	// minEntropy is the Shannon entropy (bits per character) above which a long mixed run
	// counts as a secret: random base62 runs score well above CamelCase identifiers and words
	// of the same length.
	minEntropy float64
}

// NewMasker returns the Masker of the entropy rule's thresholds: runs of at least minTokenLen
// token characters, entropy of at least minEntropyMillibits thousandths of a bit per
// character. It refuses a length below one and an entropy outside what a byte can carry (zero
// to eight bits), either of which would leave the rule meaningless.
func NewMasker(minTokenLen, minEntropyMillibits int) (Masker, error) {
	if minTokenLen < 1 {
		return Masker{}, fmt.Errorf("%w: %d, want at least 1", ErrMaskerLength, minTokenLen)
	}
	if minEntropyMillibits < 0 || minEntropyMillibits > maxEntropyMillibits {
		return Masker{}, fmt.Errorf("%w: %d millibits, want 0 to %d", ErrMaskerEntropy, minEntropyMillibits, maxEntropyMillibits)
	}
	return Masker{minTokenLen: minTokenLen, minEntropy: float64(minEntropyMillibits) / millibitsPerBit}, nil
}

// The errors of NewMasker, one per threshold, so that the caller can name the key that set it.
var (
	// ErrMaskerLength: the shortest token run is below one.
	ErrMaskerLength = errors.New("the masker's shortest token run is out of range")
	// ErrMaskerEntropy: the entropy threshold is outside what a byte can carry.
	ErrMaskerEntropy = errors.New("the masker's entropy threshold is out of range")
)

// millibitsPerBit converts the configured threshold (an integer, since configuration has no
// fractional kind) to bits.
const millibitsPerBit = 1000

// maxEntropyMillibits is the entropy of a uniformly random byte, the most a character of a run
// can carry.
const maxEntropyMillibits = 8 * millibitsPerBit

var (
	// privateKeyBlock is a PEM or PGP private key block, to its end line or the end of the text
	// (a block cut off by truncation must not survive either).
	privateKeyBlock = regexp.MustCompile(`(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|\z)`)
	// urlPassword is the password of a URL's user information (scheme://user:password@host).
	urlPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*):[^/\s@]+@`)
	// tokenFamilies are tokens recognisable by their prefix: cloud access key ids, GitHub,
	// GitLab, Slack, npm, Google API keys, OpenAI-style keys, bothy's own tokens and JWTs.
	tokenFamilies = regexp.MustCompile(strings.Join([]string{
		`\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b`,
		`\bgh[pousr]_[A-Za-z0-9]{20,}`,
		`\bgithub_pat_[A-Za-z0-9_]{20,}`,
		`\bglpat-[A-Za-z0-9_-]{20,}`,
		`\bxox[abposr]-[A-Za-z0-9-]{8,}`,
		`\bnpm_[A-Za-z0-9]{30,}`,
		`\bAIza[0-9A-Za-z_-]{30,}`,
		`\bsk-[A-Za-z0-9_-]{20,}`,
		`\bbothy_[A-Za-z0-9_-]{20,}`,
		`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`,
	}, "|"))
	// bearer is an Authorization header's credential; 16 characters at least, so prose such as
	// "basic authentication" is left alone.
	bearer = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/-]{16,}=*`)
	// secretPair is a name that says "secret" followed by = or : and a value; the name stays,
	// the value goes.
	secretPair = regexp.MustCompile(`(?i)([A-Za-z0-9_.-]*(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)[A-Za-z0-9_-]*)(["']?\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|[^\s,;"'` + "`" + `\]\)}]+)`)
	// tokenRun is a run of characters tokens are made of, for the entropy rule (which decides
	// by the run's length too).
	tokenRun = regexp.MustCompile(`[A-Za-z0-9+/=_-]+`)
)

// Mask returns s with every credential-shaped value replaced by Masked: private key blocks,
// passwords in URLs, tokens of the known families, bearer credentials, the values of
// password=, secret=, token= (and similar) pairs, and long high-entropy runs (hex of 32 or more
// characters that is not a 40 or 64 character commit id, or mixed-case alphanumeric runs of
// high entropy). It errs on the side of masking: a masked word is a small loss, a leaked key is
// not. Mask(Mask(s)) == Mask(s).
func (m Masker) Mask(s string) string {
	s = privateKeyBlock.ReplaceAllLiteralString(s, Masked)
	s = urlPassword.ReplaceAllString(s, "${1}:"+Masked+"@")
	s = tokenFamilies.ReplaceAllLiteralString(s, Masked)
	s = bearer.ReplaceAllStringFunc(s, func(m string) string {
		sub := bearer.FindStringSubmatch(m)
		if strings.Contains(m, Masked) {
			return m
		}
		return sub[1] + sub[2] + Masked
	})
	s = secretPair.ReplaceAllStringFunc(s, func(m string) string {
		sub := secretPair.FindStringSubmatch(m)
		if sub[3] == Masked || strings.HasPrefix(sub[3], "[masked") {
			return m
		}
		return sub[1] + sub[2] + Masked
	})
	return tokenRun.ReplaceAllStringFunc(s, func(run string) string {
		if m.highEntropy(run) {
			return Masked
		}
		return run
	})
}

// ContainsSecret reports whether Mask would change s.
func (m Masker) ContainsSecret(s string) bool {
	return m.Mask(s) != s
}

// highEntropy decides the entropy rule for one run of token characters.
func (m Masker) highEntropy(run string) bool {
	if len(run) < m.minTokenLen {
		return false
	}
	// Commit ids are references, not secrets; every other long hex run is a key, also inside a
	// longer run (key-0123...).
	for hex := range strings.FieldsFuncSeq(run, func(r rune) bool { return (r < '0' || r > '9') && (r < 'a' || r > 'f') }) {
		if len(hex) >= m.minTokenLen && len(hex) != 40 && len(hex) != 64 {
			return true
		}
	}
	if isLowerHex(run) {
		return false
	}
	var upper, lower, digit bool
	for _, r := range run {
		switch {
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= '0' && r <= '9':
			digit = true
		}
	}
	return upper && lower && digit && entropy(run) >= m.minEntropy
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := range len(s) {
		counts[s[i]]++
	}
	var h float64
	n := float64(len(s))
	for _, c := range counts {
		if c == 0 {
			continue
		}
		p := float64(c) / n
		h -= p * math.Log2(p)
	}
	return h
}

// isLowerHex reports whether s is non-empty and only 0-9 and a-f.
func isLowerHex(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// CleanText prepares free text of a record (a body, a commit message) for a message: invalid
// UTF-8 replaced, line ends made \n, control characters other than newline and tab and
// invisible format characters (zero-width spaces, bidirectional controls) removed, so none of
// them can split a secret past Mask or hide text from a reader, and then masked.
func (m Masker) CleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
	return m.Mask(s)
}

// CleanLine is CleanText for a one-line field (a title, a name, a ref name, a label): line
// breaks and tabs become spaces, runs of spaces one, and outer space is trimmed.
func (m Masker) CleanLine(s string) string {
	s = m.CleanText(s)
	return strings.Join(strings.Fields(s), " ")
}

// Truncate returns s cut to at most maxBytes bytes on a character boundary, with suffix
// appended when it was cut (the suffix is not counted).
func Truncate(s string, maxBytes int, suffix string) string {
	if len(s) <= maxBytes {
		return s
	}
	cut := maxBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + suffix
}

// TruncateRunes returns s cut to at most n characters.
func TruncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)
	return string(runes[:n])
}
