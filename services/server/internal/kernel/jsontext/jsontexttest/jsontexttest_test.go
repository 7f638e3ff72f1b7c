package jsontexttest_test

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
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
