// Package ingesttest is test support for the ingester's tests: credential-shaped strings that
// are obviously fake. They are assembled from parts at run time, so no source file holds a
// literal a secret scanner would report, and each carries a marker word (FAKE, fake, example)
// a reader recognises; and Repo, a scratch git repository with a fixed history. Only tests
// import it.
package ingesttest

import "strings"

// Secret is one fake credential and the family it stands for.
type Secret struct {
	// Family names what it imitates, for failure messages.
	Family string
	// Value is the credential-shaped text.
	Value string
}

// Secrets returns one fake credential of every family the masking must catch: cloud access
// keys, GitHub, Slack and bothy tokens, a JWT, a private key block, password=, secret= and
// token= pairs, a password in a URL, a bearer credential and a long high-entropy token.
func Secrets() []Secret {
	j := strings.Join
	return []Secret{
		{"cloud access key id", j([]string{"AK", "IA", "FAKE", "FAKE", "EXAMPLE7"}, "")},
		{"github token", j([]string{"gh", "p_", strings.Repeat("Fake0", 8)}, "")},
		{"github fine-grained token", j([]string{"github", "_pat_", strings.Repeat("Fake1", 6)}, "")},
		{"slack token", j([]string{"xo", "xb-", "0000-fake-", strings.Repeat("9", 10)}, "")},
		{"bothy token", j([]string{"bo", "thy_", strings.Repeat("FakeTok2", 5)}, "")},
		{"jwt", j([]string{"ey", "JmYWtlIjoiZmFrZSJ9", ".ey", "JzdWIiOiJmYWtlIn0", ".", "ZmFrZXNpZ25hdHVyZQ"}, "")},
		{"private key block", j([]string{"-----BEGIN ", "RSA PRIVATE", " KEY-----\n", "ZmFrZSBrZXkgbWF0ZXJpYWw=\n", "-----END ", "RSA PRIVATE", " KEY-----"}, "")},
		{"password pair", j([]string{"pass", "word=", "Fake-Hunter-", "example"}, "")},
		{"secret pair", j([]string{"client_", "secret: ", "fake", "Secret", "Value3"}, "")},
		{"token pair", j([]string{"api_", "token=", "fake", "Token", "Value4"}, "")},
		{"url password", j([]string{"https://sam:", "FakeUrl", "Pass5", "@example.com/alex/bothy.git"}, "")},
		{"bearer credential", j([]string{"Authorization: Bea", "rer ", "fakeBearer", "Credential6xyz"}, "")},
		{"high-entropy token", j([]string{"Q7fake", "Zk3Lm9", "Xp2Rt8", "Vn4Bw6", "Yc1Hs5", "Jd0Gq"}, "")},
	}
}

// Needles returns the part of each secret that must never appear once masked: the value of a
// pair or a URL password rather than its harmless name.
func Needles() []string {
	return []string{
		"FAKEFAKEEXAMPLE7",
		strings.Repeat("Fake0", 8),
		strings.Repeat("Fake1", 6),
		"0000-fake-" + strings.Repeat("9", 10),
		strings.Repeat("FakeTok2", 5),
		"JzdWIiOiJmYWtlIn0",
		"ZmFrZSBrZXkgbWF0ZXJpYWw=",
		"Fake-Hunter-example",
		"fakeSecretValue3",
		"fakeTokenValue4",
		"FakeUrlPass5",
		"fakeBearerCredential6xyz",
		"Zk3Lm9Xp2Rt8",
	}
}

// All returns every secret's value joined by spaces and line breaks, for a field that should
// carry them all at once.
func All() string {
	var b strings.Builder
	for i, s := range Secrets() {
		if i > 0 {
			b.WriteString(" \n")
		}
		b.WriteString(s.Value)
	}
	return b.String()
}

// Leaks returns the needles found in s; nil when none.
func Leaks(s string) []string {
	var out []string
	for _, n := range Needles() {
		if strings.Contains(s, n) {
			out = append(out, n)
		}
	}
	return out
}
