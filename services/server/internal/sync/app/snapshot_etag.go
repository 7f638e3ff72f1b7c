package app

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	syncmod "bothy.example.com/server/internal/sync"
)

// snapshotETagScheme is hashed before the view. Change it whenever the HTTP mapping of a view
// changes while the view does not (a member renamed or added in the body), so that no client
// keeps a tag that names a body it can no longer get.
const snapshotETagScheme = "bothy snapshot etag 1\n"

// SnapshotETag returns the strong entity tag of v: the quoted, unpadded base64url SHA-256 of
// the JSON encoding of every member of v but ETag (which it ignores), 45 characters such as
// "Xq3v...". The body getSnapshot writes is a function of the same members (some, such as
// Sidebar.PrincipalID, are hashed but not written, which can only change the tag more often),
// so equal tags mean byte-equal bodies: RFC 9110's strong validator. HeadSeq is one of the
// members, so the tag changes with every event the instance appends. It fails only for a
// member that does not encode (a setting's value that is not JSON).
func SnapshotETag(v syncmod.SnapshotView) (string, error) {
	v.ETag = ""
	h := sha256.New()
	h.Write([]byte(snapshotETagScheme))
	if err := json.NewEncoder(h).Encode(v); err != nil {
		return "", fmt.Errorf("snapshot etag: %w", err)
	}
	return `"` + base64.RawURLEncoding.EncodeToString(h.Sum(nil)) + `"`, nil
}

// ETagMatches reports whether the If-None-Match header value ifNoneMatch names etag, so that
// getSnapshot answers 304: "*" matches any, otherwise one of the comma-separated entity tags
// must equal etag by the weak comparison RFC 9110 prescribes for If-None-Match (a W/ prefix
// is ignored). A malformed header matches nothing, so the client gets the full snapshot.
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
