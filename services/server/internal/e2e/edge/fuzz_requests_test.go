package edge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/kernel/correlation"
	"bothy.example.com/server/internal/kernel/problem"
)

// fuzzRequests is how many requests TestRequestFuzz sends (at least 5,000).
const fuzzRequests = 5000

// fuzzSeedEnv names the environment variable that replays a run of TestRequestFuzz: the test
// logs its seed, and BOTHY_FUZZ_SEED=<seed> sends the same requests again.
const fuzzSeedEnv = "BOTHY_FUZZ_SEED"

// TestRequestFuzz sends fuzzRequests requests generated from api/openapi.yaml to a wired
// server with real data: valid bodies, parameters and headers of every operation, randomly
// mutated (invalid text in members, member names, parameters and headers; members removed,
// nulled, retyped or added; bodies truncated or with a byte flipped; other media types). It
// fails on any 5xx, on any 2xx for a request carrying invalid text, on any error that is not
// application/problem+json, on an invalid X-Request-Id echoed back, and (through the
// validating client) on any response the document does not declare.
func TestRequestFuzz(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(fuzzSeedEnv); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", fuzzSeedEnv, s, err)
		}
	}
	t.Logf("seed %d (replay with %s=%d)", seed, fuzzSeedEnv, seed)
	rnd := rand.New(rand.NewPCG(seed, seed^0x5eed)) //nolint:gosec // G404: reproducible requests, not secrets

	w := e2etest.NewChatWorld(t, false)
	pool := map[string][]string{
		"thread_id":  {w.TicketThread.String(), w.CampaignThread.String()},
		"channel_id": {w.Tickets.String(), w.Campaigns.String()},
		"space_id":   {w.Support.String(), w.Marketing.String()},
		"principal":  {w.Sam.ID.String(), w.Robin.ID.String(), w.Alex.ID.String()},
		"message_id": {w.TicketFirstMsg.String(), w.CampaignFirstMsg.String()},
	}
	pool["participant_id"] = pool["principal"]
	pool["principal_id"] = pool["principal"]
	pool["channel_id"] = append(pool["channel_id"], pool["channel_id"]...)
	g := sampler{rnd: rnd, id: func(name string) string {
		if ids := pool[name]; len(ids) > 0 && rnd.IntN(8) > 0 {
			return ids[rnd.IntN(len(ids))]
		}
		return uuid.NewString()
	}}
	tokens := []string{w.Alex.Token, w.Alex.Token, w.Alex.Token, w.Sam.Token}
	ops := specOperations(t)

	statuses := map[int]int{}
	invalidSent := 0
	start := time.Now()
	for i := range fuzzRequests {
		o := ops[rnd.IntN(len(ops))]
		fr := fuzzRequest(t, g, o)
		req := w.Env.Client.NewRequest(fr.method, fr.path, bodyReader(fr.body))
		for k, v := range fr.header {
			req.Header[k] = v
		}
		req.Header.Set("Authorization", "Bearer "+tokens[rnd.IntN(len(tokens))])
		r := w.Env.Client.Do(req)
		statuses[r.Status]++
		if fr.invalid {
			invalidSent++
		}
		describe := func() string {
			return fmt.Sprintf("request %d (seed %d): %s %s %s\nheader %q\nbody %q\n-> %d %s", i, seed, o.id, fr.method, fr.path, fr.header, fr.body, r.Status, r.Body)
		}
		switch {
		case r.Status >= 500:
			t.Fatalf("a 5xx for bad input: %s", describe())
		case fr.invalid && r.Status < 300:
			t.Fatalf("invalid text (%s) accepted: %s", fr.why, describe())
		case r.Status >= 400 && r.Header.Get("Content-Type") != problem.ContentType:
			t.Fatalf("an error that is not %s: %s", problem.ContentType, describe())
		}
		if sent := fr.header.Get(correlation.Header); sent != "" && !correlation.Valid(sent) && r.Header.Get(correlation.Header) == sent {
			t.Fatalf("an invalid X-Request-Id echoed: %s", describe())
		}
	}
	t.Logf("%d requests in %v, %d with invalid text; statuses %v", fuzzRequests, time.Since(start).Round(time.Millisecond), invalidSent, statuses)
}

func bodyReader(body []byte) io.Reader {
	if body == nil {
		return nil
	}
	return bytes.NewReader(body)
}

// fuzzed is one generated request; invalid says it carries invalid text the server reads
// (why says where), so it must not succeed.
type fuzzed struct {
	method, path string
	header       http.Header
	body         []byte
	invalid      bool
	why          string
}

// fuzzTexts are valid strings a mutation puts in a member or parameter.
var fuzzTexts = []string{"", " ", "x", "grüße 👋", "\u2028\u202e", "\uFFFD", strings.Repeat("long ", 300), "<script>", "'; DROP TABLE x; --", "\\u0000", "null", "0"}

// fuzzContentTypes are the media types a mutation sends a body with.
var fuzzContentTypes = []string{"text/plain", "application/xml", "application/json; charset=latin1", "", "application/json;", "application/problem+json", "multipart/form-data; boundary=x"}

func fuzzRequest(t *testing.T, g sampler, o specOperation) fuzzed {
	rnd := g.rnd
	f := fuzzed{method: strings.ToUpper(o.method), header: http.Header{}}
	values := pathValues(g, o)
	query := url.Values{}
	for _, prm := range o.params {
		if prm.In == openapi3.ParameterInQuery && (prm.Required || rnd.IntN(2) == 0) {
			query.Set(prm.Name, fmt.Sprint(g.value(prm.Schema.Value, prm.Name)))
		}
		if prm.In == openapi3.ParameterInHeader && rnd.IntN(2) == 0 {
			f.header.Set(prm.Name, fmt.Sprintf("fuzz-%d", rnd.Int()))
		}
	}
	var base any
	if o.body != nil {
		base = g.value(o.schema, "")
	}
	bad := ""
	contentType := "application/json"
	for range 1 + rnd.IntN(3) {
		switch rnd.IntN(14) {
		case 0, 1, 2: // invalid text in a string member
			if base == nil {
				continue
			}
			if locs := stringMembers(o.schema, base, nil, ""); len(locs) > 0 {
				loc := locs[rnd.IntN(len(locs))]
				base = set(base, loc.segments, badPlaceholder, false)
				bad = badTexts[rnd.IntN(len(badTexts))].raw
			}
		case 3: // invalid text in a member name
			if obj, ok := base.(map[string]any); ok {
				obj[badPlaceholder] = "x"
				bad = badTexts[rnd.IntN(len(badTexts))].raw
			}
		case 4: // another valid text in a string member
			if base == nil {
				continue
			}
			if locs := stringMembers(o.schema, base, nil, ""); len(locs) > 0 {
				loc := locs[rnd.IntN(len(locs))]
				set(base, loc.segments, fuzzTexts[rnd.IntN(len(fuzzTexts))], false)
			}
		case 5: // a member removed, nulled, retyped or added
			obj, ok := base.(map[string]any)
			if !ok {
				continue
			}
			keys := slices.Sorted(mapKeys(obj))
			k := "extra"
			if len(keys) > 0 && rnd.IntN(4) > 0 {
				k = keys[rnd.IntN(len(keys))]
			}
			switch rnd.IntN(5) {
			case 0:
				delete(obj, k)
			case 1:
				obj[k] = nil
			case 2:
				obj[k] = rnd.Int64()
			case 3:
				obj[k] = []any{"x", 1.5, true}
			default:
				obj[k] = map[string]any{"nested": "x"}
			}
		case 6: // a path parameter with invalid text or another value
			names := slices.Sorted(func(yield func(string) bool) {
				for k := range values {
					if !yield(k) {
						return
					}
				}
			})
			if len(names) == 0 {
				continue
			}
			n := names[rnd.IntN(len(names))]
			if rnd.IntN(2) == 0 {
				values[n] = badParamTexts[rnd.IntN(len(badParamTexts))].raw
				f.invalid, f.why = true, "path parameter "+n
			} else if v := fuzzTexts[rnd.IntN(len(fuzzTexts))]; v != "" {
				// An empty segment is another path (the router's 404).
				values[n] = v
			}
		case 7: // a declared query parameter with invalid text or another value
			for _, prm := range o.params {
				if prm.In != openapi3.ParameterInQuery {
					continue
				}
				if rnd.IntN(2) == 0 {
					query.Set(prm.Name, badParamTexts[rnd.IntN(len(badParamTexts))].raw)
					f.invalid, f.why = true, "query parameter "+prm.Name
				} else {
					query.Set(prm.Name, fuzzTexts[rnd.IntN(len(fuzzTexts))])
				}
				break
			}
		case 8: // an undeclared query parameter, which the server does not read
			query.Set(fmt.Sprintf("q%d", rnd.IntN(3)), fuzzTexts[rnd.IntN(len(fuzzTexts))])
		case 9: // a declared header with invalid text
			for _, prm := range o.params {
				if prm.In == openapi3.ParameterInHeader {
					var raws []string
					for _, b := range badParamTexts {
						if b.header {
							raws = append(raws, b.raw)
						}
					}
					f.header.Set(prm.Name, raws[rnd.IntN(len(raws))])
					f.invalid, f.why = true, "header "+prm.Name
					break
				}
			}
		case 10: // an X-Request-Id that is not valid, which is replaced, never echoed
			f.header.Set(correlation.Header, []string{"a\xffb", "with space", strings.Repeat("x", 200), "\xc0\xaf"}[rnd.IntN(4)])
		case 11: // another media type
			contentType = fuzzContentTypes[rnd.IntN(len(fuzzContentTypes))]
		case 12, 13: // the raw body truncated or with a byte changed, after encoding
		}
	}
	f.path = requestPath(o, values)
	if len(query) > 0 {
		f.path += "?" + query.Encode()
	}
	if o.body != nil || rnd.IntN(10) == 0 {
		if base == nil {
			base = map[string]any{"x": "y"}
		}
		// Later mutations may have replaced the invalid text: the body
		// carries it when the placeholder survived them (encode replaces
		// the first; any other is valid text) and the raw mutations below
		// left it whole.
		quoted, _ := json.Marshal(badPlaceholder)
		carriesBad := bad != "" && strings.Contains(encode(t, base, ""), string(quoted))
		f.body = []byte(encode(t, base, bad))
		changed := false
		switch rnd.IntN(12) {
		case 0:
			f.body = f.body[:rnd.IntN(len(f.body)+1)]
		case 1:
			b := bytes.Clone(f.body)
			b[rnd.IntN(len(b))] = byte(rnd.UintN(256)) //nolint:gosec // G115: below 256
			f.body = b
			changed = !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0
		case 2:
			f.body = []byte{}
		}
		if contentType != "" {
			f.header.Set("Content-Type", contentType)
		}
		switch {
		case o.body == nil:
			// A body to an operation that takes none is not read.
		case carriesBad && bytes.Contains(f.body, []byte(`"`+bad+`"`)):
			f.invalid, f.why = true, "a member or member name"
		case changed:
			f.invalid, f.why = true, "a changed byte"
		}
	}
	return f
}
