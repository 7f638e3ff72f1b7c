package jsontexttest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/jsontext/jsontexttest"
)

// every has a member of each kind Fill knows.
type every struct {
	S      string
	B      bool
	N      int64
	ID     uuid.UUID
	At     time.Time
	Raw    json.RawMessage
	P      *string
	List   []int32
	Nested struct{ Inner []string }
	hidden string
}

// TestFillReachesEveryMember: over many fills, every exported member takes a non-zero value
// at least once, pointers and lists are sometimes absent or empty too, and the unexported
// member is left alone; a kind without a rule panics naming its type.
func TestFillReachesEveryMember(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // G404: a reproducible test world, not a secret
	set := map[string]bool{}
	var nilPointer, nilList, emptyList bool
	for range 500 {
		var v every
		jsontexttest.Fill(rng, reflect.ValueOf(&v).Elem())
		if v.hidden != "" {
			t.Fatal("Fill set an unexported member")
		}
		rv := reflect.ValueOf(v)
		for i := range rv.NumField() {
			if f := rv.Type().Field(i); f.IsExported() && !rv.Field(i).IsZero() {
				set[f.Name] = true
			}
		}
		nilPointer = nilPointer || v.P == nil
		nilList = nilList || v.List == nil
		emptyList = emptyList || (v.List != nil && len(v.List) == 0)
	}
	for _, name := range []string{"S", "B", "N", "ID", "At", "Raw", "P", "List", "Nested"} {
		if !set[name] {
			t.Errorf("Fill never set %s", name)
		}
	}
	if !nilPointer || !nilList || !emptyList {
		t.Errorf("absent pointer %v, nil list %v, empty list %v: want each at least once", nilPointer, nilList, emptyList)
	}
	defer func() {
		if r := recover(); r == nil {
			t.Error("Fill of a float did not panic")
		}
	}()
	var f float64
	jsontexttest.Fill(rng, reflect.ValueOf(&f).Elem())
}

// recorder is a testing.TB that records a fatal failure instead of ending the test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper()             {}
func (r *recorder) Logf(string, ...any) {}
func (r *recorder) Fatalf(format string, a ...any) {
	r.failed = fmt.Sprintf(format, a...)
	runtime.Goexit()
}

// compare runs Compare against a recorder in its own goroutine (Fatalf ends it) and returns
// the failure, "" when it passed.
func compare(encode func([]byte, every) ([]byte, error)) string {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		jsontexttest.Compare(r, 2000, 3, encode, func(v every) any { return v })
	}()
	<-done
	return r.failed
}

// TestCompareFindsEveryDifference: over 2000 values (about one time in a hundred lies beyond
// RFC 3339, so json.Marshal fails some), an encoder that is json.Marshal passes; one that drops the
// prefix, one that writes a byte more, one that fails where json.Marshal does not and one
// that succeeds where it fails (a year beyond RFC 3339's) are each caught.
func TestCompareFindsEveryDifference(t *testing.T) {
	t.Parallel()
	marshal := func(dst []byte, v every) ([]byte, error) {
		b, err := json.Marshal(v)
		return append(dst, b...), err
	}
	for _, tc := range []struct {
		name   string
		encode func([]byte, every) ([]byte, error)
		want   string // a part of the failure; "" for a pass
	}{
		{"json.Marshal itself", marshal, ""},
		{"prefix dropped", func(_ []byte, v every) ([]byte, error) { return marshal(nil, v) }, "differs"},
		{"a byte more", func(dst []byte, v every) ([]byte, error) {
			b, err := marshal(dst, v)
			return append(b, ' '), err
		}, "differs"},
		{"fails always", func([]byte, every) ([]byte, error) { return nil, errors.New("no") }, "error no"},
		{"never fails", func(dst []byte, v every) ([]byte, error) {
			b, _ := marshal(dst, v)
			return b, nil
		}, "json.Marshal's"},
	} {
		if got := compare(tc.encode); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: failure %q, want one containing %q", tc.name, got, tc.want)
		}
	}
}
