package httpmw

import "strings"

// ETagMatches reports whether the If-None-Match header value ifNoneMatch names etag, so that
// a conditional GET (getSnapshot, listChannelThreads) answers 304: "*" matches any, otherwise
// one of the comma-separated entity tags must equal etag by the weak comparison RFC 9110
// prescribes for If-None-Match (a W/ prefix is ignored). A malformed header matches nothing,
// so the client gets the full answer.
func ETagMatches(ifNoneMatch, etag string) bool {
	h := strings.TrimSpace(ifNoneMatch)
	if h == "*" {
		return true
	}
	want := strings.TrimPrefix(etag, "W/")
	if want == "" {
		return false
	}
	for {
		h = strings.TrimLeft(h, " \t,")
		if h == "" {
			return false
		}
		h = strings.TrimPrefix(h, "W/")
		if !strings.HasPrefix(h, `"`) {
			return false
		}
		end := strings.IndexByte(h[1:], '"')
		if end < 0 {
			return false
		}
		if h[:end+2] == want {
			return true
		}
		h = h[end+2:]
		if h != "" && !strings.ContainsRune(" \t,", rune(h[0])) {
			return false
		}
	}
}
