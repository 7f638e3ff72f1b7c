package demo

import "testing"

func TestBaseURL(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"127.0.0.1:8080":       "http://127.0.0.1:8080",
		":8080":                "http://127.0.0.1:8080",
		"0.0.0.0:9090":         "http://127.0.0.1:9090",
		"[::]:8080":            "http://127.0.0.1:8080",
		"[::1]:8080":           "http://[::1]:8080",
		"chat.example.com:443": "http://chat.example.com:443",
		"no-port":              "http://no-port",
	} {
		if got := baseURL(addr); got != want {
			t.Errorf("baseURL(%q) = %q, want %q", addr, got, want)
		}
	}
}
