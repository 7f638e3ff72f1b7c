// Package conditional answers conditional GETs (RFC 9110, 13.1.2): the entity tag of a JSON
// body and the If-None-Match comparison, so that every read a client polls answers 304 the
// same way (spec 05, "Conditional reads").
package conditional

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// CacheControl is the Cache-Control of every answer that carries an ETag from Of: the answer
// is for the actor alone (private) and a client may keep it but must revalidate it with
// If-None-Match before using it again (no-cache), which a browser does by itself.
const CacheControl = "private, no-cache"

// Tag returns the strong entity tag of body: the quoted, unpadded base64url of its xxHash64,
// 13 characters such as "Xq3vR0xJ2aE". Equal tags mean equal bodies up to an accidental
// match of two 64-bit hashes (about one in 1.8e19 for a client's tag and a later body), so
// the tag changes whenever any member of the body does. The tag is compared only with the
// client's own earlier tag of its own answer and nothing is signed with it, so a
// cryptographic hash would buy nothing; xxHash64 costs a tenth of SHA-256 on this path,
// which every conditional read and every snapshot takes (DECISIONS).
func Tag(body []byte) string {
	var sum [8]byte
	binary.BigEndian.PutUint64(sum[:], xxhash.Sum64(body))
	var tag [13]byte
	tag[0], tag[12] = '"', '"'
	base64.RawURLEncoding.Encode(tag[1:12], sum[:])
	return string(tag[:])
}

// Of returns the tag of v's JSON encoding (encoding/json.Marshal), which is the body the
// generated strict-server responses send, without the final newline of json.Encoder.
func Of(v any) (string, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("conditional: encode for the entity tag: %w", err)
	}
	return Tag(body), nil
}

// NotModified reports whether a request whose If-None-Match header is ifNoneMatch (nil when
// absent) names etag, so that the answer is 304.
func NotModified(ifNoneMatch *string, etag string) bool {
	return ifNoneMatch != nil && Matches(*ifNoneMatch, etag)
}

// Matches reports whether the If-None-Match header value ifNoneMatch names etag: "*" matches
// any, otherwise one of the comma-separated entity tags must equal etag by the weak
// comparison RFC 9110 prescribes for If-None-Match (a W/ prefix is ignored). A malformed
// header matches nothing, so the client gets the full answer.
func Matches(ifNoneMatch, etag string) bool {
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
